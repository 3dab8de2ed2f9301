"""Chapter 12's checkers: right answers pass, typical mistakes get their specific hint, stubs and
broken answers never raise."""

from __future__ import annotations

import torch

from tformer.checks import ch12


def previous_token_score(weights):
    T = weights.shape[-1]
    return float(sum(weights[t, t - 1] for t in range(1, T)) / (T - 1))


def induction_score(weights, L):
    T = weights.shape[-1]
    return float(sum(weights[t, t - L + 1] for t in range(L + 1, T)) / (T - L - 1))


def zero_ablation(head):
    def hook(outputs):
        outputs = outputs.clone()
        outputs[:, head] = 0.0
        return outputs

    return hook


def test_right_answers_pass():
    assert ch12.ex1(previous_token_score).passed
    assert ch12.ex2(induction_score).passed
    assert ch12.ex3((1 / 6 + 1 / 7 + 1 / 8 + 1 / 9) / 4).passed
    assert ch12.ex4(zero_ablation).passed
    assert ch12.ex5({"previous-token": (0, 1), "induction": (1, 0)}).passed
    assert ch12.ex7(ch12._by_hand()).passed
    model, tokens, length = ch12._untrained_lab()
    assert ch12.ex6(ch12._bos_share_of()(), model, tokens, length).passed


def test_typical_mistakes_get_hints():
    over_all = ch12.ex1(lambda w: float(sum(w[t, t - 1] for t in range(1, w.shape[-1])) / w.shape[-1]))
    assert over_all.status == "wrong" and "t = 1 … T − 1" in over_all.message
    transposed = ch12.ex1(lambda w: previous_token_score(w.T))
    assert transposed.status == "wrong" and "row = query" in transposed.message
    duplicate = ch12.ex2(lambda w, L: induction_score(torch.roll(w, 1, dims=-1), L))
    assert duplicate.status == "wrong"
    assert "1/L" in ch12.ex3(0.25).message
    in_place = ch12.ex4(lambda head: lambda x: x.index_fill_(1, torch.tensor([head]), 0.0))
    assert in_place.status == "wrong" and "in place" in in_place.message
    wrong_axis = ch12.ex4(lambda head: lambda x: x.clone().index_fill_(2, torch.tensor([head]), 0.0))
    assert "position 1, not head 1" in wrong_axis.message
    backwards = ch12.ex5({"previous-token": (1, 0), "induction": (0, 1)})
    assert backwards.status == "wrong" and "later layer" in backwards.message
    assert "percentage" in ch12.ex6(91.0).message
    assert ch12.ex6(0.5).status == "not attempted"  # no model passed
    assert "attends to itself" in ch12.ex7(ch12._by_hand(shift=0)).message


def test_stubs_and_garbage_never_raise():
    for checker in (ch12.ex1, ch12.ex2, ch12.ex3, ch12.ex4, ch12.ex5, ch12.ex6, ch12.ex7):
        assert checker(None).status == "not attempted"
        assert checker("nonsense").status in ("wrong", "error")

    def broken(*args):
        raise ZeroDivisionError("oops")

    assert ch12.ex1(broken).status in ("wrong", "error")
    assert ch12.ex2(lambda w, L: torch.ones(3)).status == "wrong"
    assert ch12.ex4(lambda head: None).status == "wrong"
    assert ch12.ex7((torch.eye(40), torch.ones(3, 3), torch.ones(3, 3))).status == "wrong"
    assert ch12.ex7((torch.eye(40), "W_Q", None)).status in ("wrong", "not attempted")
