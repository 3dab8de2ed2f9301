"""plots.heatmap's ``masked_text``: what is written in hidden (−∞/NaN) cells."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from tformer import plots  # noqa: E402


def _texts(ax) -> list[str]:
    return [text.get_text() for text in ax.texts]


def test_hidden_scores_are_labelled_minus_infinity_by_default():
    fig, ax = plt.subplots()
    plots.heatmap([[1.0, -math.inf], [0.5, 2.0]], ax=ax, colorbar=False)
    assert _texts(ax).count("−∞") == 1
    plt.close(fig)


def test_masked_text_replaces_the_label_of_hidden_cells_only():
    fig, ax = plt.subplots()
    plots.heatmap([[1.0, math.nan], [0.25, 0.75]], ax=ax, colorbar=False, masked_text="")
    texts = _texts(ax)
    assert "−∞" not in texts
    assert sorted(texts) == sorted(["1.00", "", "0.25", "0.75"])
    plt.close(fig)
