"""Random-row experiments on softmax saturation (why scores are divided by √d_k).

Every experiment draws one query and ``n_keys`` keys with independent standard-normal entries —
roughly the situation at initialisation — and runs them through
:func:`tformer.attention.scaled_dot_product_attention`, scaled or not.

* :func:`random_attention_weights` — the weights of many such rows, ``(n_draws, n_keys)``.
* :func:`gradient_norms` — how much gradient reaches the scores, the query and the keys through
  the softmax, measured with autograd.
* :func:`steer_query` — train one query, with Adam or SGD, to read a chosen key through a softmax
  that may start saturated: does a small gradient freeze it?
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


def steer_query(
    d_k: int,
    *,
    scale: bool = True,
    optimizer: str = "adam",
    seed: int = 0,
    n_steps: int = 500,
    lr: float = 0.05,
    n_keys: int = 16,
    d_v: int = 8,
) -> dict[str, float]:
    """Train one query to read a chosen key, through a softmax that may start saturated.

    Draws ``n_keys`` keys ``(n_keys, d_k)``, values ``(n_keys, d_v)`` and a query ``(d_k,)``
    (standard normal, ``torch.Generator().manual_seed(seed)``), picks the key ranked in the
    middle by the initial scores as the target, and minimises ``‖o − v_target‖²`` for the
    output ``o = softmax(c K q) V`` (``c = 1/√d_k`` if ``scale``, else 1) by updating the query
    alone, with ``torch.optim.Adam`` or ``torch.optim.SGD`` at learning rate ``lr``.

    Returns ``first_gradient`` (‖∂L/∂q‖ at the start), ``first_step`` (‖Δq‖ of the first
    update), ``distance`` (total path length of q), ``target_weight`` and ``largest_weight``
    after ``n_steps`` updates, and ``reached`` (the first step at which the target's weight
    exceeded 0.5, or ``n_steps`` if it never did).
    """
    _check_sizes(d_k, n_keys, n_steps)
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    generator = torch.Generator().manual_seed(seed)
    keys = torch.randn(n_keys, d_k, generator=generator)
    query = torch.randn(d_k, generator=generator)
    values = torch.randn(n_keys, d_v, generator=generator)
    factor = d_k**-0.5 if scale else 1.0
    target = int((keys @ query).argsort()[n_keys // 2 - 1])
    query.requires_grad_(True)
    make = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = make([query], lr=lr)
    result = {"distance": 0.0, "reached": float(n_steps)}
    for step in range(n_steps):
        weights = softmax(factor * (keys @ query))
        if weights[target] > 0.5 and result["reached"] == n_steps:
            result["reached"] = float(step)
        loss = ((weights @ values - values[target]) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        before = query.detach().clone()
        opt.step()
        moved = float((query.detach() - before).norm())
        if step == 0:
            result["first_gradient"] = float(query.grad.norm())
            result["first_step"] = moved
        result["distance"] += moved
    with torch.no_grad():
        weights = softmax(factor * (keys @ query))
    result["target_weight"] = float(weights[target])
    result["largest_weight"] = float(weights.max())
    return result
