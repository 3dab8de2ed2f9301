"""Checkers for chapter 11, *The cost of attention*.

Expected values come from closed forms, from ``torch.softmax`` and from PyTorch's
``F.scaled_dot_product_attention`` — never from :mod:`tformer.efficient`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch.nn import functional as F

from tformer.checks.core import (
    Wrong,
    as_number,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)


@exercise("11.1", "Attention versus recurrence: the T/d ratio")
def ex1(answer) -> None:
    """``answer``: ``(ratio at T = 50, d = 512; ratio at T = 32,768, d = 4,096)``."""
    if not isinstance(answer, Sequence) or isinstance(answer, str) or len(answer) != 2:
        raise Wrong("answer should be a pair (short_ratio, long_ratio)")
    short = as_number(answer[0], "the ratio at T = 50")
    long = as_number(answer[1], "the ratio at T = 32,768")
    if abs(short - 512 / 50) < 1e-3:
        raise Wrong("that is d/T; the ratio attention / recurrence is T²d / (T d²) = T/d")
    expect_number(short, 50 / 512, name="the ratio at T = 50", rel_tol=1e-3, rounding_tol=0.005)
    expect_number(long, 32_768 / 4_096, name="the ratio at T = 32,768", rel_tol=1e-6)


@exercise("11.2", "Scores and memory at T = 8,192")
def ex2(answer) -> None:
    """``answer``: dict ``{"scores": int, "mib": float}`` for one head at T = 8,192 (float32)."""
    if not isinstance(answer, Mapping) or not {"scores", "mib"} <= set(answer):
        raise Wrong('answer should be a dict {"scores": ..., "mib": ...}')
    scores = 8192**2
    given_scores = as_number(answer["scores"], "the number of scores")
    if given_scores in (8192 * 8191 // 2, 8192 * 8193 // 2):
        raise Wrong("without a causal mask every query scores every key: T², not T(T±1)/2")
    expect_number(given_scores, scores, name="the number of scores")
    mib = as_number(answer["mib"], "the memory in MiB")
    if abs(mib - scores * 4 / 1e6) < 1:
        raise Wrong("that is in megabytes (10⁶); a MiB is 2²⁰ bytes")
    expect_number(mib, scores * 4 / 2**20, name="the memory in MiB", rel_tol=1e-4)


def _state(scores: torch.Tensor, values: torch.Tensor) -> tuple:
    m = scores.max()
    e = torch.exp(scores - m)
    return m, e.sum(), e @ values


@exercise("11.3", "Merging two online-softmax states")
def ex3(answer) -> None:
    """``answer``: ``merge(state_a, state_b)`` with states ``(m, l, o)`` → merged ``(m, l, o)``.

    ``m`` is the maximum score, ``l = Σ exp(s − m)``, ``o = Σ exp(s − m) v`` (unnormalised).
    """
    generator = torch.Generator().manual_seed(11)
    for scale in (1.0, 300.0):  # large scores: exp without the max subtracted overflows
        scores = torch.randn(12, generator=generator, dtype=torch.float64) * scale
        values = torch.randn(12, 3, generator=generator, dtype=torch.float64)
        first, second = _state(scores[:5], values[:5]), _state(scores[5:], values[5:])
        result = call_reader(answer, first, second, name="your merge")
        if not isinstance(result, tuple | list) or len(result) != 3:
            raise Wrong("merge should return a triple (m, l, o)")
        m = as_number(result[0], "the merged maximum m")
        l = as_number(result[1], "the merged normaliser l")
        o = torch.from_numpy(to_array(result[2], "the merged output o"))
        expect_number(m, scores.max().item(), name="the merged maximum m")
        expected_l = torch.exp(scores - scores.max()).sum()
        if abs(l - float(first[1] + second[1])) < 1e-9 and first[0] != second[0]:
            raise Wrong("you added the normalisers without rescaling each by exp(m_old − m_new)")
        expect_number(l, float(expected_l), name="the merged normaliser l", rel_tol=1e-9)
        expect_tensor(o / l, torch.softmax(scores, 0) @ values, name="the merged output o / l",
                      axes=("features",), atol=1e-9)


@exercise("11.4", "Tiled attention, checked against PyTorch")
def ex4(answer) -> None:
    """``answer``: ``tiled(queries (T_q, d_k), keys (T_k, d_k), values (T_k, d_v), tile_size)``.

    Must return ``softmax(Q Kᵀ / √d_k) V`` computed one tile of keys at a time.
    """
    generator = torch.Generator().manual_seed(44)
    for n_queries, n_keys, tile_size in ((5, 9, 4), (7, 16, 16), (3, 10, 1), (4, 13, 5)):
        queries = torch.randn(n_queries, 8, generator=generator, dtype=torch.float64) * 3
        keys = torch.randn(n_keys, 8, generator=generator, dtype=torch.float64) * 3
        values = torch.randn(n_keys, 6, generator=generator, dtype=torch.float64)
        expected = F.scaled_dot_product_attention(queries[None], keys[None], values[None])[0]
        result = call_reader(answer, queries.clone(), keys.clone(), values.clone(), tile_size,
                             name="your tiled attention")
        expect_tensor(result, expected,
                      name=f"your output (T_q = {n_queries}, T_k = {n_keys}, tile = {tile_size})",
                      axes=("queries", "features"), atol=1e-8)


@exercise("11.5", "Receptive field of stacked windows")
def ex5(answer) -> None:
    """``answer``: how many positions (itself included) can reach the last query after
    6 layers of causal sliding-window attention with window w = 128 in a long sequence."""
    layers, window = 6, 128
    expected = 1 + layers * (window - 1)
    answer = as_number(answer, "the receptive field")
    if answer == layers * window:
        raise Wrong("each layer reaches w − 1 positions *back*; the query itself counts once")
    expect_number(answer, expected, name="the receptive field")


@exercise("11.6", "Smallest window for a long-range task (source 001)")
def ex6(answer) -> None:
    """``answer``: the smallest window w such that 3 layers of causal sliding-window attention
    let position 511 depend on position 0."""
    layers, distance = 3, 511
    expected = -(-distance // layers) + 1  # need layers · (w − 1) ≥ distance
    answer = as_number(answer, "the window")
    if answer == expected - 1:
        raise Wrong("with that window the reach is one short; check w − 1 per layer")
    if answer == distance + 1:
        raise Wrong("that is the window for one layer; three layers share the distance")
    expect_number(answer, expected, name="the window")
