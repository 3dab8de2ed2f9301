"""Random-row experiments on softmax saturation (why scores are divided by √d_k).

Every experiment draws one query and ``n_keys`` keys with independent standard-normal entries —
roughly the situation at initialisation — and runs them through
:func:`tformer.attention.scaled_dot_product_attention`, scaled or not.

* :func:`random_attention_weights` — the weights of many such rows, ``(n_draws, n_keys)``.
* :func:`gradient_norms` — how much gradient reaches the scores, the query and the keys through
  the softmax, measured with autograd.
"""

from __future__ import annotations

import torch

from tformer.attention import scaled_dot_product_attention, softmax


def _check_sizes(d_k: int, n_keys: int, n_draws: int) -> None:
    for name, value in (("d_k", d_k), ("n_keys", n_keys), ("n_draws", n_draws)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def random_attention_weights(
    d_k: int,
    n_keys: int = 16,
    n_draws: int = 2000,
    *,
    scale: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Attention weights of ``n_draws`` random rows → ``(n_draws, n_keys)``.

    For each draw, a query ``(1, d_k)`` and keys ``(n_keys, d_k)`` with i.i.d. N(0, 1) entries;
    ``scale=True`` divides the scores by ``√d_k``, ``scale=False`` leaves them as they are.
    Pass a seeded ``generator`` for reproducible draws (the same generator state gives the same
    queries and keys whether ``scale`` is on or off).
    """
    _check_sizes(d_k, n_keys, n_draws)
    queries = torch.randn(n_draws, 1, d_k, generator=generator)
    keys = torch.randn(n_draws, n_keys, d_k, generator=generator)
    values = torch.zeros(n_draws, n_keys, 1)  # only the weights matter here
    return scaled_dot_product_attention(queries, keys, values, scale=scale).weights.squeeze(-2)


def gradient_norms(
    d_k: int,
    n_keys: int = 16,
    n_draws: int = 500,
    *,
    scale: bool = True,
    d_v: int = 16,
    generator: torch.Generator | None = None,
) -> dict[str, torch.Tensor]:
    """Per-draw gradient norms reaching the scores, the query and the keys (float64, autograd).

    Each draw has a random query ``(1, d_k)``, keys ``(n_keys, d_k)``, values ``(n_keys, d_v)``
    and a random upstream gradient ``g`` ``(1, d_v)``; the loss is ``L = g · o`` for the
    output ``o``. Returns tensors of shape ``(n_draws,)``: ``"scores"`` ``‖∂L/∂s‖`` (``s`` the
    scores *after* any scaling, i.e. the softmax input), ``"queries"`` ``‖∂L/∂q‖``, ``"keys"``
    ``‖∂L/∂K‖`` (Frobenius) and ``"max weight"``, the largest weight of each row.
    """
    _check_sizes(d_k, n_keys, n_draws)
    options = {"generator": generator, "dtype": torch.float64}
    queries = torch.randn(n_draws, 1, d_k, **options).requires_grad_()
    keys = torch.randn(n_draws, n_keys, d_k, **options).requires_grad_()
    values = torch.randn(n_draws, n_keys, d_v, **options)
    upstream = torch.randn(n_draws, 1, d_v, **options)
    factor = d_k**-0.5 if scale else 1.0
    scores = (queries @ keys.transpose(-2, -1) * factor).detach().requires_grad_()
    weights = softmax(scores, dim=-1)  # the same softmax, cut off from q and K
    (weights @ values * upstream).sum().backward()
    result = scaled_dot_product_attention(queries, keys, values, scale=scale)
    (result.outputs * upstream).sum().backward()
    return {
        "scores": scores.grad.norm(dim=(-2, -1)),
        "queries": queries.grad.norm(dim=(-2, -1)),
        "keys": keys.grad.norm(dim=(-2, -1)),
        "max weight": result.weights.detach().amax(dim=-1).squeeze(-1),
    }
