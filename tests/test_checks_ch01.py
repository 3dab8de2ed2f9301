"""Checkers of chapter 1: right answers pass, typical mistakes get their specific hint.

The right answers are written here independently of the solution notebook (closed forms, plain
loops); the typical mistakes themselves are exercised by tests/test_mistakes.py.
"""

from __future__ import annotations

import torch

from tformer.checks import ch01


def test_01_1_untied_embedding_and_unembedding():
    assert ch01.ex1(2 * 32_000 * 4_096).passed
    assert "untied" in ch01.ex1(32_000 * 4_096).message


def test_01_2_first_two_merges():
    assert ch01.ex2(["ug", "un"]).passed
    assert ch01.ex2(["ug", "hu"]).status == "wrong"


def test_01_3_shapes_from_ids_to_logits():
    right = {"ids": (4, 1000), "X": (4, 1000, 768), "logits": (4, 1000, 50257)}
    assert ch01.ex3(right).passed
    assert ch01.ex3({**right, "X": torch.Size([4, 768, 1000])}).status == "wrong"


def test_01_4_to_01_7_right_answers():
    def embed(ids, table):
        flat = ids.reshape(-1)
        rows = torch.zeros(len(flat), table.shape[0], dtype=table.dtype)
        for p, t in enumerate(flat.tolist()):
            rows[p, t] = 1
        return (rows @ table).reshape(*ids.shape, table.shape[1])

    assert ch01.ex4(embed).passed
    renamed = torch.empty(6, 2)
    for t in range(6):
        renamed[int(ch01.RENAME_PERMUTATION[t])] = ch01.RENAME_TABLE[t]
    assert ch01.ex5(renamed).passed
    gradient = torch.zeros(6, 3)
    for p, t in enumerate(ch01.GRAD_IDS.tolist()):
        gradient[t] += ch01.GRAD_UPSTREAM[p]
    assert ch01.ex7(gradient).passed
