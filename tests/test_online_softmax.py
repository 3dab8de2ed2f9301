"""tformer.efficient.online_softmax_states against a softmax over the keys seen so far."""

import pytest
import torch

from tformer.efficient import online_softmax_states


@pytest.mark.parametrize("tile_size", [1, 3, 4, 10, 50])
def test_every_state_is_the_softmax_of_the_prefix(tile_size):
    torch.manual_seed(tile_size)
    scores = torch.randn(10, dtype=torch.float64) * 5
    values = torch.randn(10, 3, dtype=torch.float64)
    states = online_softmax_states(scores, values, tile_size)
    assert len(states) == -(-10 // tile_size)
    for state in states:
        seen = int(state["seen"])
        prefix = scores[:seen]
        assert state["max"] == prefix.max()
        torch.testing.assert_close(state["normaliser"], torch.exp(prefix - prefix.max()).sum())
        torch.testing.assert_close(state["output"], torch.softmax(prefix, 0) @ values[:seen])


def test_huge_scores_do_not_overflow():
    scores = torch.tensor([1000.0, 999.0, -1000.0, 1001.0])
    values = torch.eye(4)
    final = online_softmax_states(scores, values, 2)[-1]["output"]
    torch.testing.assert_close(final, torch.softmax(scores, 0))


def test_errors():
    with pytest.raises(ValueError, match=r"need scores \(T_k,\)"):
        online_softmax_states(torch.zeros(3), torch.zeros(4, 2), 2)
    with pytest.raises(ValueError, match="tile_size"):
        online_softmax_states(torch.zeros(3), torch.zeros(3, 2), 0)
