"""tformer.plots.to_jshtml gives the player image an alt text when asked (WCAG 2.1 AA)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from tformer import plots  # noqa: E402


def _animation():
    fig, ax = plt.subplots(figsize=(2, 1))
    (line,) = ax.plot([0, 1], [0, 0])
    return FuncAnimation(fig, lambda i: line.set_ydata([0, i]), frames=2)


def test_alt_text_is_set_and_escaped():
    html = plots.to_jshtml(_animation(), alt='steps "one" & two').data
    assert 'alt="steps &quot;one&quot; &amp; two"' in html
    assert html.count("alt=") == 1


def test_without_alt_the_player_is_unchanged():
    html = plots.to_jshtml(_animation()).data
    assert "alt=" not in html
