"""The induction-head lab's recipe (chapter 12): the model, its training data and training run.

A two-layer, attention-only :class:`tformer.model.GPT` (rotary positions, no LayerNorm, no MLP)
is trained on repeated random sequences ``[BOS] + r + r`` (:mod:`tformer.data.sequences`) with the
book's training loop :func:`tformer.training.train` (AdamW, cosine decay). The loss is recorded
separately on the two halves: the first copy is unpredictable, the second predictable only by
copying, so the second-half loss shows the moment the induction circuit forms.

The defaults are the settings the lab measured to form the circuit reliably in a few hundred
steps — 500 steps formed it for 9 of 10 seeds, phase change at steps 176–321
(``bench/induction_seeds.py`` sweeps the seeds):

* ``L`` drawn from 8 … 24 **for every batch** — with one fixed ``L`` the model learns a
  positional shortcut instead (chapter 12, "The fixed-length shortcut");
* rotary positions (learned positions needed several times more steps; sinusoidal absolute
  positions and LayerNorm made formation unreliable);
* token embeddings initialised at unit scale and *not* tied to the unembedding: with no
  LayerNorm nothing rescales the residual stream, and at the GPT-2 scale of 0.02 the
  content-dependent attention scores start so small that the plateau lasts much longer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from tformer.data.sequences import SequenceBatch, fixed_length_batch, half_masks, repeated_batch
from tformer.model import GPT, GPTConfig
from tformer.training import train

StepCallback = Callable[[int, float, float], None]
"""``callback(step, first_half_loss, second_half_loss)``, called after every training step."""


@dataclass(frozen=True)
class LabSettings:
    """Model and training settings of the lab (see the module docstring for why)."""

    n_vocab: int = 64
    d: int = 32
    n_layers: int = 2
    n_heads: int = 2
    n_ctx: int = 128
    min_length: int = 8
    max_length: int = 24
    batch_size: int = 64
    steps: int = 500
    lr: float = 3e-2
    weight_decay: float = 0.01
    embedding_std: float = 1.0

    def config(self) -> GPTConfig:
        """The attention-only GPT configuration (untied unembedding)."""
        return GPTConfig.attention_only(
            self.n_vocab, d=self.d, n_layers=self.n_layers, n_heads=self.n_heads,
            n_ctx=self.n_ctx, positions="rope", tie_weights=False,
        )


def make_model(settings: LabSettings = LabSettings(), seed: int = 0) -> GPT:
    """A freshly initialised lab model; the same ``seed`` gives the same weights."""
    torch.manual_seed(seed)
    model = GPT(settings.config())
    nn.init.normal_(model.token_embedding.weight, std=settings.embedding_std)
    return model


@dataclass
class LabLog:
    """Per-step losses of a lab run: ``first`` and ``second`` half (nats), and wall ``seconds``."""

    first: list[float] = field(default_factory=list)
    second: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    seconds: float = 0.0


def train_model(
    model: GPT,
    settings: LabSettings = LabSettings(),
    *,
    seed: int = 0,
    fixed_length: int | None = None,
    steps: int | None = None,
    callback: StepCallback | None = None,
    device: torch.device | str | None = None,
) -> LabLog:
    """Train ``model`` on repeated sequences and return the per-half loss history.

    ``seed`` fixes the data stream (a :class:`torch.Generator`); ``fixed_length`` trains on one
    ``L`` only (the shortcut experiment) instead of drawing ``L`` per batch. ``device`` defaults to
    the model's device — move the model to ``tformer.device()`` first to use a GPU. The model is
    left in eval mode on its device.
    """
    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.to(device)
    generator = torch.Generator().manual_seed(10_000 + seed)
    log = LabLog()
    current: list[SequenceBatch] = []

    def get_batch() -> tuple[torch.Tensor, torch.Tensor]:
        if fixed_length is None:
            batch = repeated_batch(
                settings.n_vocab, settings.batch_size, settings.min_length, settings.max_length,
                generator=generator,
            )
        else:
            batch = fixed_length_batch(
                settings.n_vocab, settings.batch_size, fixed_length, generator=generator
            )
        current[:] = [batch]
        tokens = batch.tokens.to(device)
        return tokens[:, :-1], tokens[:, 1:]

    def loss_fn(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        per_token = nn.functional.cross_entropy(
            logits.transpose(1, 2), targets, reduction="none"
        )  # (B, 2L)
        length = current[0].length
        first, second = half_masks(length)
        detached = per_token.detach()
        log.first.append(float(detached[:, first.to(device)].mean()))
        log.second.append(float(detached[:, second.to(device)].mean()))
        log.lengths.append(length)
        if callback is not None:
            callback(len(log.second) - 1, log.first[-1], log.second[-1])
        return per_token.mean()

    threads = torch.get_num_threads()
    if device.type == "cpu":  # tensors this small run fastest on one core (no thread hand-off)
        torch.set_num_threads(1)
    start = time.perf_counter()
    try:
        train(
            model, get_batch, settings.steps if steps is None else steps, lr=settings.lr,
            weight_decay=settings.weight_decay, loss_fn=loss_fn,
        )
    finally:
        torch.set_num_threads(threads)
    log.seconds = time.perf_counter() - start
    return log


def plot_half_losses(ax, log: LabLog, plateau: float, phase_step: int | None = None) -> None:
    """Draw a lab run's first- and second-half loss curves on ``ax``.

    A dashed line marks ``plateau`` (``ln(n_vocab − 1)``, the loss of a uniform guess); a vertical
    line and label mark ``phase_step`` (see :func:`tformer.interp.phase_change_step`).
    """
    from tformer.plots import PALETTE

    ax.clear()
    steps = range(len(log.first))
    ax.plot(steps, log.first, color=PALETTE["orange"], lw=1, label="first half (unpredictable)")
    ax.plot(steps, log.second, color=PALETTE["blue"], lw=1, label="second half (copyable)")
    ax.axhline(plateau, color="#777777", ls="--", lw=1,
               label=f"chance: ln {round(math.exp(plateau))} = {plateau:.2f}")
    if phase_step is not None:
        ax.axvline(phase_step, color=PALETTE["vermillion"], lw=1.5)
        ax.text(phase_step + 5, 0.75 * plateau, f"phase change\nstep {phase_step}",
                color=PALETTE["vermillion"])
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_ylim(0, plateau + 0.8)
    ax.legend(loc="center right")


class LiveLossPlot:
    """A loss figure that redraws itself every ``every`` steps while :func:`train_model` runs.

    Pass the instance as ``callback``. In a kernel the figure updates in place (an IPython
    display handle); an executed notebook keeps the last frame, so call :meth:`finish` to draw
    the final curve with its phase-change mark.
    """

    def __init__(self, plateau: float, every: int = 50, figsize=(7.5, 3.6)) -> None:
        import matplotlib.pyplot as plt
        from IPython.display import display

        self.plateau, self.every = plateau, every
        self.log = LabLog()
        self.figure, self.ax = plt.subplots(figsize=figsize)
        plt.close(self.figure)  # shown only through the display handle
        self.handle = display(self.figure, display_id=True)

    def __call__(self, step: int, first: float, second: float) -> None:
        self.log.first.append(first)
        self.log.second.append(second)
        if (step + 1) % self.every == 0:
            plot_half_losses(self.ax, self.log, self.plateau)
            self.ax.set_title(f"training… step {step + 1}")
            self.handle.update(self.figure)

    def finish(self, log: LabLog, phase_step: int | None, title: str = "") -> None:
        plot_half_losses(self.ax, log, self.plateau, phase_step)
        self.ax.set_title(title)
        self.handle.update(self.figure)


@dataclass(frozen=True)
class Assessment:
    """Did the circuit form? What :func:`assess` measures on one evaluation batch.

    ``previous``/``induction``: ``(n_layers, n_heads)`` scores; ``prev_head``/``ind_head``: the
    best-scoring head of each kind that :func:`tformer.interp.classify_heads` accepted (or None);
    losses are second-half losses (nats): ``clean``, with the previous-token head mean-ablated
    (``without_previous``), and with every head of the induction head's layer mean-ablated
    (``without_induction_layer``).
    """

    previous: torch.Tensor
    induction: torch.Tensor
    prev_head: tuple[int, int] | None
    ind_head: tuple[int, int] | None
    clean: float
    without_previous: float
    without_induction_layer: float
    chance: float

    @property
    def formed(self) -> bool:
        """Both heads found in the right order, the copy learned, and both ablations bite.

        Thresholds (in units of the chance loss ``ln(n_vocab − 1)``): clean second-half loss
        below 0.25 (the copy is mostly predicted), and each ablation raising it by more than
        0.25 (removing the head destroys a large part of what was learned).
        """
        if self.prev_head is None or self.ind_head is None:
            return False
        bite = 0.25 * self.chance
        return (
            self.prev_head[0] < self.ind_head[0]
            and self.clean < 0.25 * self.chance
            and self.without_previous - self.clean > bite
            and self.without_induction_layer - self.clean > bite
        )


@torch.no_grad()
def assess(
    model: GPT, settings: LabSettings = LabSettings(), *, length: int = 16, seed: int = 123,
    batch_size: int = 256,
) -> Assessment:
    """Score, classify and ablate the heads of a trained lab model on fixed-``length`` sequences."""
    from tformer import interp

    device = next(model.parameters()).device
    tokens = fixed_length_batch(settings.n_vocab, batch_size, length, seed=seed).tokens.to(device)
    reference = repeated_batch(
        settings.n_vocab, batch_size, settings.min_length, settings.max_length, seed=seed + 1
    ).tokens.to(device)
    previous, induction = interp.head_scores(model, tokens, length)
    kinds = interp.classify_heads(previous, induction)
    prev_head = interp.find_head(kinds, "previous-token", previous)
    ind_head = interp.find_head(kinds, "induction", induction)
    means = interp.mean_head_outputs(model, reference)
    clean = interp.half_losses(model, tokens, length).second
    without_previous = without_layer = clean
    if prev_head is not None:
        with interp.ablate(model, prev_head, "mean", means=means):
            without_previous = interp.half_losses(model, tokens, length).second
    if ind_head is not None:
        layer_heads = [(ind_head[0], head) for head in range(previous.shape[1])]
        with interp.ablate(model, layer_heads, "mean", means=means):
            without_layer = interp.half_losses(model, tokens, length).second
    return Assessment(
        previous.cpu(), induction.cpu(), prev_head, ind_head, clean, without_previous,
        without_layer, interp.chance_loss(settings.n_vocab),
    )
