"""The induction-head lab's recipe (chapter 12): the model, its training data and training run.

A two-layer, attention-only :class:`tformer.model.GPT` (rotary positions, no LayerNorm, no MLP)
is trained on repeated random sequences ``[BOS] + r + r`` (:mod:`tformer.data.sequences`) with the
book's training loop :func:`tformer.training.train` (AdamW, cosine decay). The loss is recorded
separately on the two halves: the first copy is unpredictable, the second predictable only by
copying, so the second-half loss shows the moment the induction circuit forms.

The defaults are the settings the lab found to form the circuit in a few hundred steps for most
seeds — not for every seed: how many of 10 form it under each CPU kernel is measured by
``bench/induction_seeds.py`` and committed in ``tformer/data/bench/ch12_induction.json``
(read it with :func:`tformer.seed_rates.rate`), which is why the chapter trains seeds in order
and shows the first whose circuit forms (:attr:`Assessment.formed`):

* ``L`` drawn from 8 … 24 **for every batch** — with one fixed ``L`` the model learns a
  positional shortcut instead (chapter 12, "The fixed-length shortcut");
* rotary positions (learned positions needed several times more steps; sinusoidal absolute
  positions and LayerNorm made formation unreliable);
* token embeddings initialised at unit scale and *not* tied to the unembedding: with no
  LayerNorm nothing rescales the residual stream, and at the GPT-2 scale of 0.02 the
  content-dependent attention scores start so small that the plateau lasts much longer;
* training segments drawn *with* replacement (``distinct=False``): with distinct tokens the
  circuit formed later and for fewer seeds while the lab was tuned (one CPU kernel,
  ``bench/README.md``). Evaluation uses
  distinct segments, where every copy target is unique (:func:`assess`, chapter 12).
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
    distinct: bool = False  # training segments drawn with replacement (see the module docstring)

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
                generator=generator, distinct=settings.distinct,
            )
        else:
            batch = fixed_length_batch(
                settings.n_vocab, settings.batch_size, fixed_length, generator=generator,
                distinct=settings.distinct,
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


@dataclass
class CircuitHistory:
    """Head scores and the ICL score recorded during training by :class:`CircuitTracker`.

    ``steps`` ``(n,)``; ``previous``/``induction`` ``(n, n_layers, n_heads)``; ``icl`` ``(n,)``
    (nats, see :func:`tformer.interp.icl_score`).
    """

    steps: torch.Tensor
    previous: torch.Tensor
    induction: torch.Tensor
    icl: torch.Tensor

    def first_step_above(self, scores: torch.Tensor, threshold: float = 0.5) -> int | None:
        """The first recorded step at which ``scores`` ``(n,)`` exceeds ``threshold``, or None."""
        above = torch.nonzero(scores > threshold)
        return int(self.steps[above[0]]) if above.numel() else None


class CircuitTracker:
    """A training callback that scores every head every ``every`` steps (the circuit forming).

    Pass it as ``callback`` to :func:`train_model` (``then`` is another callback to chain, e.g. a
    :class:`LiveLossPlot`). On a fixed batch of ``batch_size`` sequences with ``L = length`` it
    records every head's previous-token and induction scores and the ICL score, the loss at
    token ``late`` minus the loss at token ``early`` (defaults 30 and 3 of the ``T = 33``
    positions at ``L = 16``: the 10 : 1 ratio of Olsson et al.'s 500th and 50th tokens).
    It costs one small forward pass per record; :meth:`history` returns a :class:`CircuitHistory`.
    """

    def __init__(
        self, model: GPT, settings: LabSettings = LabSettings(), *, every: int = 10,
        length: int = 16, batch_size: int = 64, seed: int = 321, late: int = 30, early: int = 3,
        then: StepCallback | None = None,
    ) -> None:
        self.model, self.every, self.length, self.then = model, every, length, then
        self.late, self.early = late, early
        self.tokens = fixed_length_batch(settings.n_vocab, batch_size, length, seed=seed).tokens
        self.steps: list[int] = []
        self.previous: list[torch.Tensor] = []
        self.induction: list[torch.Tensor] = []
        self.icl: list[float] = []

    def __call__(self, step: int, first: float, second: float) -> None:
        if self.then is not None:
            self.then(step, first, second)
        if step % self.every:
            return
        from tformer import interp

        tokens = self.tokens.to(next(self.model.parameters()).device)
        previous, induction = interp.head_scores(self.model, tokens, self.length)
        losses = interp.token_losses(self.model, tokens)
        self.steps.append(step)
        self.previous.append(previous.cpu())
        self.induction.append(induction.cpu())
        self.icl.append(interp.icl_score(losses.cpu(), self.late, self.early))

    def history(self) -> CircuitHistory:
        return CircuitHistory(
            torch.tensor(self.steps), torch.stack(self.previous), torch.stack(self.induction),
            torch.tensor(self.icl),
        )


def plot_circuit_formation(
    axes, log: LabLog, history: CircuitHistory, plateau: float, phase_step: int | None = None
) -> None:
    """Loss curves, every head's two scores and the ICL score on three stacked ``axes``.

    ``axes[0]``: :func:`plot_half_losses`; ``axes[1]``: previous-token (solid) and induction
    (dashed) score of every head, one colour per head; ``axes[2]``: the ICL score. The
    phase-change step is marked on all three.
    """
    from tformer.plots import PALETTE

    plot_half_losses(axes[0], log, plateau, phase_step)
    axes[0].set_xlabel("")
    colours = [PALETTE[name] for name in ("orange", "sky", "green", "vermillion", "blue", "purple")]
    steps = history.steps.numpy()
    n_layers, n_heads = history.previous.shape[1:]
    for layer in range(n_layers):
        for head in range(n_heads):
            colour = colours[(layer * n_heads + head) % len(colours)]
            axes[1].plot(steps, history.previous[:, layer, head], color=colour, lw=1.4,
                         label=f"L{layer} H{head}")
            axes[1].plot(steps, history.induction[:, layer, head], color=colour, lw=1.4, ls="--")
    axes[1].set_ylim(0, 1.02)
    axes[1].set_ylabel("head score")
    axes[1].legend(loc="center right", ncols=2, fontsize=8,
                   title="solid: previous-token\ndashed: induction", title_fontsize=8)
    axes[2].plot(steps, history.icl, color=PALETTE["blue"], lw=1.4)
    axes[2].axhline(0, color="#777777", lw=0.8)
    axes[2].set_ylabel("ICL score (nats)")
    axes[2].set_xlabel("training step")
    for ax in axes[1:]:
        if phase_step is not None:
            ax.axvline(phase_step, color=PALETTE["vermillion"], lw=1.5)
        ax.set_xlim(axes[0].get_xlim())


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
    losses are second-half losses (nats) on sequences with distinct segment tokens: ``clean``,
    with the previous-token head mean-ablated (``without_previous``), and with every head of the
    induction head's layer mean-ablated (``without_induction_layer``); ``patched`` holds the
    keys-, queries- and values-only patches.
    """

    previous: torch.Tensor
    induction: torch.Tensor
    prev_head: tuple[int, int] | None
    ind_head: tuple[int, int] | None
    clean: float
    without_previous: float
    without_induction_layer: float
    chance: float
    patched: dict[str, tuple[float, float]] = field(default_factory=dict)
    """``{"keys" | "queries" | "values": (second-half loss, induction score of ind_head)}`` with
    the previous-token head mean-ablated in that input of layer 1 only
    (:func:`tformer.interp.composition_patch`)."""

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
    """Score, classify, ablate and patch the heads of a trained lab model on fixed-``length``
    sequences with distinct segment tokens (every copy target unique)."""
    from tformer import interp

    device = next(model.parameters()).device
    tokens = fixed_length_batch(settings.n_vocab, batch_size, length, seed=seed).tokens.to(device)
    reference = repeated_batch(
        settings.n_vocab, batch_size, settings.min_length, settings.max_length, seed=seed + 1,
        distinct=settings.distinct,
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
    patched = {}
    if prev_head is not None and ind_head is not None and prev_head[0] < ind_head[0]:
        for path in ("keys", "queries", "values"):
            run = interp.composition_patch(
                model, tokens, prev_head, [path], layer=ind_head[0], means=means
            )
            loss = interp.half_losses_from_logits(run.logits[:, :-1], tokens, length).second
            score = interp.induction_score(run.weights[:, ind_head[1]], length).mean()
            patched[path] = (loss, float(score))
    return Assessment(
        previous.cpu(), induction.cpu(), prev_head, ind_head, clean, without_previous,
        without_layer, interp.chance_loss(settings.n_vocab), patched,
    )
