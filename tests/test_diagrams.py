"""Diagrams are drawn from real tensors: their labels must match the shapes and strides."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from tformer.diagrams import multihead_split_merge  # noqa: E402


def test_split_merge_diagram_labels_come_from_the_tensors():
    fig = multihead_split_merge(2, 16, 256, 8)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "(2, 8, 16, 32)" in texts  # after the transpose
    assert "strides (4096, 32, 256, 1)" in texts  # transpose swaps strides, moves no data
    assert texts.count("same memory") == 3 and texts.count("new memory") == 2


def test_where_positions_enter_uses_the_real_shapes():
    from tformer.diagrams import where_positions_enter

    fig = where_positions_enter(6, 8, 2)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "X + P,  P: (6, 8)" in texts
    assert "S + bias,  bias: (2, 6, 6)" in texts
    assert any("(6, 4) per head" in t for t in texts)
