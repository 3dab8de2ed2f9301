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


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 2])
def test_saturated_softmax_under_sgd_and_adam(seed: int) -> None:
    """Chapter 4, "Frozen?": unscaled at d_k = 256, Adam moves the query but never finds the
    ruled-out target key; scaled, it does. (bench/ch04_adam_saturation.py: 10 of 10 seeds.)"""
    torch.set_num_threads(1)
    scaled = steer_query(256, scale=True, optimizer="adam", seed=seed)
    unscaled = steer_query(256, scale=False, optimizer="adam", seed=seed)
    assert scaled["target_weight"] > 0.5
    assert unscaled["distance"] > 1.0 and unscaled["target_weight"] < 1e-10
