"""Softmax Jacobian, entropy, cost counts, measurement helpers and saturation experiments,
each checked against an independent reference (autograd, closed forms, PyTorch's own
attention and FLOP counter)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from tformer import SelfAttention
from tformer.attention import entropy, self_attention_multiply_adds, softmax_jacobian
from tformer.bench_utils import machine_description, peak_tensor_bytes, time_call
from tformer.saturation import gradient_norms, random_attention_weights


@pytest.mark.parametrize("n_keys", [1, 2, 5, 16])
def test_softmax_jacobian_matches_autograd(n_keys: int) -> None:
    torch.manual_seed(0)
    scores = 3 * torch.randn(n_keys, dtype=torch.float64)
    expected = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores)
    jacobian = softmax_jacobian(torch.softmax(scores, dim=-1))
    torch.testing.assert_close(jacobian, expected)


def test_softmax_jacobian_batched_properties() -> None:
    torch.manual_seed(1)
    weights = torch.softmax(torch.randn(4, 3, 7, dtype=torch.float64), dim=-1)
    jacobian = softmax_jacobian(weights)
    assert jacobian.shape == (4, 3, 7, 7)
    torch.testing.assert_close(jacobian, jacobian.transpose(-2, -1))  # symmetric
    torch.testing.assert_close(jacobian.sum(-1), torch.zeros(4, 3, 7, dtype=torch.float64))
    trace = jacobian.diagonal(dim1=-2, dim2=-1).sum(-1)
    torch.testing.assert_close(trace, 1 - (weights**2).sum(-1))
    for index in [(0, 0), (3, 2)]:  # each batch entry equals autograd on that row
        scores = torch.log(weights[index])
        row = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), scores)
        torch.testing.assert_close(jacobian[index], row)


def test_softmax_jacobian_vanishes_for_one_hot() -> None:
    one_hot = torch.tensor([0.0, 1.0, 0.0])
    assert torch.count_nonzero(softmax_jacobian(one_hot)) == 0


def test_entropy_closed_forms() -> None:
    for n_keys in (1, 2, 16):
        uniform = torch.full((n_keys,), 1 / n_keys, dtype=torch.float64)
        assert entropy(uniform).item() == pytest.approx(math.log(n_keys))
    assert entropy(torch.tensor([0.0, 1.0, 0.0])).item() == 0.0  # 0 · ln 0 = 0, no NaN
    p = torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]], dtype=torch.float64)
    expected = [-sum(x * math.log(x) for x in row) for row in p.tolist()]
    torch.testing.assert_close(entropy(p), torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("function", [entropy, softmax_jacobian])
def test_probability_rows_are_validated(function) -> None:
    with pytest.raises(ValueError, match="sum to 1 over the key axis"):
        function(torch.tensor([[0.5, 0.4], [0.2, 0.2]]))
    with pytest.raises(ValueError, match="non-negative"):
        function(torch.tensor([1.5, -0.5]))
    with pytest.raises(ValueError, match="NaN"):
        function(torch.tensor([float("nan"), 1.0]))
    with pytest.raises(TypeError, match="weights"):
        function("not numbers")


@pytest.mark.parametrize(("T", "d", "d_k", "d_v"), [(7, 16, 16, 16), (5, 12, 4, 6), (33, 8, 8, 3)])
def test_multiply_adds_match_pytorch_flop_counter(T: int, d: int, d_k: int, d_v: int) -> None:
    torch.manual_seed(0)
    layer = SelfAttention(d, d_k, d_v, bias=False)
    x = torch.randn(T, d)
    with FlopCounterMode(display=False) as counter:
        layer(x)
    counts = self_attention_multiply_adds(T, d, d_k, d_v)
    assert 2 * counts["total"] == counter.get_total_flops()  # a FLOP is half a multiply-add
    assert counts["total"] == counts["projections"] + counts["scores"] + counts["mixing"]
    same = self_attention_multiply_adds(T, d)
    assert same["total"] == 3 * T * d * d + 2 * T * T * d


def test_multiply_adds_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="T must be a positive integer"):
        self_attention_multiply_adds(0, 8)
    with pytest.raises(ValueError, match="d_k must be a positive integer"):
        self_attention_multiply_adds(4, 8, 2.5)


def test_peak_tensor_bytes_closed_forms() -> None:
    def two_in_sequence() -> torch.Tensor:
        first = torch.ones(1000)  # 4,000 bytes, freed before the second allocation
        total = first.sum()
        del first
        second = torch.ones(2000, dtype=torch.float64)  # 16,000 bytes
        return second + total  # another 16,000 bytes while `second` is alive

    assert peak_tensor_bytes(lambda: torch.ones(1000)) == 4000
    assert peak_tensor_bytes(two_in_sequence) == 32000 + 4  # + the 0-d sum (4 bytes)
    assert peak_tensor_bytes(lambda: torch.ones(10, 10).t().reshape(-1)) == 800  # view + copy
    weight = torch.ones(50, 50)
    assert peak_tensor_bytes(lambda: weight.t()) == 0  # a view of existing memory is free


def test_peak_tensor_bytes_of_attention_is_quadratic() -> None:
    x = torch.randn(256, 8)
    peak = peak_tensor_bytes(lambda: F.scaled_dot_product_attention(x, x, x))
    x2 = torch.randn(512, 8)
    peak2 = peak_tensor_bytes(lambda: F.scaled_dot_product_attention(x2, x2, x2))
    assert peak >= 256 * 256 * 4  # at least one T × T float32 matrix
    assert 3.5 < peak2 / peak < 4.5  # doubling T quadruples it


def test_time_call_and_machine() -> None:
    assert time_call(torch.ones, 10, repeats=2) > 0
    with pytest.raises(ValueError, match="repeats"):
        time_call(torch.ones, 10, repeats=0)
    assert "torch" in machine_description()


def test_random_attention_weights_match_pytorch() -> None:
    n_draws, n_keys, d_k = 50, 16, 32
    weights = random_attention_weights(
        d_k, n_keys, n_draws, scale=False, generator=torch.Generator().manual_seed(3)
    )
    generator = torch.Generator().manual_seed(3)
    queries = torch.randn(n_draws, 1, d_k, generator=generator)
    keys = torch.randn(n_draws, n_keys, d_k, generator=generator)
    expected = F.scaled_dot_product_attention(
        queries, keys, torch.eye(n_keys).expand(n_draws, n_keys, n_keys), scale=1.0
    ).squeeze(-2)
    assert weights.shape == (n_draws, n_keys)
    torch.testing.assert_close(weights, expected)
    scaled = random_attention_weights(
        d_k, n_keys, n_draws, generator=torch.Generator().manual_seed(3)
    )
    torch.testing.assert_close(scaled, torch.softmax(torch.log(expected) / math.sqrt(d_k), -1))
    with pytest.raises(ValueError, match="n_keys must be a positive integer"):
        random_attention_weights(4, n_keys=0)


@pytest.mark.parametrize("scale", [True, False])
def test_gradient_norms_match_independent_autograd(scale: bool) -> None:
    n_draws, n_keys, d_k, d_v = 20, 6, 8, 5
    norms = gradient_norms(
        d_k, n_keys, n_draws, scale=scale, d_v=d_v, generator=torch.Generator().manual_seed(4)
    )
    generator = torch.Generator().manual_seed(4)
    options = {"generator": generator, "dtype": torch.float64}
    queries = torch.randn(n_draws, 1, d_k, **options).requires_grad_()
    keys = torch.randn(n_draws, n_keys, d_k, **options).requires_grad_()
    values = torch.randn(n_draws, n_keys, d_v, **options)
    upstream = torch.randn(n_draws, 1, d_v, **options)
    factor = 1 / math.sqrt(d_k) if scale else 1.0
    scores = queries @ keys.transpose(-2, -1) * factor
    scores.retain_grad()
    (torch.softmax(scores, -1) @ values * upstream).sum().backward()
    torch.testing.assert_close(norms["scores"], scores.grad.norm(dim=(-2, -1)))
    torch.testing.assert_close(norms["queries"], queries.grad.norm(dim=(-2, -1)))
    torch.testing.assert_close(norms["keys"], keys.grad.norm(dim=(-2, -1)))
    assert norms["max weight"].shape == (n_draws,)
