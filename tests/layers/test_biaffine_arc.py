"""The arc scorer's batched path (for GPUs: every block padded into one product) gives the
per-block path's scores and gradients."""
import numpy as np
import pytest
from thinc.api import fix_random_seed

from spacy_hcparse.layers import biaffine_arc as arc_module
from spacy_hcparse.layers.biaffine_arc import _layout, biaffine_arc


def run(batched: bool, monkeypatch, blocks, d_scores):
    monkeypatch.setattr(arc_module, "BATCHED", batched)
    fix_random_seed(0)
    model = biaffine_arc(width=8, dropout=0.0)
    model.initialize(X=blocks)
    rng = np.random.default_rng(1)
    for name in ("U", "u", "E", "e"):
        model.set_param(name, rng.normal(size=model.get_param(name).shape).astype("f"))
    scores, backprop = model.begin_update(blocks)
    d_blocks = backprop(d_scores)
    grads = {(i, name): node.get_grad(name).copy() for i, node in enumerate(model.walk()) for name in node.param_names
             if node.has_grad(name)}
    return scores, d_blocks, grads


@pytest.mark.parametrize("sizes", [[5, 3], [1], [1, 12, 2, 1, 40, 7], [33]])
def test_batched_matches_per_block(monkeypatch, sizes):
    rng = np.random.default_rng(len(sizes))
    blocks = [rng.normal(size=(n, 6)).astype("f") for n in sizes]
    d_scores = [rng.normal(size=(n, n)).astype("f") for n in sizes]
    per_block = run(False, monkeypatch, blocks, d_scores)
    batched = run(True, monkeypatch, blocks, d_scores)
    for a, b in zip(per_block[0], batched[0]):
        assert a.shape == b.shape and b.flags["C_CONTIGUOUS"]
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for a, b in zip(per_block[1], batched[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)
    assert per_block[2].keys() == batched[2].keys()
    for key in per_block[2]:
        np.testing.assert_allclose(per_block[2][key], batched[2][key], rtol=1e-5, atol=1e-4, err_msg=str(key))


def test_layout_indexes_each_block():
    sizes = [2, 3, 1]
    pos, entries, head_rows, bucket_cells = _layout(sizes)
    assert pos.tolist() == [0, 1, 3, 4, 5, 6]  # L = 3: block b's row i at b * 3 + i
    assert len(entries) == len(head_rows) == len(bucket_cells) == 4 + 9 + 1
    assert entries[:4].tolist() == [0, 1, 3, 4]  # block 0's (h, m) in the (B, 3, 3) scores
    assert entries[-1] == 2 * 9  # block 2's only entry
    assert head_rows[4:7].tolist() == [2, 2, 2]
