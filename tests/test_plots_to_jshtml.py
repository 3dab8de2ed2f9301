"""`tformer.plots.to_jshtml`: the animation player carries the alt text it is given."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402

from tformer import plots  # noqa: E402


def _player(**options) -> str:
    fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    animation = FuncAnimation(fig, lambda k: ax.set_title(str(k)), frames=2)
    return plots.to_jshtml(animation, **options).data


def test_alt_text_is_escaped_into_the_frame_image():
    html = _player(alt='Two frames, "0" & "1"')
    assert '<img alt="Two frames, &quot;0&quot; &amp; &quot;1&quot;" id="_anim_img' in html
    assert html.count("<img alt=") == 1


def test_without_alt_the_player_is_unchanged():
    assert "<img alt=" not in _player()
