"""tformer.diagrams labels boxes with the tensors' real shapes; tformer.saturation.steer_query
reports the optimiser's steps correctly (SGD's first step is lr·‖∇‖, a closed form)."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from tformer import diagrams  # noqa: E402
from tformer.saturation import steer_query  # noqa: E402


def _texts(fig) -> list[str]:
    return [text.get_text() for ax in fig.axes for text in ax.texts]


def test_head_dataflow_labels_are_the_shapes() -> None:
    x = torch.zeros(5, 7)
    q, k, v = torch.zeros(3, 4), torch.zeros(6, 4), torch.zeros(6, 2)
    s = a = torch.zeros(3, 6)
    fig = diagrams.head_dataflow(x, q, k, v, s, a, torch.zeros(3, 2))
    texts = _texts(fig)
    for shape in ("5 × 7", "3 × 4", "6 × 4", "6 × 2", "3 × 6", "3 × 2"):
        assert shape in texts, shape
    plt.close(fig)


def test_head_dataflow_rejects_inconsistent_shapes() -> None:
    with pytest.raises(ValueError, match="T_k"):
        diagrams.head_dataflow(torch.zeros(3, 2), torch.zeros(3, 2), torch.zeros(3, 2),
                               torch.zeros(3, 2), torch.zeros(3, 4), torch.zeros(3, 4),
                               torch.zeros(3, 2))


def test_layer_dataflow_counts_parameters() -> None:
    fig = diagrams.layer_dataflow(8, 4, 6, 5)
    assert any("126 parameters" in text for text in _texts(fig))  # 2·8·4 + 8·6 + 2·4 + 6
    plt.close(fig)


def test_steer_query_first_sgd_step_is_lr_times_gradient() -> None:
    run = steer_query(16, scale=True, optimizer="sgd", seed=3, n_steps=2, lr=0.1)
    assert math.isclose(run["first_step"], 0.1 * run["first_gradient"], rel_tol=1e-5)


def test_steer_query_rejects_unknown_optimiser() -> None:
    with pytest.raises(ValueError, match="optimizer"):
        steer_query(4, optimizer="rmsprop")


def test_steer_queries_rows_are_separate_runs() -> None:
    """SGD acts on each entry alone: every row's first step is lr times its own gradient; and
    steer_query is steer_queries' single row, the same draws."""
    from tformer.saturation import steer_queries

    batch = steer_queries(32, n_rows=4, scale=False, optimizer="sgd", seed=5, n_steps=3, lr=0.1)
    torch.testing.assert_close(batch["first_step"], 0.1 * batch["first_gradient"], rtol=1e-5,
                               atol=0)
    single = steer_queries(32, n_rows=1, scale=False, optimizer="adam", seed=5, n_steps=20)
    one = steer_query(32, scale=False, optimizer="adam", seed=5, n_steps=20)
    assert one == {field: float(value[0]) for field, value in single.items()}


CH04_STATED = ["sgd_freezes_some", "frozen_means_small_step", "adam_moves_frozen",
               "adam_first_step", "unscaled_never", "scaled_adam_reaches", "scaled_sgd_reaches"]


@pytest.mark.parametrize("claim", CH04_STATED)
def test_saturated_softmax_claims_hold_in_every_seed_under_every_kernel(claim: str) -> None:
    """Chapter 4, "Frozen?": every claim the page states about its 100 rows, counted by
    bench/ch04_adam_saturation.py over 10 seeds under each CPU kernel configuration."""
    from tformer import seed_rates

    rate = seed_rates.rate("ch04_saturation", claim)
    assert rate.of == 10 and rate.n_kernels == 4
    assert rate.everywhere, rate
