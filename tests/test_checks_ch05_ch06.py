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


def _shift_matrix(k, d, transpose=False, concat=True):
    # sines-then-cosines layout: the pair (i, i + d/2) gets one rotation
    matrix = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        angle = k / 10000 ** (2 * i / d)
        block = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        block = block.T if transpose else block
        index = [i, i + d // 2] if concat else [2 * i, 2 * i + 1]
        for a in range(2):
            for b in range(2):
                matrix[index[a], index[b]] = block[a, b]
    return matrix


def test_06_2_shift_matrix_of_the_concatenated_layout():
    assert ch06.ex2(_shift_matrix).passed
    table = torch.tensor([[math.sin(p / 10000 ** (2 * i / 8)) for i in range(4)]
                          + [math.cos(p / 10000 ** (2 * i / 8)) for i in range(4)]
                          for p in range(10)], dtype=torch.float64)
    torch.testing.assert_close(table[:-3] @ _shift_matrix(3, 8), table[3:])  # the reference
    verdict = ch06.ex2(lambda k, d: _shift_matrix(k, d, transpose=True))
    assert verdict.status == "wrong" and "transpose" in verdict.message
    verdict = ch06.ex2(lambda k, d: _shift_matrix(k, d, concat=False))
    assert verdict.status == "wrong" and "interleaved layout" in verdict.message


def test_06_3_score_from_the_offset():
    def score_from_offset(query, key, delta, theta):
        # the reference: rotate the query by delta·θ, the key not at all (only n − m matters)
        angle = delta * theta
        rotated = torch.stack([math.cos(angle) * query[0] - math.sin(angle) * query[1],
                               math.sin(angle) * query[0] + math.cos(angle) * query[1]])
        return float(key @ rotated)

    assert ch06.ex3(score_from_offset).passed
    assert ch06.ex3(lambda q, k, delta, theta: float(q @ k)).status == "wrong"


def test_06_4_position_costs():
    assert ch06.ex4((2_097_152, 512, 0, 0)).passed
    assert "learns nothing" in ch06.ex4((2_097_152, 512, 0, 64)).message
    assert "shared" in ch06.ex4((2_097_152, 12_288, 0, 0)).message


def test_06_5_shift_every_position():
    x, w_q, w_k = ch06.shift_data()

    def rotate(v, positions):  # interleaved RoPE from 2 × 2 rotations, per row
        out = v.clone()
        for row, p in enumerate(positions.tolist()):
            for i in range(v.shape[1] // 2):
                a = p / 10000 ** (2 * i / v.shape[1])
                c, s = math.cos(a), math.sin(a)
                x0, x1 = v[row, 2 * i], v[row, 2 * i + 1]
                out[row, 2 * i], out[row, 2 * i + 1] = c * x0 - s * x1, s * x0 + c * x1
        return out

    def rope(pos):
        return rotate(x @ w_q, pos) @ rotate(x @ w_k, pos).T

    start, moved = torch.arange(5), torch.arange(100, 105)
    table = torch.zeros(105, 8, dtype=torch.float64)
    for p in range(105):
        for i in range(4):
            table[p, 2 * i] = math.sin(p / 10000 ** (2 * i / 8))
            table[p, 2 * i + 1] = math.cos(p / 10000 ** (2 * i / 8))

    def added(rows):
        return ((x + rows) @ w_q) @ ((x + rows) @ w_k).T

    rope_gap = float((rope(moved) - rope(start)).abs().max())
    added_gap = float((added(table[100:]) - added(table[:5])).abs().max())
    assert rope_gap < 1e-9 < 1e-3 < added_gap
    assert ch06.ex5((rope_gap, added_gap)).passed
    assert "100 … 104" in ch06.ex5((rope_gap, 0.0)).message


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


# --- right answers in other legitimate forms, and shortcuts the statements forbid -------------


def test_05_5_a_python_float_is_asked_for():
    logits, targets, lengths = ch05.padding_loss_data()
    real = torch.arange(6) < lengths[:, None]
    loss = F.cross_entropy(logits.reshape(-1, 7), targets.masked_fill(~real, -100).reshape(-1))
    assert ch05.ex5(loss.item()).passed
    verdict = ch05.ex5(loss)
    assert verdict.status == "wrong" and "Python float" in verdict.message


def test_05_6_elementary_operations_only():
    def with_softmax(queries, keys, values, mask=None):
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
        if mask is not None:
            if not mask.any(dim=-1).all():
                raise ValueError("a query row has every key masked")
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ values, weights

    def named_softmax(queries, keys, values, mask=None):  # a local called softmax is fine
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        row_max = scores.amax(dim=-1, keepdim=True)
        if torch.isneginf(row_max).any():
            raise ValueError("a query row has every key masked")
        exponentials = torch.exp(scores - row_max)
        softmax = exponentials / exponentials.sum(dim=-1, keepdim=True)
        return softmax @ values, softmax

    verdict = ch05.ex6(with_softmax)
    assert verdict.status == "wrong" and "elementary operations" in verdict.message
    assert ch05.ex6(named_softmax).passed


def test_05_7_integer_ids_without_a_loop_over_the_batch():
    def over_the_batch(real):
        rows = []
        for row in real:
            rows.append((row.long().cumsum(-1) - 1).clamp(min=0))
        return torch.stack(rows)

    def over_the_positions(real):  # a loop over T is not a loop over the batch
        out = torch.zeros(real.shape, dtype=torch.long)
        count = torch.zeros(real.shape[0], dtype=torch.long)
        for t in range(real.shape[1]):
            out[:, t] = torch.where(real[:, t], count, 0)
            count = count + real[:, t].long()
        return out

    assert "Python loop" in ch05.ex7(over_the_batch).message
    assert ch05.ex7(over_the_positions).passed
    assert ch05.ex7(lambda real: (real.int().cumsum(-1) - 1).clamp(min=0)).passed
    floats = ch05.ex7(lambda real: (real.float().cumsum(-1) - 1).clamp(min=0))
    assert floats.status == "wrong" and "integer tensor" in floats.message


def test_06_7_angles_in_float32_are_right():
    def apply_rope(x, positions, convention="interleaved"):
        n, d = x.shape
        angles = positions[:, None] * 10000.0 ** (-2 * torch.arange(d // 2) / d)  # float32
        if convention == "interleaved":
            cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
            rot = torch.stack((-x[:, 1::2], x[:, 0::2]), -1).reshape(n, d)
        else:
            cos, sin = angles.cos().repeat(1, 2), angles.sin().repeat(1, 2)
            rot = torch.cat((-x[:, d // 2:], x[:, : d // 2]), -1)
        return x * cos + rot * sin

    assert ch06.ex7(apply_rope).passed


def test_06_counts_are_integers():
    assert ch06.ex4((2_097_152, 512, 0, 0)).passed
    assert "float" in ch06.ex4((2_097_152.0, 512.0, 0.0, 0.0)).message
    assert ch06.ex6(torch.tensor(46)).passed
    assert "float" in ch06.ex6(46.0).message
    assert "bound on i" in ch06.ex6(45.03).message
