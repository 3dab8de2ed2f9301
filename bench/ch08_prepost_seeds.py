"""Chapter 8's pre-norm against post-norm claims, over 10 seeds and every CPU kernel.

For every seed it trains the chapter's character-level stacks (:mod:`tformer.normalisation`,
80 AdamW steps, lr 3e-3, no clipping) — pre- and post-norm, L ∈ {2, 6, 8}, with and without a
20-step warm-up — plus the L = 6 stacks at lr 1e-2, and probes the gradients at initialisation
for L ∈ {2, 16}: as initialised (GPT-2's embeddings, standard deviation 0.02, tied to the output
matrix), with the embeddings × 50 (tied, so the output matrix × 50 too), and untied with the
input side × 50 alone or the output matrix × 50 alone. Each claim is a boolean per seed; the
chapter states as a fact only a claim that holds for 10 of 10 seeds under every kernel and
glues the rate of every other. Claims (``L`` the number of layers; "top" the last layer's
gradient norm; "cold" no warm-up, "warm" 20 warm-up steps):

* ``init_pre_top_falls``: pre-norm's top at L = 16 below L = 2;
* ``init_post_top_flat``: post-norm's top at L = 16 within (0.8, 1.25) × L = 2;
* ``init_pre_first_gt_top`` / ``init_post_level``: at L = 6, pre-norm's layer 1 gradient above
  the top layer's; post-norm's largest / smallest layer gradient below 1.25;
* ``x50_pre_flat``: embeddings × 50 (tied), pre-norm's top at L = 16 within (0.8, 1.25) × L = 2;
* ``x50_post_like_pre``: embeddings × 50 (tied), post- / pre-norm top at L = 16 in (0.7, 1.4);
* ``in50_post_unchanged``: untied, input × 50 alone: post-norm's top at L = 16 within 2 % of the
  plain stack's;
* ``out50_post_whole``: untied, output × 50 alone: post-norm's top at L = 16 within 2 % of the
  tied × 50 one (and more than 20 × the plain one);
* ``in50_pre_flat``: untied, input × 50 alone: pre-norm's top at L = 16 within (0.8, 1.25) × L = 2;
* ``out50_pre_falls``: untied, output × 50 alone: pre-norm's top at L = 16 still below L = 2;
* ``trained_pre_first_gt_top``: after training (lr 3e-3, L = 6, cold), pre-norm's layer 1
  gradient above the top layer's;
* ``pre_lower_{cold,warm}_L{2,6,8}`` and ``pre_lower_{cold,warm}_lr1e-2_L6``: pre-norm's final
  loss (mean of the last 10 steps) below post-norm's;
* ``warmup_helps_{pre,post}_L{2,6,8}`` and ``..._lr1e-2_L6``: the warm run ends below the cold one.

Run ``PYTHONPATH=src python bench/ch08_prepost_seeds.py`` (writes
``src/tformer/data/bench/ch08_prepost.json`` through ``bench/kernels.py``).
"""

from __future__ import annotations

from dataclasses import replace

import kernels

from tformer.normalisation import StackSettings, make_stack, probe_gradients, train_stack


def top(norm: str, n_layers: int, seed: int, **scales: float) -> float:
    """The last layer's gradient norm at initialisation."""
    return probe_gradients(make_stack(norm, n_layers, seed, **scales))[-1]


def measure(seed: int) -> dict[str, dict[str, float | bool]]:
    claims: dict[str, bool] = {}
    values: dict[str, float] = {}
    final = {}
    for lr, depths in ((3e-3, (2, 6, 8)), (1e-2, (6,))):
        settings = replace(StackSettings(), lr=lr)
        tag = "" if lr == 3e-3 else "lr1e-2_"
        for n_layers in depths:
            for norm in ("pre", "post"):
                for warmup in (0, 20):
                    run = train_stack(norm, n_layers, warmup, seed, settings)
                    final[norm, warmup] = run.final_loss
                    values[f"loss_{norm}_{'warm' if warmup else 'cold'}_{tag}L{n_layers}"] = (
                        run.final_loss)
                    if lr == 3e-3 and n_layers == 6 and warmup == 0 and norm == "pre":
                        grads = run.gradients_trained
                        claims["trained_pre_first_gt_top"] = grads[0] > grads[-1]
            for warmup, name in ((0, "cold"), (20, "warm")):
                claims[f"pre_lower_{name}_{tag}L{n_layers}"] = (
                    final["pre", warmup] < final["post", warmup])
            for norm in ("pre", "post"):
                claims[f"warmup_helps_{norm}_{tag}L{n_layers}"] = (
                    final[norm, 20] < final[norm, 0])

    plain = {(n, L): top(n, L, seed) for n in ("pre", "post") for L in (2, 16)}
    x50 = {(n, L): top(n, L, seed, embedding_scale=50.0) for n in ("pre", "post") for L in (2, 16)}
    in50 = {(n, L): top(n, L, seed, embedding_scale=50.0, output_scale=1.0)
            for n in ("pre", "post") for L in (2, 16)}
    out50 = {(n, L): top(n, L, seed, output_scale=50.0) for n in ("pre", "post") for L in (2, 16)}
    claims["init_pre_top_falls"] = plain["pre", 16] < plain["pre", 2]
    claims["init_post_top_flat"] = 0.8 < plain["post", 16] / plain["post", 2] < 1.25
    claims["x50_pre_flat"] = 0.8 < x50["pre", 16] / x50["pre", 2] < 1.25
    claims["x50_post_like_pre"] = 0.7 < x50["post", 16] / x50["pre", 16] < 1.4
    claims["in50_post_unchanged"] = abs(in50["post", 16] / plain["post", 16] - 1) < 0.02
    claims["out50_post_whole"] = (abs(out50["post", 16] / x50["post", 16] - 1) < 0.02
                                  and out50["post", 16] > 20 * plain["post", 16])
    claims["in50_pre_flat"] = 0.8 < in50["pre", 16] / in50["pre", 2] < 1.25
    claims["out50_pre_falls"] = out50["pre", 16] < out50["pre", 2]
    for label, table in (("plain", plain), ("x50", x50), ("in50", in50), ("out50", out50)):
        for (norm, n_layers), value in table.items():
            values[f"top_{label}_{norm}_L{n_layers}"] = value
    pre6 = probe_gradients(make_stack("pre", 6, seed))
    post6 = probe_gradients(make_stack("post", 6, seed))
    claims["init_pre_first_gt_top"] = pre6[0] > pre6[-1]
    claims["init_post_level"] = max(post6) / min(post6) < 1.25
    return {"claims": claims, "values": values}


if __name__ == "__main__":
    kernels.main("ch08_prepost", measure, depends=["src/tformer/normalisation.py",
                                                   "src/tformer/training.py"])
