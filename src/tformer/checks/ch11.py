"""Checkers for chapter 11, *The cost of attention*.

Expected values come from closed forms, from ``torch.softmax`` and from PyTorch's
``F.scaled_dot_product_attention`` — never from :mod:`tformer.efficient`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch.nn import functional as F

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    to_array,
)

IO_T, IO_D, IO_TILE = 4096, 64, 128
MIB = 2**20


def _naive_elements(t: int = IO_T, d: int = IO_D) -> int:
    return 4 * t * d + 4 * t * t


def _tiled_elements(t: int = IO_T, d: int = IO_D, b: int = IO_TILE) -> int:
    return 2 * t * d + 2 * t * d * -(-t // b)


@exercise("11.1", "Bytes between slow and fast memory")
def ex1(answer) -> None:
    """``answer``: ``{"naive_mib": ..., "tiled_mib": ...}``, the MiB naive attention and tiled
    attention (query tiles of 128) move between HBM and SRAM for one head, T = 4,096, d_k = 64,
    16-bit elements."""
    if not isinstance(answer, Mapping) or not {"naive_mib", "tiled_mib"} <= set(answer):
        raise Wrong('answer should be a dict {"naive_mib": ..., "tiled_mib": ...}')
    naive = as_number(answer["naive_mib"], "the naive traffic")
    tiled = as_number(answer["tiled_mib"], "the tiled traffic")
    expected_naive, expected_tiled = 2 * _naive_elements() / MIB, 2 * _tiled_elements() / MIB
    if math.isclose(naive, expected_naive / 2, rel_tol=1e-3):
        raise Wrong("that counts elements; each 16-bit element is 2 bytes")
    if math.isclose(naive, 2 * (4 * IO_T * IO_D + 2 * IO_T**2) / MIB, rel_tol=1e-3):
        raise Wrong("S and P are each written to slow memory and read back: 4T², not 2T²")
    if math.isclose(naive, 2 * _naive_elements() / 1e6, rel_tol=1e-3):
        raise Wrong("that is in megabytes (10⁶); a MiB is 2²⁰ bytes")
    expect_number(naive, expected_naive, name="the naive traffic in MiB", rel_tol=1e-3)
    if math.isclose(tiled, expected_tiled / 2, rel_tol=1e-3):
        raise Wrong("that counts elements; each 16-bit element is 2 bytes")
    if math.isclose(tiled, 2 * 4 * IO_T * IO_D / MIB, rel_tol=1e-3):
        raise Wrong("K and V stream past every query tile: they are read once per query tile, "
                    "⌈T/b⌉ times")
    expect_number(tiled, expected_tiled, name="the tiled traffic in MiB", rel_tol=1e-3)


WIN_T, WIN_W = 10_000, 512


def _window_pairs(t: int = WIN_T, w: int = WIN_W) -> int:
    return w * (w + 1) // 2 + (t - w) * w


@exercise("11.2", "How many scores does a window keep?")
def ex2(answer) -> None:
    """``answer``: ``{"pairs": int, "fraction": float}`` — the (query, key) pairs causal
    sliding-window attention with w = 512 allows on T = 10,000 positions, and their fraction of
    all T² pairs."""
    if not isinstance(answer, Mapping) or not {"pairs", "fraction"} <= set(answer):
        raise Wrong('answer should be a dict {"pairs": ..., "fraction": ...}')
    pairs = as_number(answer["pairs"], "the number of pairs")
    t, w = WIN_T, WIN_W
    if pairs == t * w:
        raise Wrong("the first w − 1 queries have fewer than w keys before them: they see "
                    "1, 2, …, w − 1 keys")
    if pairs == t * (t + 1) // 2:
        raise Wrong("that is the causal mask without the window; each query sees at most w keys")
    if pairs == _window_pairs(t, w - 1):
        raise Wrong("a window of w keys includes the query itself: keys i − w + 1 … i")
    expect_number(pairs, _window_pairs(), name="the number of pairs")
    fraction = as_number(answer["fraction"], "the fraction")
    if math.isclose(fraction, _window_pairs() / (t * (t + 1) / 2), rel_tol=1e-3):
        raise Wrong("the fraction is of all T² pairs, not of the causal half")
    expect_number(fraction, _window_pairs() / t**2, name="the fraction", rel_tol=1e-3,
                  rounding_tol=5e-4)


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
        m_new = max(float(first[0]), float(second[0]))
        inverted = sum(math.exp(m_new - float(part[0])) * float(part[1]) for part in (first, second))
        if math.isfinite(inverted) and abs(l - inverted) < 1e-9 * max(1.0, abs(inverted)):
            raise Wrong("the rescaling factor is exp(m_old − m_new), at most 1; you used "
                        "exp(m_new − m_old)")
        expect_number(l, float(expected_l), name="the merged normaliser l", rel_tol=1e-9)
        expect_tensor(o / l, torch.softmax(scores, 0) @ values, name="the merged output o / l",
                      axes=("features",), atol=1e-9)


def _tiled_no_rescale(queries, keys, values, tile_size):
    """The typical mistake: a running maximum, but old sums are never rescaled."""
    n_queries = queries.shape[0]
    running_max = torch.full((n_queries, 1), float("-inf"), dtype=queries.dtype)
    normaliser = torch.zeros(n_queries, 1, dtype=queries.dtype)
    output = torch.zeros(n_queries, values.shape[1], dtype=queries.dtype)
    for start in range(0, keys.shape[0], tile_size):
        scores = queries @ keys[start : start + tile_size].T / math.sqrt(queries.shape[1])
        running_max = torch.maximum(running_max, scores.max(dim=1, keepdim=True).values)
        weights = torch.exp(scores - running_max)
        normaliser = normaliser + weights.sum(dim=1, keepdim=True)
        output = output + weights @ values[start : start + tile_size]
    return output / normaliser


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
        if isinstance(result, torch.Tensor) and result.shape == expected.shape:
            value = result.detach().to(torch.float64)
            unscaled = torch.softmax(queries @ keys.T, -1) @ values
            if torch.allclose(value, unscaled, atol=1e-8):
                raise Wrong("your scores are not divided by √d_k")
            if torch.allclose(value, _tiled_no_rescale(queries, keys, values, tile_size),
                              atol=1e-8) and not torch.allclose(value, expected, atol=1e-8):
                raise Wrong("when a tile raises the running maximum, rescale the running "
                            "normaliser and output by exp(m_old − m_new)")
        expect_tensor(result, expected,
                      name=f"your output (T_q = {n_queries}, T_k = {n_keys}, tile = {tile_size})",
                      axes=("queries", "features"), atol=1e-8)


def _block_scores(t: int = WIN_T, w: int = WIN_W) -> int:
    return -(-t // w) * w * 2 * w


@exercise("11.5", "What the banded implementation computes and wastes")
def ex5(answer) -> None:
    """``answer``: ``{"scores": int, "wasted": float}`` — the scores the block method (blocks of
    w queries against the 2w keys of their block and the one before) computes for T = 10,000,
    w = 512, and the fraction of them the mask throws away."""
    if not isinstance(answer, Mapping) or not {"scores", "wasted"} <= set(answer):
        raise Wrong('answer should be a dict {"scores": ..., "wasted": ...}')
    t, w = WIN_T, WIN_W
    scores = as_number(answer["scores"], "the number of scores")
    if scores == t * 2 * w:
        raise Wrong("the last block is padded to w queries: there are ⌈T/w⌉ blocks")
    if scores == -(-t // w) * w * w:
        raise Wrong("each block of queries is scored against 2w keys (its block and the one "
                    "before), not w")
    expect_number(scores, _block_scores(), name="the number of scores")
    wasted = as_number(answer["wasted"], "the wasted fraction")
    kept = _window_pairs() / _block_scores()
    if math.isclose(wasted, kept, rel_tol=1e-3):
        raise Wrong("that is the fraction the mask keeps; the wasted fraction is 1 minus it")
    expect_number(wasted, 1 - kept, name="the wasted fraction", rel_tol=1e-3, rounding_tol=5e-4)


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


def _merge_no_rescale(state_a, state_b):
    m = torch.maximum(torch.as_tensor(state_a[0]), torch.as_tensor(state_b[0]))
    return m, state_a[1] + state_b[1], state_a[2] + state_b[2]


def _merge_inverted(state_a, state_b):
    m = torch.maximum(torch.as_tensor(state_a[0]), torch.as_tensor(state_b[0]))
    scale_a, scale_b = torch.exp(m - state_a[0]), torch.exp(m - state_b[0])
    return m, scale_a * state_a[1] + scale_b * state_b[1], scale_a * state_a[2] + scale_b * state_b[2]


def _tiled_unscaled(queries, keys, values, tile_size):
    return torch.softmax(queries @ keys.T, -1) @ values


_IO_OK = {"naive_mib": 2 * _naive_elements() / MIB, "tiled_mib": 2 * _tiled_elements() / MIB}
_PAIRS = _window_pairs()

MISTAKES: dict[str, list[Mistake]] = {
    "11.1": [
        Mistake("elements instead of bytes", lambda: {k: v / 2 for k, v in _IO_OK.items()},
                "2 bytes"),
        Mistake("S and P moved once", lambda: {**_IO_OK, "naive_mib": 2 * (
            4 * IO_T * IO_D + 2 * IO_T**2) / MIB}, "4T²"),
        Mistake("MB instead of MiB", lambda: {**_IO_OK, "naive_mib": 2 * _naive_elements() / 1e6},
                "MiB"),
        Mistake("K and V read only once", lambda: {**_IO_OK, "tiled_mib": 8 * IO_T * IO_D / MIB},
                "once per query tile"),
    ],
    "11.2": [
        Mistake("T·w, ignoring the first queries", lambda: {"pairs": WIN_T * WIN_W,
                                                            "fraction": 0.0512}, "first w − 1"),
        Mistake("the causal mask without the window",
                lambda: {"pairs": WIN_T * (WIN_T + 1) // 2, "fraction": 0.5}, "without the window"),
        Mistake("window of w − 1 keys", lambda: {"pairs": _window_pairs(WIN_T, WIN_W - 1),
                                                 "fraction": 0.05}, "itself"),
        Mistake("fraction of the causal half", lambda: {
            "pairs": _PAIRS, "fraction": _PAIRS / (WIN_T * (WIN_T + 1) / 2)}, "T² pairs"),
    ],
    "11.3": [
        Mistake("no rescaling", lambda: _merge_no_rescale, "without rescaling"),
        Mistake("rescaling factor inverted", lambda: _merge_inverted, "exp(m_old − m_new)"),
    ],
    "11.4": [
        Mistake("scores not scaled by √d_k", lambda: _tiled_unscaled, "√d_k"),
        Mistake("running sums never rescaled", lambda: _tiled_no_rescale, "rescale"),
    ],
    "11.5": [
        Mistake("T/w blocks without rounding up", lambda: {"scores": WIN_T * 2 * WIN_W,
                                                           "wasted": 0.5}, "⌈T/w⌉"),
        Mistake("w keys per block", lambda: {"scores": 20 * WIN_W * WIN_W, "wasted": 0.5},
                "2w keys"),
        Mistake("kept instead of wasted", lambda: {"scores": _block_scores(),
                                                   "wasted": _PAIRS / _block_scores()},
                "1 minus"),
    ],
    "11.6": [
        Mistake("one short", lambda: 171, "one short"),
        Mistake("the one-layer window", lambda: 512, "one layer"),
    ],
}
