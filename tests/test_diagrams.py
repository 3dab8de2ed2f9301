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
