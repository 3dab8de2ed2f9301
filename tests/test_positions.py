"""tformer.positions against closed forms: eq. 12.6, the shift identity, RoPE's relative scores."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tformer.attention import SelfAttention
from tformer.positions import (
    LearnedPositions,
    apply_rope,
    rope_frequencies,
    rotation_matrix,
    sinusoidal_positions,
    sinusoidal_shift_matrix,
)


def test_sinusoidal_closed_form():
    table = sinusoidal_positions(50, 16).double()
    for p in (0, 1, 7, 49):
        for i in range(8):
            angle = p / 10000 ** (2 * i / 16)
            assert table[p, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[p, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
    expected = [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]
    assert sinusoidal_positions(2, 4)[1].tolist() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("k", [1, 5, 37])
def test_shift_is_a_fixed_linear_map(k):
    table = sinusoidal_positions(100, 32).double()
    shift = sinusoidal_shift_matrix(k, 32).double()
    torch.testing.assert_close(table[: 100 - k] @ shift, table[k:], atol=1e-5, rtol=0)


def test_rotation_matrix_composition():
    alpha, beta = 0.3, 1.1
    torch.testing.assert_close(
        rotation_matrix(alpha).T @ rotation_matrix(beta), rotation_matrix(beta - alpha)
    )


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(0, 500), m=st.integers(0, 500), shift=st.integers(-200, 2000),
    d_k=st.sampled_from([2, 4, 8, 64]), seed=st.integers(0, 1000),
)
def test_rope_score_depends_only_on_offset(n, m, shift, d_k, seed):
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(1, d_k, generator=generator, dtype=torch.float64)
    key = torch.randn(1, d_k, generator=generator, dtype=torch.float64)

    def score(position_q, position_k):
        rotated_q = apply_rope(query, torch.tensor([position_q]))
        rotated_k = apply_rope(key, torch.tensor([position_k]))
        return (rotated_q * rotated_k).sum()

    if n + shift >= 0 and m + shift >= 0:
        torch.testing.assert_close(score(n, m), score(n + shift, m + shift), atol=1e-9, rtol=1e-9)


def test_rope_matches_explicit_block_rotation_and_preserves_norms():
    x = torch.randn(3, 5, 6, dtype=torch.float64)
    rotated = apply_rope(x)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    theta = rope_frequencies(6)
    for p in range(5):
        for i in range(3):
            pair = x[:, p, 2 * i : 2 * i + 2]
            expected = pair @ rotation_matrix(p * theta[i]).T  # rotate the column vector
            torch.testing.assert_close(rotated[:, p, 2 * i : 2 * i + 2], expected)


def test_rope_errors():
    with pytest.raises(ValueError, match="positive even number"):
        apply_rope(torch.randn(4, 5))
    with pytest.raises(ValueError, match=r"positions must have shape \(T,\)"):
        apply_rope(torch.randn(4, 6), torch.arange(3))


def test_learned_positions_limit():
    table = LearnedPositions(8, 4)
    assert table(8).shape == (8, 4)
    assert sum(p.numel() for p in LearnedPositions(1024, 768).parameters()) == 786_432
    with pytest.raises(ValueError, match="cannot represent longer inputs"):
        table(5, offset=4)


def test_permutation_equivariance_breaks_with_positions():
    torch.manual_seed(0)
    layer = SelfAttention(8, 8).double()
    x = torch.randn(6, 8, dtype=torch.float64)
    permutation = torch.tensor([2, 0, 1, 5, 3, 4])
    torch.testing.assert_close(layer(x[permutation]).outputs, layer(x).outputs[permutation])
    positions = sinusoidal_positions(6, 8).double()
    with_positions = layer(x + positions).outputs[permutation]
    permuted = layer(x[permutation] + positions).outputs
    assert not torch.allclose(with_positions, permuted, atol=1e-3)


# --- RoPE conventions, ALiBi, T5 relative biases (chapter 6) -------------------------------


def _rope_by_matrices(x, positions_, pairs, base=10000.0):
    """Reference: build each position's (d, d) rotation matrix from 2x2 blocks on index pairs."""
    d = x.shape[-1]
    out = []
    for row, p in zip(x, positions_):
        R = torch.eye(d, dtype=torch.float64)
        for i, (a, b) in enumerate(pairs):
            angle = float(p) * base ** (-2 * i / d)
            c, s = math.cos(angle), math.sin(angle)
            R[a, a], R[a, b], R[b, a], R[b, b] = c, -s, s, c
        out.append(R @ row)
    return torch.stack(out)


@pytest.mark.parametrize("convention", ["interleaved", "halves"])
def test_apply_rope_conventions_match_rotation_matrices(convention):
    from tformer.positions import apply_rope

    d = 8
    pairs = [(2 * i, 2 * i + 1) for i in range(d // 2)] if convention == "interleaved" else [
        (i, i + d // 2) for i in range(d // 2)
    ]
    x = torch.randn(5, d, dtype=torch.float64)
    pos = torch.tensor([0, 1, 3, 10, 200])
    torch.testing.assert_close(
        apply_rope(x, pos, convention=convention), _rope_by_matrices(x, pos, pairs)
    )


def test_rope_conventions_differ_and_agree_after_the_permutation():
    from tformer.positions import apply_rope, interleaved_to_halves

    torch.manual_seed(0)
    q, k = torch.randn(2, 6, 16, dtype=torch.float64)
    perm = interleaved_to_halves(16)

    def scores(q, k, convention):
        return apply_rope(q, convention=convention) @ apply_rope(k, convention=convention).T

    assert not torch.allclose(scores(q, k, "interleaved"), scores(q, k, "halves"))
    torch.testing.assert_close(scores(q, k, "interleaved"), scores(q[:, perm], k[:, perm], "halves"))


def test_alibi_slopes_are_the_papers_geometric_sequences():
    from tformer.positions import alibi_slopes

    def powers(*exponents):
        return torch.tensor([2.0**-e for e in exponents], dtype=torch.float64)

    torch.testing.assert_close(alibi_slopes(8).double(), powers(*range(1, 9)))
    torch.testing.assert_close(alibi_slopes(4).double(), powers(2, 4, 6, 8))
    # 6 heads: the 4-head slopes, then every other slope of 8 heads (2^-1, 2^-3)
    torch.testing.assert_close(alibi_slopes(6).double(), powers(2, 4, 6, 8, 1, 3))


def test_alibi_bias_is_minus_slope_times_distance():
    from tformer.positions import alibi_bias

    bias = alibi_bias(2, 3)
    assert bias.shape == (2, 3, 3)
    torch.testing.assert_close(bias[0, 2], torch.tensor([-2 * 2.0**-4, -(2.0**-4), 0.0]))
    torch.testing.assert_close(alibi_bias(2, 1, 3)[:, 0], bias[:, 2])  # cache: last query


def test_t5_buckets_by_hand():
    from tformer.positions import t5_relative_position_bucket

    relative = torch.tensor([0, -1, 1, -7, -8, -20, -128, -1000, 20])
    # exact up to 7; then 8 + floor(log(r/8)/log(16)·8), at most 15; keys after the query +16
    expected = [0, 1, 17, 7, 8, 8 + int(math.log(20 / 8) / math.log(16) * 8), 15, 15,
                16 + 8 + int(math.log(20 / 8) / math.log(16) * 8)]
    assert t5_relative_position_bucket(relative).tolist() == expected
    causal = t5_relative_position_bucket(torch.tensor([3, 0, -5]), bidirectional=False)
    assert causal.tolist() == [0, 0, 5]


def test_relative_position_bias_reads_the_table_per_head():
    from tformer.positions import relative_position_bias, t5_relative_position_bucket

    table = torch.randn(32, 3)
    bias = relative_position_bias(table, 4, 5)
    assert bias.shape == (3, 4, 5)
    assert bias[1, 2, 0] == table[int(t5_relative_position_bucket(torch.tensor(-2))), 1]
