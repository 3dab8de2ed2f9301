"""Chapter 8's trained claims about pre- and post-norm stacks, for two seeds each.

The chapter shows three seeds and ``bench/ch08_prepost_seeds.py`` counts ten; this test asserts
the claims the text states as facts (10 of 10 seeds in the sweep) for seeds 0 and 1.
"""

from __future__ import annotations

import pytest
import torch

from tformer.normalisation import make_stack, probe_gradients, train_stack


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_at_initialisation(seed):
    top = {(norm, n): probe_gradients(make_stack(norm, n, seed))[-1]
           for norm in ("pre", "post") for n in (2, 16)}
    assert top["pre", 16] < top["pre", 2]  # pre-norm's top layer shrinks with depth
    assert 0.8 < top["post", 16] / top["post", 2] < 1.25  # post-norm's does not
    pre = probe_gradients(make_stack("pre", 6, seed))
    post = probe_gradients(make_stack("post", 6, seed))
    assert pre[0] > pre[-1]  # largest near the input (NormFormer's observation)
    assert max(post) / min(post) < 1.25  # level across the layers


@pytest.mark.parametrize("seed", [0, 1])
def test_unit_scale_embeddings_remove_both_effects(seed):
    plain, scaled = make_stack("pre", 2, seed), make_stack("pre", 2, seed, embedding_scale=50.0)
    torch.testing.assert_close(scaled.token_embedding.weight, 50 * plain.token_embedding.weight)
    torch.testing.assert_close(scaled.blocks[0].mlp.fc_in.weight, plain.blocks[0].mlp.fc_in.weight)
    assert 0.9 < scaled.token_embedding.weight.detach().std().item() < 1.1
    top = {(norm, n): probe_gradients(make_stack(norm, n, seed, embedding_scale=50.0))[-1]
           for norm in ("pre", "post") for n in (2, 16)}
    assert 0.8 < top["pre", 16] / top["pre", 2] < 1.25  # no fall with depth
    assert 0.7 < top["post", 16] / top["pre", 16] < 1.4  # post-norm about as large


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_trained_stacks(seed):
    pre_cold = train_stack("pre", 6, 0, seed)
    pre_warm = train_stack("pre", 6, 20, seed)
    assert pre_warm.final_loss < pre_cold.final_loss  # warm-up helps pre-norm at L = 6
    assert pre_cold.gradients_trained[0] > pre_cold.gradients_trained[-1]
    post_cold = train_stack("post", 2, 0, seed)
    post_warm = train_stack("post", 2, 20, seed)
    assert post_warm.final_loss > post_cold.final_loss  # and never post-norm here
    assert train_stack("pre", 2, 20, seed).final_loss < post_warm.final_loss
    assert len(pre_cold.losses) == 80 and all(map(torch.isfinite, torch.tensor(pre_cold.losses)))
