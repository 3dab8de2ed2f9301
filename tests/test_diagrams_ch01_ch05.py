"""tformer.diagrams for chapters 1 and 5: figures from real tensors, clear errors on bad shapes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from tformer import diagrams, masks  # noqa: E402


def test_mask_pipeline_draws_the_combined_mask_and_weights():
    torch.manual_seed(0)
    scores = torch.randn(4, 4)
    padding = torch.tensor([True, True, True, False])
    shapes = {"padding": (2, 1, 1, 4), "causal": (4, 4), "combined": (2, 1, 4, 4),
              "scores": (2, 3, 4, 4)}
    fig = diagrams.mask_pipeline(scores, padding, masks.causal_mask(4), batch_shapes=shapes)
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "(2, 1, 4, 4)" in titles and "(2, 3, 4, 4)" in titles
    weights_panel = fig.axes[-1].images[0].get_array()
    expected = scores.masked_fill(~(padding[None] & masks.causal_mask(4)), float("-inf"))
    hidden = ~(padding[None] & masks.causal_mask(4))
    torch.testing.assert_close(
        torch.as_tensor(weights_panel.filled(0.0)).float()[~hidden],
        expected.softmax(-1)[~hidden],
    )
    with pytest.raises(ValueError, match=r"key_padding must have shape \(T,\)"):
        diagrams.mask_pipeline(scores, padding[:3], masks.causal_mask(4), batch_shapes=shapes)


def test_text_to_vectors_labels_the_real_shapes():
    table = torch.randn(12, 5)
    fig = diagrams.text_to_vectors(["a", "b", "a"], [3, 7, 3], table, text="aba")
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "(T, d) = (3, 5)" in titles and "(12 × 5)" in titles
    with pytest.raises(ValueError, match="ids must lie in 0..11"):
        diagrams.text_to_vectors(["a"], [12], table, text="a")
    with pytest.raises(ValueError, match="one id per token"):
        diagrams.text_to_vectors(["a", "b"], [1], table, text="ab")
