"""tformer.profiling.MemoryTracker against byte counts computed from shapes and dtypes."""

import torch

from tformer.profiling import MemoryTracker, peak_memory


def test_counts_live_tensors_and_frees():
    with MemoryTracker() as tracker:
        a = torch.ones(1000)  # 4,000 bytes
        b = torch.zeros(500, dtype=torch.float64)  # 4,000 bytes
        assert tracker.current_bytes == 8000
        del a, b
        c = torch.ones(250)  # 1,000 bytes, after both were freed
        view = c.view(25, 10)  # a view allocates nothing
    assert tracker.peak_bytes == 8000
    assert tracker.largest_bytes == 4000
    assert tracker.current_bytes == 1000 and view.shape == (25, 10)


def test_peak_of_a_matrix_product_chain():
    x, y = torch.randn(64, 32), torch.randn(32, 64)  # created outside: not counted

    def chain(x, y):
        scores = x @ y  # (64, 64) float32: 16,384 bytes
        return scores.sum(dim=1)  # (64,): 256 bytes, while scores is alive

    result, peak, largest = peak_memory(chain, x, y)
    assert result.shape == (64,)
    assert largest == 64 * 64 * 4
    assert peak == 64 * 64 * 4 + 64 * 4
