"""`tformer.plots.to_jshtml`: the player describes itself (WCAG 2.1: 1.1.1 and 4.1.2).

The frame image carries the alt text it is given (escaped) followed by "frame i of n", or a
description built from the figure's titles; the slider is labelled and announces the frame.
"""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from tformer import plots  # noqa: E402


def _player(**options) -> str:
    fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    ax.set_title("weights")
    animation = FuncAnimation(fig, lambda k: ax.set_xlabel(str(k)), frames=2)
    return plots.to_jshtml(animation, **options).data


def _frame_alt(html: str) -> str:
    tags = re.findall(r'<img[^>]*id="_anim_img[^>]*>', html)
    assert len(tags) == 1, tags
    match = re.search(r'alt="([^"]*)"', tags[0])
    assert match, tags[0]
    return match.group(1)


def test_alt_text_is_escaped_into_the_frame_image():
    alt = _frame_alt(_player(alt='Two frames, "0" & "1"'))
    assert alt == "Two frames, &quot;0&quot; &amp; &quot;1&quot;, frame 1 of 2"


def test_without_alt_the_figure_titles_describe_the_player():
    assert _frame_alt(_player()) == "Animation: weights, frame 1 of 2"


def test_the_default_description_is_the_first_frame_not_the_last():
    fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    ax.set_title("order 0")  # the frame the notebook draws before the player
    animation = FuncAnimation(fig, lambda k: ax.set_title(f"order {k}"), frames=3)
    assert _frame_alt(plots.to_jshtml(animation).data) == "Animation: order 0, frame 1 of 3"


def test_the_slider_is_labelled_and_announces_the_frame():
    html = _player(label="Step")
    slider = re.search(r'<input id="_anim_slider[^>]*>', html, re.S).group(0)
    assert 'aria-label="Step"' in slider
    assert 'aria-valuetext="frame 1 of 2"' in slider
