"""Checkers for chapter 11, *The cost of attention*.

Expected values come from closed forms, from ``torch.softmax`` and from PyTorch's
``F.scaled_dot_product_attention`` — never from :mod:`tformer.efficient`. Before the generic
comparison each checker compares the answer with the typical wrong answers computed from the
exercise's own numbers (a term left out or counted once too often, another unit, an off-by-one
window; a merge or a tiled loop that skips the rescaling, shares one maximum, starts it at 0, or
overflows on large scores) and names the one that matches.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from tformer.checks.core import (
    Mistake,
    Wrong,
    as_number,
    call_reader,
    exercise,
    expect_number,
    expect_tensor,
    shown,
    to_array,
)

IO_T, IO_D, IO_TILE = 4096, 64, 128
MIB = 2**20


def _name_value(value: float, variants, rel_tol: float = 1e-9) -> None:
    """Raise the hint of the first typical wrong value that ``value`` equals.

    ``variants``: ``(wrong value, hint)`` pairs computed from the exercise's own numbers; none
    of them equals the right value, so a right answer never gets one of these hints."""
    if not math.isfinite(value):
        return
    for wrong, hint in variants:
        if math.isclose(value, wrong, rel_tol=rel_tol, abs_tol=1e-12):
            raise Wrong(hint)


def _naive_elements(t: int = IO_T, d: int = IO_D) -> int:
    return 4 * t * d + 4 * t * t


def _tiled_elements(t: int = IO_T, d: int = IO_D, b: int = IO_TILE) -> int:
    return 2 * t * d + 2 * t * d * -(-t // b)


def _unit_variants(elements: int) -> list[tuple[float, str]]:
    """The right element count in the wrong unit."""
    bytes_ = 2 * elements
    return [
        (elements / MIB, "that counts elements; each 16-bit element is 2 bytes"),
        (bytes_ / 1e6, "that is in megabytes (10⁶); a MiB is 2²⁰ bytes"),
        (bytes_, "that is the number of bytes; divide by 2²⁰ for MiB"),
        (bytes_ / 2**10, "that is in KiB (2¹⁰ bytes); a MiB is 2²⁰ bytes"),
        (bytes_ / 2**30, "that is in GiB (2³⁰ bytes); a MiB is 2²⁰ bytes"),
        (8 * bytes_ / MIB, "that counts bits (8 per byte); give MiB of bytes"),
    ]


@exercise("11.1", "Bytes between slow and fast memory")
def ex1(answer) -> None:
    """``answer``: ``{"naive_mib": ..., "tiled_mib": ...}``, the MiB naive attention and tiled
    attention (query tiles of 128) move between HBM and SRAM for one head, T = 4,096, d_k = 64,
    16-bit elements."""
    if not isinstance(answer, Mapping) or not {"naive_mib", "tiled_mib"} <= set(answer):
        raise Wrong('answer should be a dict {"naive_mib": ..., "tiled_mib": ...}')
    naive = as_number(answer["naive_mib"], "the naive traffic")
    tiled = as_number(answer["tiled_mib"], "the tiled traffic")
    t, d, b = IO_T, IO_D, IO_TILE
    expected_naive, expected_tiled = 2 * _naive_elements() / MIB, 2 * _tiled_elements() / MIB
    n_tiles = -(-t // b)
    _name_value(naive, [
        *_unit_variants(_naive_elements()),
        (2 * (4 * t * d + 2 * t * t) / MIB,
         "S and P are each written to slow memory and read back: 4T², not 2T²"),
        *[(2 * (4 * t * d + k * t * t) / MIB,
           f"the T × T matrices cross 4 times (write S, read S back, write P, read P back): "
           f"4T², not {counted}") for k, counted in ((1, "T²"), (3, "3T²"))],
        (2 * 4 * t * t / MIB, "add the 4Td of the (T, d) matrices: read Q, K and V, write O"),
        (2 * (3 * t * d + 4 * t * t) / MIB,
         "4Td, not 3Td: Q, K and V are read and O is written, four (T, d) matrices"),
    ], rel_tol=1e-3)
    expect_number(naive, expected_naive, name="the naive traffic in MiB", rel_tol=1e-3)
    _name_value(tiled, [
        *_unit_variants(_tiled_elements()),
        (2 * 4 * t * d / MIB, "K and V stream past every query tile: they are read once per "
                              "query tile, ⌈T/b⌉ times"),
        (2 * (2 * t * d + 2 * t * d * b) / MIB,
         f"K and V stream past each query tile, and there are ⌈T/b⌉ = {n_tiles} tiles: "
         f"multiply 2Td by ⌈T/b⌉, not by the tile size b = {b}"),
        (2 * (2 * t * d * n_tiles) / MIB,
         "add the 2Td of reading each Q tile and writing its O tile once"),
        (2 * (2 * t * d + t * d * n_tiles) / MIB,
         "both K and V stream past each query tile: 2Td per tile, not Td"),
        (2 * (2 * t * d + 2 * t * d * t) / MIB,
         "K and V are read once per query *tile* of b rows, not once per query: ⌈T/b⌉ times"),
    ], rel_tol=1e-3)
    expect_number(tiled, expected_tiled, name="the tiled traffic in MiB", rel_tol=1e-3)


WIN_T, WIN_W = 10_000, 512


def _window_pairs(t: int = WIN_T, w: int = WIN_W) -> int:
    return w * (w + 1) // 2 + (t - w) * w


def _symmetric_pairs(t: int = WIN_T, w: int = WIN_W) -> int:
    return sum(min(i, w - 1) + min(t - 1 - i, w - 1) + 1 for i in range(t))


def _pair_variants(t: int = WIN_T, w: int = WIN_W) -> list[tuple[float, str]]:
    right = _window_pairs(t, w)
    return [
        (t * w, "the first w − 1 queries have fewer than w keys before them: they see "
                "1, 2, …, w − 1 keys"),
        (t * (t + 1) // 2, "that is the causal mask without the window; each query sees at "
                           "most w keys"),
        (_window_pairs(t, w - 1), "a window of w keys includes the query itself: keys "
                                  "i − w + 1 … i"),
        (w * (w - 1) // 2 + (t - w) * w,
         "query i sees i + 1 keys, itself included: the first w queries see 1, 2, …, w keys, "
         "w(w + 1)/2 in all, not w(w − 1)/2"),
        (w * w // 2 + (t - w) * w, "the triangle of the first w queries holds "
                                   "1 + 2 + … + w = w(w + 1)/2 pairs, not w²/2"),
        (_symmetric_pairs(t, w), "that counts keys on both sides of the query; the causal "
                                 "window sees only keys i − w + 1 … i, none after the query"),
        (right + w, "one query too many at full width: the first w queries form the triangle, "
                    "the other T − w see w keys each"),
        (right - w, "one query too few at full width: the first w queries form the triangle, "
                    "the other T − w see w keys each"),
        (t * t, "that is every pair; the window allows each query at most w keys"),
    ]


@exercise("11.2", "How many scores does a window keep?")
def ex2(answer) -> None:
    """``answer``: ``{"pairs": int, "fraction": float}`` — the (query, key) pairs causal
    sliding-window attention with w = 512 allows on T = 10,000 positions, and their fraction of
    all T² pairs."""
    if not isinstance(answer, Mapping) or not {"pairs", "fraction"} <= set(answer):
        raise Wrong('answer should be a dict {"pairs": ..., "fraction": ...}')
    pairs = as_number(answer["pairs"], "the number of pairs")
    t = WIN_T
    _name_value(pairs, _pair_variants())
    expect_number(answer["pairs"], _window_pairs(), name="the number of pairs", integer=True)
    fraction = as_number(answer["fraction"], "the fraction")
    right = _window_pairs() / t**2
    _name_value(fraction, [
        (_window_pairs() / (t * (t + 1) / 2), "the fraction is of all T² pairs, not of the "
                                              "causal half"),
        (100 * right, "that is a percentage; give the fraction, a number between 0 and 1"),
        (1 - right, "that is the fraction the window masks out; give the fraction it keeps"),
        (_window_pairs() / t, "divide by all T² pairs, not by T"),
    ], rel_tol=1e-3)
    expect_number(fraction, right, name="the fraction", rel_tol=1e-3, rounding_tol=5e-4)


def _state(scores: torch.Tensor, values: torch.Tensor) -> tuple:
    m = scores.max()
    e = torch.exp(scores - m)
    return m, e.sum(), e @ values


def _snapshot(state: tuple) -> tuple:
    return tuple(part.clone() if isinstance(part, torch.Tensor) else part for part in state)


def _unchanged(state: tuple, snapshot: tuple) -> bool:
    return all(
        not isinstance(now, torch.Tensor) or torch.equal(now, before)
        for now, before in zip(state, snapshot)
    )


def _merge_cases():
    """``(scores, values, split, swap)``: both orders, small and large scores."""
    generator = torch.Generator().manual_seed(11)
    cases = []
    for scale in (1.0, 300.0):  # large scores: exp without the max subtracted overflows
        scores = torch.randn(12, generator=generator, dtype=torch.float64) * scale
        values = torch.randn(12, 3, generator=generator, dtype=torch.float64)
        cases += [(scores, values, False), (scores, values, True)]
    return cases


@exercise("11.3", "Merging two online-softmax states")
def ex3(answer) -> None:
    """``answer``: ``merge(state_a, state_b)`` with states ``(m, l, o)`` → merged ``(m, l, o)``.

    ``m`` is the maximum score, ``l = Σ exp(s − m)``, ``o = Σ exp(s − m) v`` (unnormalised).
    Each split is merged in both orders, so the larger maximum is once in a, once in b.
    """
    for scores, values, swap in _merge_cases():
        parts = [_state(scores[:5], values[:5]), _state(scores[5:], values[5:])]
        if swap:
            parts.reverse()
        first, second = parts
        before = _snapshot(first), _snapshot(second)
        result = call_reader(answer, first, second, name="your merge")
        if not (_unchanged(first, before[0]) and _unchanged(second, before[1])):
            raise Wrong("your merge changed its input states in place (mul_, add_, *=): the "
                        "caller's state a no longer describes part a; build new tensors "
                        "(scale_a * l_a, not l_a.mul_(scale_a))")
        first, second = before
        if not isinstance(result, tuple | list) or len(result) != 3:
            raise Wrong("merge should return a triple (m, l, o)")
        m = as_number(result[0], "the merged maximum m")
        l = as_number(result[1], "the merged normaliser l")
        o = torch.from_numpy(to_array(result[2], "the merged output o"))
        m_a, m_b = float(first[0]), float(second[0])
        m_new = max(m_a, m_b)
        if m != m_new:
            if m == m_a == min(m_a, m_b):  # the smaller maximum, or always the first state's?
                swapped = call_reader(answer, _snapshot(second), _snapshot(first),
                                      name="your merge")
                if isinstance(swapped, tuple | list) and len(swapped) == 3 and \
                        as_number(swapped[0], "the merged maximum m") == m_b:
                    raise Wrong("you kept m_a, as if part a always held the larger score; when "
                                "m_b > m_a the maximum is m_b: take m = max(m_a, m_b) and "
                                "rescale both parts by exp(m_old − m)")
            if m == min(m_a, m_b):
                raise Wrong("m is the smaller of the two maxima; the merged state's m is the "
                            "union's largest score, max(m_a, m_b) — then every rescaling factor "
                            "exp(m_old − m) is at most 1")
        expect_number(m, scores.max().item(), name="the merged maximum m")
        expected_l = float(torch.exp(scores - scores.max()).sum())
        if not math.isfinite(l):
            raise Wrong(f"l is {l}: with scores as large as {float(scores.abs().max()):.0f} an "
                        "exp overflows; rescale by exp(m_old − m), which is at most 1, never by "
                        "exp(m) itself")
        if abs(l - float(first[1] + second[1])) < 1e-9 and m_a != m_b:
            raise Wrong("you added the normalisers without rescaling each by exp(m_old − m_new)")
        inverted = sum(math.exp(m_new - float(part[0])) * float(part[1]) for part in (first, second))
        if math.isfinite(inverted) and abs(l - inverted) < 1e-9 * max(1.0, abs(inverted)):
            raise Wrong("the rescaling factor is exp(m_old − m_new), at most 1; you used "
                        "exp(m_new − m_old)")
        absolute = float(torch.exp(scores).sum())
        if math.isfinite(absolute) and math.isclose(l, absolute, rel_tol=1e-9):
            raise Wrong("your l is Σ exp(s), the sum without the maximum subtracted: the state "
                        "keeps l = Σ exp(s − m), so rescale l_a by exp(m_a − m), not by "
                        "exp(m_a) (which overflows for large scores)")
        expect_number(l, expected_l, name="the merged normaliser l", rel_tol=1e-9)
        expected_o = torch.exp(scores - scores.max()) @ values
        if o.shape == expected_o.shape and not torch.allclose(o, expected_o, rtol=1e-9,
                                                              atol=1e-12):
            if torch.allclose(o, first[2] + second[2], atol=1e-12) and m_a != m_b:
                raise Wrong("l is rescaled but o is not: rescale o_a and o_b by the same "
                            "exp(m_old − m_new) factors")
            if torch.allclose(o, torch.softmax(scores, 0) @ values, atol=1e-12):
                raise Wrong("that o is normalised (o / l, the attention output); the state keeps "
                            "o unnormalised, o = Σ exp(s − m) v, so that it can be merged again")
        expect_tensor(o / l, torch.softmax(scores, 0) @ values, name="the merged output o / l",
                      axes=("features",), atol=1e-9)


def _online(queries, keys, values, tile_size, *, scale=None, rescale_l=True, rescale_o=True,
            running_max=True, shared=False, start_at_zero=False, skip_partial=False,
            normalise=True):
    """Tiled attention with the typical mistakes switched on by keyword (the defaults are
    right)."""
    n_queries = queries.shape[0]
    scale = math.sqrt(queries.shape[1]) if scale is None else scale
    m = torch.full((n_queries, 1), 0.0 if start_at_zero else float("-inf"), dtype=queries.dtype)
    normaliser = torch.zeros(n_queries, 1, dtype=queries.dtype)
    output = torch.zeros(n_queries, values.shape[1], dtype=queries.dtype)
    end = keys.shape[0] - keys.shape[0] % tile_size if skip_partial else keys.shape[0]
    for start in range(0, end, tile_size):
        scores = queries @ keys[start : start + tile_size].T / scale
        if not running_max:
            weights = torch.exp(scores)
            normaliser = normaliser + weights.sum(dim=1, keepdim=True)
            output = output + weights @ values[start : start + tile_size]
            continue
        tile_max = scores.max() if shared else scores.max(dim=1, keepdim=True).values
        new_m = torch.maximum(m.max() if shared else m, tile_max) * torch.ones_like(m)
        factor = torch.exp(m - new_m)
        weights = torch.exp(scores - new_m)
        normaliser = (normaliser * factor if rescale_l else normaliser) + weights.sum(
            dim=1, keepdim=True)
        output = (output * factor if rescale_o else output) + weights @ values[
            start : start + tile_size]
        m = new_m
    return output / normaliser if normalise else output


TILED_VARIANTS = (
    ("your scores are not divided by √d_k", dict(scale=1.0)),
    ("you divided the scores by d_k; divide them by √d_k", dict(scale="d_k")),
    ("when a tile raises the running maximum, rescale the running normaliser and output by "
     "exp(m_old − m_new)", dict(rescale_l=False, rescale_o=False)),
    ("you rescaled the running output but not the normaliser: both get the factor "
     "exp(m_old − m_new) when the maximum rises", dict(rescale_l=False)),
    ("you rescaled the running normaliser but not the output: both get the factor "
     "exp(m_old − m_new) when the maximum rises", dict(rescale_o=False)),
    ("without a running maximum exp(scores) overflows (inf / inf = NaN) once the scores are "
     "large: keep each query's maximum and subtract it before exponentiating",
     dict(running_max=False)),
    ("one maximum shared by all queries underflows a query whose scores lie far below "
     "another's (0 / 0 = NaN): keep one running maximum per query, max(dim=1)",
     dict(shared=True)),
    ("the running maximum must start at −∞, not 0: a query whose scores are all very "
     "negative underflows to 0 / 0 = NaN", dict(start_at_zero=True)),
    ("the last, partial tile of keys was skipped: loop with range(0, T_k, tile_size) so that "
     "the final tile holds the remaining T_k mod tile_size keys", dict(skip_partial=True)),
    ("divide the running output by the running normaliser at the end", dict(normalise=False)),
)
"""``(hint, mistakes)`` of :func:`_online`: the typical wrong tiled loops."""


def _tiled_cases():
    """``(queries, keys, values, tile_size)``: random scores, then extreme ones (a query with
    scores near +850, one near 0 and one near −850, all against the same keys)."""
    generator = torch.Generator().manual_seed(44)
    cases = []
    for n_queries, n_keys, tile_size in ((5, 9, 4), (7, 16, 16), (3, 10, 1), (4, 13, 5)):
        queries = torch.randn(n_queries, 8, generator=generator, dtype=torch.float64) * 3
        keys = torch.randn(n_keys, 8, generator=generator, dtype=torch.float64) * 3
        values = torch.randn(n_keys, 6, generator=generator, dtype=torch.float64)
        cases.append((queries, keys, values, tile_size))
    direction = torch.randn(8, generator=generator, dtype=torch.float64)
    direction = direction / direction.norm()
    keys = 60 * direction + torch.randn(11, 8, generator=generator, dtype=torch.float64)
    strengths = torch.tensor([40.0, 0.0, -40.0, 5.0, -2.0], dtype=torch.float64)
    queries = strengths[:, None] * direction + 0.1 * torch.randn(
        5, 8, generator=generator, dtype=torch.float64)
    values = torch.randn(11, 6, generator=generator, dtype=torch.float64)
    cases.append((queries, keys, values, 3))
    return cases


class _ScoreWatch(TorchFunctionMode):
    """Notes whether any torch operation makes a tensor with both a T_q and a T_k axis (the full
    score matrix, or a broadcast of it); T_q, T_k, d_k, d_v and the tile size all differ."""

    def __init__(self, n_queries: int, n_keys: int) -> None:
        super().__init__()
        self.sizes, self.full = (n_queries, n_keys), False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for item in result if isinstance(result, tuple | list) else (result,):
            if isinstance(item, torch.Tensor) and item.ndim >= 2 and all(
                    size in item.shape for size in self.sizes):
                self.full = True
        return result


def _forms_full_scores(answer) -> bool:
    """Whether the reader's tiled function builds a T_q × T_k tensor (T_q = 5, T_k = 13,
    tiles of 4). Anything that goes wrong inside the probe counts as no."""
    generator = torch.Generator().manual_seed(45)
    queries = torch.randn(5, 8, generator=generator, dtype=torch.float64)
    keys = torch.randn(13, 8, generator=generator, dtype=torch.float64)
    values = torch.randn(13, 6, generator=generator, dtype=torch.float64)
    watch = _ScoreWatch(5, 13)
    try:
        with watch:
            answer(queries, keys, values, 4)
    except Exception:  # noqa: BLE001 - the probe must not turn a right answer wrong
        return False
    return watch.full


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-9, atol=1e-10, equal_nan=True)


@exercise("11.4", "Tiled attention, checked against PyTorch")
def ex4(answer) -> None:
    """``answer``: ``tiled(queries (T_q, d_k), keys (T_k, d_k), values (T_k, d_v), tile_size)``.

    Must return ``softmax(Q Kᵀ / √d_k) V`` computed one tile of keys at a time, without a
    T_q × T_k tensor, in the inputs' dtype. The last case has scores near ±850, where exp
    overflows or underflows unless each query's running maximum is subtracted.
    """
    cases = _tiled_cases()
    given, expected = [], []
    for queries, keys, values, tile_size in cases:
        n_queries, n_keys = queries.shape[0], keys.shape[0]
        name = f"your output (T_q = {n_queries}, T_k = {n_keys}, tile = {tile_size})"
        result = call_reader(answer, queries.clone(), keys.clone(), values.clone(), tile_size,
                             name="your tiled attention")
        if isinstance(result, torch.Tensor) and result.dtype != queries.dtype and \
                result.is_floating_point():
            raise Wrong(f"the inputs are {queries.dtype} but your output is {result.dtype}: "
                        "create the running maximum, normaliser and output with "
                        "dtype=queries.dtype (torch.zeros and torch.full default to float32)")
        value = torch.from_numpy(to_array(result, name))
        reference = F.scaled_dot_product_attention(queries[None], keys[None], values[None])[0]
        if value.shape != reference.shape:
            expect_tensor(value, reference, name=name, axes=("queries", "features"))
        given.append(value)
        expected.append(reference)
    wrong = [i for i in range(len(cases)) if not _same(given[i], expected[i])]
    if wrong:
        _diagnose_tiled(cases, given, expected, wrong)
    if _forms_full_scores(answer):
        raise Wrong("your function builds the whole T_q × T_k score matrix (then slices "
                    "it): compute the scores of one tile of keys at a time, "
                    "queries @ keys[start:start + tile_size].T, so memory stays linear")


def _diagnose_tiled(cases, given, expected, wrong) -> None:
    """Name the typical mistake that reproduces the reader's outputs, else compare the wrong
    cases one by one (rounding at float64's ~1e-8 passes)."""
    variants = []
    for hint, mistakes in TILED_VARIANTS:
        outputs = []
        for queries, keys, values, tile_size in cases:
            options = dict(mistakes)
            if options.get("scale") == "d_k":
                options["scale"] = float(queries.shape[1])
            with torch.no_grad():
                outputs.append(_online(queries, keys, values, tile_size, **options))
        variants.append((hint, outputs))
    for hint, outputs in variants:
        if all(_same(given[i], outputs[i]) for i in range(len(cases))):
            raise Wrong(hint)
    for i in wrong:
        queries, keys, values, tile_size = cases[i]
        setting = f"(T_q = {queries.shape[0]}, T_k = {keys.shape[0]}, tile = {tile_size})"
        if not torch.isfinite(given[i]).all():
            largest = float((queries @ keys.T).abs().max() / math.sqrt(queries.shape[1]))
            raise Wrong(f"{setting}: with scores as large as ±{largest:.0f} your output has NaN "
                        "or inf: exp overflows or underflows — keep one running maximum per "
                        "query, start it at −∞, subtract it before exp and rescale by "
                        "exp(m_old − m_new)")
        for hint, outputs in variants:
            if _same(given[i], outputs[i]) and not _same(outputs[i], expected[i]):
                raise Wrong(f"{setting}: {hint}")
        expect_tensor(given[i], expected[i], name=f"your output (T_q = {queries.shape[0]}, "
                      f"T_k = {keys.shape[0]}, tile = {tile_size})",
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
    n_blocks = -(-t // w)
    _name_value(scores, [
        (t * 2 * w, "the last block is padded to w queries: there are ⌈T/w⌉ blocks"),
        (n_blocks * w * w, "each block of queries is scored against 2w keys (its block and "
                           "the one before), not w"),
        ((t // w) * w * 2 * w, f"round the number of blocks up: ⌈T/w⌉ = {n_blocks} (the last "
                               "one is padded), not ⌊T/w⌋"),
        (n_blocks * 2 * w, "each block scores w queries against 2w keys, w · 2w scores, not 2w"),
        (t * t, "that is the T × T version; the banded one scores each block of w queries "
                "against 2w keys only"),
    ])
    expect_number(answer["scores"], _block_scores(), name="the number of scores", integer=True)
    wasted = as_number(answer["wasted"], "the wasted fraction")
    allowed = _window_pairs()
    kept = allowed / _block_scores()
    _name_value(wasted, [
        (kept, "that is the fraction the mask keeps; the wasted fraction is 1 minus it"),
        (_block_scores() - allowed, "that is the number of wasted scores; give it as a fraction "
                                    "of the scores computed, 1 − allowed / scores"),
        ((_block_scores() - allowed) / t**2, "measure the waste against the scores the banded "
                                             "version computes, not against all T² pairs"),
        (1 - allowed / t**2, "that is the waste of the masked T × T version; measure it "
                             "against the scores the banded version computes"),
        (100 * (1 - kept), "that is a percentage; give the fraction, a number between 0 and 1"),
        (1 - t * w / _block_scores(), "use the allowed pairs of Exercise 11.2, which count the "
                                      "first w − 1 queries' shorter windows, not T·w"),
    ], rel_tol=1e-3)
    expect_number(wasted, 1 - kept, name="the wasted fraction", rel_tol=1e-3, rounding_tol=5e-4)


@exercise("11.6", "Smallest window for a long-range task (source 001)")
def ex6(answer) -> None:
    """``answer``: the smallest window w such that 3 layers of causal sliding-window attention
    let position 511 depend on position 0."""
    layers, distance = 3, 511
    expected = -(-distance // layers) + 1  # need layers · (w − 1) ≥ distance
    value = as_number(answer, "the window")
    if value == expected - 1:
        raise Wrong("with that window the reach is one short; check w − 1 per layer")
    if value in (distance, distance + 1):
        raise Wrong("that is the window for one layer; three layers share the distance")
    if value == -(-distance // (layers - 1)) + 1:
        raise Wrong("all 3 layers widen the reach, each by w − 1 positions: 3(w − 1) ≥ 511; you "
                    "counted only 2 hops")
    if math.isfinite(value) and value != int(value):
        raise Wrong(f"w = {value:g} is not a whole number: a window holds a whole number of "
                    "positions — take the smallest integer w with 3(w − 1) ≥ 511 (round up)")
    if math.isfinite(value) and 1 <= value < expected:
        raise Wrong(f"with w = {shown(value)} the reach after 3 layers is 3(w − 1) = "
                    f"{shown(layers * (value - 1))} positions, short of 511")
    if math.isfinite(value) and value > expected:
        raise Wrong(f"w = {shown(value)} works, but a smaller window does too: the question "
                    "asks for the smallest w with 3(w − 1) ≥ 511")
    expect_number(answer, expected, name="the window", integer=True)


def _merge_no_rescale(state_a, state_b):
    m = torch.maximum(torch.as_tensor(state_a[0]), torch.as_tensor(state_b[0]))
    return m, state_a[1] + state_b[1], state_a[2] + state_b[2]


def _merge_inverted(state_a, state_b):
    m = torch.maximum(torch.as_tensor(state_a[0]), torch.as_tensor(state_b[0]))
    scale_a, scale_b = torch.exp(m - state_a[0]), torch.exp(m - state_b[0])
    return m, scale_a * state_a[1] + scale_b * state_b[1], scale_a * state_a[2] + scale_b * state_b[2]


def _merge_right(state_a, state_b, *, pick=torch.maximum, in_place=False, normalised=False):
    m = pick(torch.as_tensor(state_a[0]), torch.as_tensor(state_b[0]))
    scale_a, scale_b = torch.exp(state_a[0] - m), torch.exp(state_b[0] - m)
    if in_place:
        state_a[1].mul_(scale_a)
        return m, state_a[1].add_(scale_b * state_b[1]), scale_a * state_a[2] + scale_b * state_b[2]
    l = scale_a * state_a[1] + scale_b * state_b[1]
    o = scale_a * state_a[2] + scale_b * state_b[2]
    return m, l, o / l if normalised else o


def _merge_keep_a(state_a, state_b):
    scale = torch.exp(state_b[0] - state_a[0])
    return state_a[0], state_a[1] + scale * state_b[1], state_a[2] + scale * state_b[2]


def _merge_absolute(state_a, state_b):
    m = torch.maximum(torch.as_tensor(state_a[0]), torch.as_tensor(state_b[0]))
    ea, eb = torch.exp(state_a[0]), torch.exp(state_b[0])
    return m, ea * state_a[1] + eb * state_b[1], ea * state_a[2] + eb * state_b[2]


def _tiled_unscaled(queries, keys, values, tile_size):
    return torch.softmax(queries @ keys.T, -1) @ values


def _tiled_with(**mistakes):
    return lambda queries, keys, values, tile_size: _online(queries, keys, values, tile_size,
                                                            **mistakes)


def _tiled_no_rescale(queries, keys, values, tile_size):
    """The typical mistake: a running maximum, but old sums are never rescaled."""
    return _online(queries, keys, values, tile_size, rescale_l=False, rescale_o=False)


def _tiled_full_scores(queries, keys, values, tile_size):
    scores = queries @ keys.T / math.sqrt(queries.shape[1])
    return torch.softmax(scores, -1) @ values


def _tiled_float32(queries, keys, values, tile_size):
    return _online(queries.float(), keys.float(), values.float(), tile_size)


_IO_OK = {"naive_mib": 2 * _naive_elements() / MIB, "tiled_mib": 2 * _tiled_elements() / MIB}
_PAIRS = _window_pairs()

MISTAKES: dict[str, list[Mistake]] = {
    "11.1": [
        Mistake("elements instead of bytes", lambda: {k: v / 2 for k, v in _IO_OK.items()},
                "2 bytes"),
        Mistake("S and P moved once", lambda: {**_IO_OK, "naive_mib": 2 * (
            4 * IO_T * IO_D + 2 * IO_T**2) / MIB}, "4T²"),
        Mistake("the T × T matrix counted once", lambda: {**_IO_OK, "naive_mib": 2 * (
            4 * IO_T * IO_D + IO_T**2) / MIB}, "4T², not T²"),
        Mistake("MB instead of MiB", lambda: {**_IO_OK, "naive_mib": 2 * _naive_elements() / 1e6},
                "MiB"),
        Mistake("K and V read only once", lambda: {**_IO_OK, "tiled_mib": 8 * IO_T * IO_D / MIB},
                "once per query tile"),
        Mistake("the tile size for the number of tiles", lambda: {**_IO_OK, "tiled_mib": 129.0},
                "not by the tile size"),
        Mistake("the 2Td term left out", lambda: {**_IO_OK, "tiled_mib": 32.0},
                "reading each Q tile"),
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
        Mistake("the triangle w(w − 1)/2", lambda: {
            "pairs": WIN_W * (WIN_W - 1) // 2 + (WIN_T - WIN_W) * WIN_W, "fraction": 0.05},
            "not w(w − 1)/2"),
        Mistake("a symmetric window", lambda: {"pairs": _symmetric_pairs(), "fraction": 0.1},
                "both sides"),
        Mistake("a percentage", lambda: {"pairs": _PAIRS, "fraction": 100 * _PAIRS / WIN_T**2},
                "percentage"),
        Mistake("a float count", lambda: {"pairs": float(_PAIRS), "fraction": _PAIRS / WIN_T**2},
                "float"),
    ],
    "11.3": [
        Mistake("no rescaling", lambda: _merge_no_rescale, "without rescaling"),
        Mistake("rescaling factor inverted", lambda: _merge_inverted, "exp(m_old − m_new)"),
        Mistake("the smaller maximum", lambda: lambda a, b: _merge_right(a, b, pick=torch.minimum),
                "smaller of the two maxima"),
        Mistake("part a assumed to hold the maximum", lambda: _merge_keep_a, "you kept m_a"),
        Mistake("max subtraction undone", lambda: _merge_absolute, "Σ exp(s)"),
        Mistake("states changed in place", lambda: lambda a, b: _merge_right(a, b, in_place=True),
                "in place"),
        Mistake("o normalised", lambda: lambda a, b: _merge_right(a, b, normalised=True),
                "unnormalised"),
    ],
    "11.4": [
        Mistake("scores not scaled by √d_k", lambda: _tiled_unscaled, "√d_k"),
        Mistake("running sums never rescaled", lambda: _tiled_no_rescale, "rescale"),
        Mistake("no running maximum", lambda: _tiled_with(running_max=False), "overflows"),
        Mistake("one maximum for all queries", lambda: _tiled_with(shared=True),
                "one running maximum per query"),
        Mistake("maximum started at 0", lambda: _tiled_with(start_at_zero=True), "start at −∞"),
        Mistake("the full score matrix", lambda: _tiled_full_scores, "whole T_q × T_k"),
        Mistake("float32 state", lambda: _tiled_float32, "dtype=queries.dtype"),
        Mistake("the partial tile skipped", lambda: _tiled_with(skip_partial=True),
                "partial tile"),
    ],
    "11.5": [
        Mistake("T/w blocks without rounding up", lambda: {"scores": WIN_T * 2 * WIN_W,
                                                           "wasted": 0.5}, "⌈T/w⌉"),
        Mistake("w keys per block", lambda: {"scores": 20 * WIN_W * WIN_W, "wasted": 0.5},
                "2w keys"),
        Mistake("kept instead of wasted", lambda: {"scores": _block_scores(),
                                                   "wasted": _PAIRS / _block_scores()},
                "1 minus"),
        Mistake("wasted scores, not a fraction", lambda: {
            "scores": _block_scores(), "wasted": _block_scores() - _PAIRS}, "number of wasted"),
        Mistake("waste against T²", lambda: {
            "scores": _block_scores(), "wasted": (_block_scores() - _PAIRS) / WIN_T**2},
            "not against all T² pairs"),
    ],
    "11.6": [
        Mistake("one short", lambda: 171, "one short"),
        Mistake("the one-layer window", lambda: 512, "one layer"),
        Mistake("two hops", lambda: 257, "only 2 hops"),
        Mistake("not rounded up", lambda: 511 / 3 + 1, "whole number"),
        Mistake("too large", lambda: 200, "smallest"),
    ],
}
