"""The book's figure style and shared plotting helpers.

* :data:`PALETTE` — the Okabe–Ito colour-blind-safe palette; :data:`SCALED` and :data:`UNSCALED`
  name the two colours used whenever a figure compares scaled and unscaled attention.
* :func:`use_book_style` — rcParams for every figure: readable at 100 % zoom, opaque white
  background (so figures stay legible in the theme's dark mode).
* :func:`heatmap` — an attention matrix with **queries as rows and keys as columns**, optional
  value annotations on small matrices.
* :func:`to_jshtml` — turn a ``matplotlib.animation`` into a scrubbable HTML widget, the static
  stand-in for an ipywidgets slider.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.animation import Animation
from matplotlib.axes import Axes
from matplotlib.image import AxesImage
from matplotlib.text import Text

PALETTE: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
SCALED = PALETTE["blue"]
UNSCALED = PALETTE["orange"]
CYCLE = [PALETTE[name] for name in ("blue", "orange", "green", "vermillion", "sky", "purple")]
SEQUENTIAL_CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"

BOOK_STYLE: dict[str, object] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "savefig.bbox": "tight",
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=CYCLE),
    "axes.grid": False,
    "legend.frameon": False,
    "image.cmap": SEQUENTIAL_CMAP,
    "animation.embed_limit": 8.0,  # MB; pages stay under 3 MB by keeping frames few and small
}


def use_book_style() -> None:
    """Apply the book's rcParams (call once per notebook; ``import tformer`` does it for you)."""
    mpl.rcParams.update(BOOK_STYLE)
    try:  # inline backend: PNG at twice the shown resolution ("retina": shown at half size)
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        # 2x pixels keep figures sharp on high-density screens and in the PDF edition (about
        # 220 dpi on the page); the book's build serves a 1x copy to other screens (srcset).
        set_matplotlib_formats("retina")
        _record_text_size()
    except ImportError:  # pragma: no cover - only outside IPython
        pass


TEXT_SIZE_KEY = "Smallest text"  # the PNG text chunk: "<pt> pt at <dpi> dpi"


def smallest_text_pt(figure) -> float | None:
    """The font size in points of the smallest visible, non-empty text in ``figure``."""
    sizes = [
        text.get_fontsize()
        for text in figure.findobj(Text)
        if text.get_visible() and text.get_text().strip() and text.get_alpha() != 0
    ]
    return min(sizes) if sizes else None


def _record_text_size() -> None:
    """Write each inline figure's smallest font size (and the PNG's dpi) into the PNG it shows as
    a text chunk, so the book's tests can compute how large its text reads at any shown width."""
    from functools import partial

    from IPython import get_ipython
    from matplotlib.figure import Figure

    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["image/png"]
    show = formatter.lookup_by_type(Figure) if Figure in formatter.type_printers else None
    if not isinstance(show, partial) or getattr(show, "book_text_size", False):
        return

    def png_with_text_size(figure):
        size = smallest_text_pt(figure)
        if size is None:
            return show(figure)
        dpi = figure.dpi * (2 if show.func.__name__ == "retina_figure" else 1)
        metadata = {TEXT_SIZE_KEY: f"{size:g} pt at {dpi:g} dpi"}
        return show.func(figure, *show.args, **{**show.keywords, "metadata": metadata})

    png_with_text_size.book_text_size = True
    formatter.for_type(Figure, png_with_text_size)


def _as_matrix(matrix) -> np.ndarray:
    if isinstance(matrix, torch.Tensor):
        matrix = matrix.detach().cpu().numpy()
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"heatmap expects a 2-D matrix (queries, keys), got shape {matrix.shape}")
    return matrix


def heatmap(
    matrix,
    ax: Axes | None = None,
    *,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    annotate: bool | None = None,
    fmt: str = "{:.2f}",
    cmap: str = SEQUENTIAL_CMAP,
    vmin: float | None = None,
    vmax: float | None = None,
    title: str | None = None,
    xlabel: str = "key position",
    ylabel: str = "query position",
    colorbar: bool = True,
    masked_text: str = "−∞",
) -> AxesImage:
    """Draw ``matrix`` ``(queries, keys)`` as a heat-map: row ``i`` is query ``i``.

    ``annotate`` (default: on when the matrix is at most 10 × 10) writes each value in its cell,
    in black or white, whichever contrasts with the cell colour. Masked entries (``-inf``/NaN)
    are drawn in light grey and annotated with ``masked_text`` ("−∞" for scores; pass e.g. ``""``
    for weights, whose hidden entries are zero).
    """
    matrix = _as_matrix(matrix)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.6 * matrix.shape[1] + 2.2, 0.6 * matrix.shape[0] + 1.2))
    finite = np.isfinite(matrix)
    shown = np.ma.masked_where(~finite, matrix)
    colormap = mpl.colormaps[cmap].with_extremes(bad="#dddddd")
    image = ax.imshow(shown, cmap=colormap, vmin=vmin, vmax=vmax, aspect="auto")
    n_rows, n_cols = matrix.shape
    ax.set_xticks(range(n_cols), labels=col_labels if col_labels is not None else range(n_cols))
    ax.set_yticks(range(n_rows), labels=row_labels if row_labels is not None else range(n_rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = n_rows <= 10 and n_cols <= 10
    if annotate:
        norm = image.norm
        for i in range(n_rows):
            for j in range(n_cols):
                if not finite[i, j]:
                    ax.text(j, i, masked_text, ha="center", va="center", color="#555555")
                    continue
                shade = colormap(norm(matrix[i, j]))
                luminance = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2]
                ax.text(
                    j, i, fmt.format(matrix[i, j]), ha="center", va="center",
                    color="black" if luminance > 0.5 else "white", fontsize=10,
                )
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return image


def to_jshtml(
    animation: Animation,
    *,
    default_mode: str = "once",
    colours: int | None = 256,
    alt: str | None = None,
    label: str = "Frame",
):
    """Render an animation as a self-contained, scrubbable HTML player (``IPython.display.HTML``).

    The figure behind the animation is closed so the notebook does not also show a still copy.
    ``colours`` (default 256, e.g. 16 for flat charts) re-encodes every PNG frame with a palette of
    that many colours: the frames look the same and the page gets several times lighter (``None``
    keeps matplotlib's full-colour frames).

    Accessibility: the frame image's alt text is ``alt`` (what the animation shows; by default
    the figure's titles as drawn before rendering, i.e. the first frame) followed by "frame i of
    n", updated with every frame; the slider is labelled ``label`` and announces "frame i of n";
    the slider works with the arrow, Home and End keys, and every button is a labelled
    ``<button>``.
    """
    from IPython.display import HTML

    figure = animation._fig  # noqa: SLF001 - matplotlib keeps the figure only privately
    # described before rendering: afterwards the figure shows the *last* frame, and the text is
    # announced as "frame 1 of n"
    description = alt if alt is not None else _figure_description(figure)
    html = animation.to_jshtml(default_mode=default_mode)
    plt.close(figure)
    if colours is not None:
        html = _palette_frames(html, colours)
    return HTML(_describe_player(html, description, label))


def _figure_description(figure) -> str:
    """"Animation: <suptitle>; <axes titles>", from the figure as it is drawn now."""
    titles = []
    if getattr(figure, "_suptitle", None) is not None and figure._suptitle.get_text():  # noqa: SLF001
        titles.append(figure._suptitle.get_text())  # noqa: SLF001
    titles += [ax.get_title() for ax in figure.axes if ax.get_title()]
    return "Animation: " + "; ".join(titles) if titles else "Animation"


def _describe_player(html: str, alt: str, label: str) -> str:
    """Label the slider, describe the frame image and keep both in step with the frame."""
    import re
    from html import escape

    match = re.search(r'<img id="_anim_img(\w+)">', html)
    if match is None:  # pragma: no cover - a matplotlib without the known template
        return html
    uid = match.group(1)
    frames = re.search(r"var frames = new Array\((\d+)\);", html)
    count = int(frames.group(1)) if frames else 0
    first = f"frame 1 of {count}"
    html = html.replace(
        match.group(0), f'<img id="_anim_img{uid}" alt="{escape(alt)}, {first}">', 1
    )
    html = html.replace(
        f'<input id="_anim_slider{uid}" type="range"',
        f'<input id="_anim_slider{uid}" type="range" aria-label="{escape(label)}"'
        f' aria-valuetext="{first}"',
        1,
    )
    script = (
        "<script>\n(function () {\n"
        f"  var alt = {json.dumps(alt)};\n"
        f'  var img = document.getElementById("_anim_img{uid}");\n'
        f'  var slider = document.getElementById("_anim_slider{uid}");\n'
        "  setTimeout(function () {\n"
        f"    var anim = window.anim{uid};\n"
        "    if (!anim) { return; }\n"
        "    var setFrame = anim.set_frame.bind(anim);\n"
        "    anim.set_frame = function (frame) {\n"
        "      setFrame(frame);\n"
        '      var where = "frame " + (frame + 1) + " of " + anim.frames.length;\n'
        '      img.alt = alt + ", " + where;\n'
        '      slider.setAttribute("aria-valuetext", where);\n'
        "    };\n"
        "  }, 0);\n"
        "})();\n</script>\n"
    )
    return html + script


def _palette_frames(html: str, colours: int) -> str:
    """Re-encode the base64 PNG frames of a matplotlib JS player with a ``colours``-colour palette."""
    import base64
    import io
    import re

    from PIL import Image

    def quantize(match: re.Match) -> str:
        png = base64.b64decode(match.group(1).replace("\\\n", ""))
        image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colours)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

    return re.sub(r"data:image/png;base64,([A-Za-z0-9+/=\\\n]+)", quantize, html)
