"""Random-row experiments on softmax saturation (why scores are divided by √d_k).

Every experiment draws one query and ``n_keys`` keys with independent standard-normal entries —
roughly the situation at initialisation — and runs them through
:func:`tformer.attention.scaled_dot_product_attention`, scaled or not.

* :func:`random_attention_weights` — the weights of many such rows, ``(n_draws, n_keys)``.
* :func:`gradient_norms` — how much gradient reaches the scores, the query and the keys through
  the softmax, measured with autograd.
* :func:`steer_queries` — train queries, with Adam or SGD, each to read a chosen key through a
  softmax that may start saturated: does a small gradient freeze them? (:func:`steer_query`: one.)
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


def steer_queries(
    d_k: int,
    *,
    n_rows: int = 1,
    scale: bool = True,
    optimizer: str = "adam",
    seed: int = 0,
    n_steps: int = 500,
    lr: float = 0.05,
    n_keys: int = 16,
    d_v: int = 8,
) -> dict[str, torch.Tensor]:
    """Train ``n_rows`` independent queries, each to read a chosen key of its own row.

    Every row ``r`` has its own keys ``(n_keys, d_k)``, values ``(n_keys, d_v)`` and query
    ``(d_k,)`` (standard normal, drawn from ``torch.Generator().manual_seed(seed)``: all keys,
    then all queries, then all values), and its target is the key ranked in the middle by the
    initial scores. The loss is ``Σ_r ‖o_r − v_target,r‖²`` with ``o_r = softmax(c K_r q_r) V_r``
    (``c = 1/√d_k`` if ``scale``, else 1); only the queries ``(n_rows, d_k)`` are updated, with
    ``torch.optim.Adam`` or ``torch.optim.SGD`` at learning rate ``lr``. Both optimisers act on
    each entry separately, so the rows train exactly as ``n_rows`` separate runs would.

    Returns tensors of shape ``(n_rows,)``: ``first_gradient`` (‖∂L/∂q_r‖ at the start),
    ``first_step`` (‖Δq_r‖ of the first update), ``distance`` (the path length of q_r),
    ``target_weight`` and ``largest_weight`` after ``n_steps`` updates, and ``reached`` (the
    first step at which the target's weight exceeded 0.5, or ``n_steps`` if it never did).
    """
    _check_sizes(d_k, n_keys, n_steps)
    _check_sizes(n_rows, n_keys, n_steps)
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    generator = torch.Generator().manual_seed(seed)
    keys = torch.randn(n_rows, n_keys, d_k, generator=generator)
    query = torch.randn(n_rows, d_k, generator=generator)
    values = torch.randn(n_rows, n_keys, d_v, generator=generator)
    factor = d_k**-0.5 if scale else 1.0
    rows = torch.arange(n_rows)
    target = (keys @ query[..., None]).squeeze(-1).argsort(dim=-1)[:, n_keys // 2 - 1]
    query.requires_grad_(True)
    make = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = make([query], lr=lr)
    distance = torch.zeros(n_rows, dtype=torch.float64)
    reached = torch.full((n_rows,), float(n_steps))
    for step in range(n_steps):
        weights = softmax(factor * (keys @ query[..., None]).squeeze(-1))  # (n_rows, n_keys)
        first = (weights[rows, target] > 0.5) & (reached == n_steps)
        reached[first] = float(step)
        outputs = (weights[:, None, :] @ values).squeeze(-2)  # (n_rows, d_v)
        loss = ((outputs - values[rows, target]) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        before = query.detach().clone()
        opt.step()
        moved = (query.detach() - before).norm(dim=-1)
        if step == 0:
            first_gradient = query.grad.norm(dim=-1)
            first_step = moved
        distance += moved.double()
    with torch.no_grad():
        weights = softmax(factor * (keys @ query[..., None]).squeeze(-1))
    return {
        "first_gradient": first_gradient,
        "first_step": first_step,
        "distance": distance,
        "target_weight": weights[rows, target],
        "largest_weight": weights.amax(dim=-1),
        "reached": reached,
    }


def steer_query(d_k: int, **options) -> dict[str, float]:
    """:func:`steer_queries` for one row, as floats (the same draws as ``n_rows=1``)."""
    return {name: float(value[0]) for name, value in steer_queries(d_k, **options).items()}
