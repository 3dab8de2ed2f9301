"""Checkers of chapters 5 and 6: right answers pass, typical mistakes get their specific hint.

The right answers here are written independently of the solution notebooks (closed forms, plain
torch); the wrong ones are the mistakes each hint is meant to catch.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from tformer.checks import ch05, ch06


def _status(verdict) -> str:
    return verdict.status


# --- chapter 5 ----------------------------------------------------------------------------------


def test_05_1_scaled_causal_weights_and_the_unscaled_mistake():
    r = 1 / math.sqrt(2)  # scores (1, 2, 3), (0, 2, 2), (1, 4, 5), divided by √d_k = √2
    row2 = [1 / (1 + math.exp(2 * r)), math.exp(2 * r) / (1 + math.exp(2 * r)), 0.0]
    total = math.exp(r) + math.exp(4 * r) + math.exp(5 * r)
    row3 = [math.exp(r) / total, math.exp(4 * r) / total, math.exp(5 * r) / total]
    assert ch05.ex1([[1.0, 0.0, 0.0], row2, row3]).passed
    total_u = math.exp(1) + math.exp(4) + math.exp(5)
    unscaled = [[1.0, 0.0, 0.0], [1 / (1 + math.exp(2)), math.exp(2) / (1 + math.exp(2)), 0.0],
                [math.exp(1) / total_u, math.exp(4) / total_u, math.exp(5) / total_u]]
    verdict = ch05.ex1(unscaled)
    assert verdict.status == "wrong" and "unscaled" in verdict.message


def test_05_2_row_sums_on_the_new_scores():
    scores = [[2.0, 1.0, 0.0, 3.0], [1.0, 3.0, 2.0, 0.0], [0.0, 1.0, 1.0, 4.0], [2.0, 2.0, 1.0, 1.0]]
    sums = []
    for i, row in enumerate(scores):
        exps = [math.exp(s) for s in row]
        sums.append(sum(exps[: i + 1]) / sum(exps))
    assert ch05.ex2(sums).passed
    verdict = ch05.ex2([1.0, 1.0, 1.0, 1.0])
    assert verdict.status == "wrong" and "before" in verdict.message


def test_05_3_kv_cache_shapes_and_the_alignment_mistake():
    right = {"padding": (8, 1, 1, 128), "combined": (8, 1, 4, 128),
             "scores": (8, 8, 4, 128), "hidden": 3 + 2 + 1}
    assert ch05.ex3(right).passed
    assert "lower-right" in ch05.ex3({**right, "hidden": sum(127 - i for i in range(4))}).message
    assert "diagonal" in ch05.ex3({**right, "hidden": 10}).message
    assert ch05.ex3({**right, "padding": (8, 128)}).status == "wrong"


def test_05_4_dead_rows_of_a_left_padded_batch():
    expected = [[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]]
    assert ch05.ex4(expected).passed
    assert "right padding" in ch05.ex4([[0] * 4] * 3).message


def test_05_5_loss_over_real_tokens_only():
    logits, targets, lengths = ch05.padding_loss_data()
    total, count = 0.0, 0
    for b in range(3):
        for t in range(int(lengths[b])):
            total -= float(torch.log_softmax(logits[b, t], dim=-1)[targets[b, t]])
            count += 1
    assert ch05.ex5(total / count).passed
    everything = float(F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1)))
    assert "padded" in ch05.ex5(everything).message


def _attention(queries, keys, values, mask=None, late=False, check_dead=True):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    if mask is not None and not late:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    if check_dead and torch.isneginf(row_max).any():
        raise ValueError("fully masked row")
    weights = torch.exp(scores - row_max)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    if mask is not None and late:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ values, weights


def test_05_6_masked_attention_right_and_wrong():
    assert ch05.ex6(_attention).passed
    late = ch05.ex6(lambda q, k, v, mask=None: _attention(q, k, v, mask, late=True))
    assert late.status == "wrong" and "before" in late.message
    no_raise = ch05.ex6(lambda q, k, v, mask=None: _attention(q, k, v, mask, check_dead=False))
    assert no_raise.status == "wrong" and "ValueError" in no_raise.message


# --- chapter 6 ----------------------------------------------------------------------------------


def test_06_1_encoding_of_position_2():
    assert ch06.ex1([math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)]).passed
    assert "swapped" in ch06.ex1([math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)]).message


def _shift_matrix(k, d, transpose=False):
    matrix = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        angle = k / 10000 ** (2 * i / d)
        block = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = block.T if transpose else block
    return matrix


def test_06_2_shift_matrix_and_its_transpose():
    assert ch06.ex2(_shift_matrix).passed
    verdict = ch06.ex2(lambda k, d: _shift_matrix(k, d, transpose=True))
    assert verdict.status == "wrong" and "transpose" in verdict.message


def test_06_3_rope_score_and_ignoring_positions():
    def rope_score_2d(query, key, n, m, theta):
        angle = (n - m) * theta  # kᵀ R((n−m)θ) q written out
        rotated = torch.stack([math.cos(angle) * query[0] - math.sin(angle) * query[1],
                               math.sin(angle) * query[0] + math.cos(angle) * query[1]])
        return float(key @ rotated)

    assert ch06.ex3(rope_score_2d).passed
    assert ch06.ex3(lambda q, k, n, m, theta: float(q @ k)).status == "wrong"


def test_06_4_position_costs():
    assert ch06.ex4((1_048_576, 2_097_152, 0)).passed
    assert "learns nothing" in ch06.ex4((1_048_576, 2_097_152, 64)).message


def test_06_5_equivariance_pair():
    layer, x, perm = ch06.equivariance_data()
    d = x.shape[-1]
    table = torch.zeros(5, d)
    for p in range(5):
        for i in range(d // 2):
            table[p, 2 * i] = math.sin(p / 10000 ** (2 * i / d))
            table[p, 2 * i + 1] = math.cos(p / 10000 ** (2 * i / d))
    with torch.no_grad():
        without = float((layer(x[perm]).outputs - layer(x).outputs[perm]).abs().max())
        moved = float((layer(x[perm] + table).outputs - layer(x + table).outputs[perm]).abs().max())
        carried = float((layer((x + table)[perm]).outputs - layer(x + table).outputs[perm]).abs().max())
    assert ch06.ex5((without, moved)).passed
    assert "do not move" in ch06.ex5((without, carried)).message


@pytest.mark.parametrize(("answer", "status"), [(46, "passed"), (45, "wrong"), (18, "wrong")])
def test_06_6_pairs_that_turn(answer, status):
    # closed form: L·10000^(−i/64) ≥ 2π ⇔ i ≤ 64·ln(4096/2π)/ln(10000) ≈ 45.03
    assert math.floor(64 * math.log(4096 / (2 * math.pi)) / math.log(10000)) + 1 == 46
    assert _status(ch06.ex6(answer)) == status


def test_05_7_position_ids():
    def right(real):
        return (real.long().cumsum(-1) - 1).clamp(min=0)

    assert ch05.ex7(right).passed
    verdict = ch05.ex7(lambda real: torch.arange(real.shape[1]).expand_as(real))
    assert verdict.status == "wrong" and "offset" in verdict.message
