"""plots.to_jshtml's ``alt``: the player's frame image carries alt text (WCAG 2.1, 1.1.1)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from tformer import plots  # noqa: E402


def _player(**kwargs) -> str:
    fig, ax = plt.subplots()
    (line,) = ax.plot([0, 1], [0, 0])
    animation = FuncAnimation(fig, lambda i: line.set_ydata([0, i]), frames=2)
    return plots.to_jshtml(animation, **kwargs).data


def _frame_tag(html: str) -> str:
    tags = re.findall(r'<img[^>]*id="_anim_img[^>]*>', html)
    assert len(tags) == 1, tags
    return tags[0]


def test_alt_text_is_set_and_escaped():
    tag = _frame_tag(_player(alt='bars of "weights" & keys', colours=16))
    assert 'alt="bars of &quot;weights&quot; &amp; keys"' in tag


def test_without_alt_the_player_is_unchanged():
    assert "alt=" not in _frame_tag(_player())
