"""Low-rank trilinear scorer for higher-order factors over index triples.

Used twice: for sibling factors ``(h, s, m)`` and grandparent factors ``(g, h, m)``. Each role has
its own ReLU projection to ``rank`` dimensions and a triple scores
``sum_r w[r] * A[i, r] * B[j, r] * C[k, r]`` (a rank-``rank`` CP tensor, as in low-rank tensor
parsers). ``w`` starts at zero, like a biaffine core: the factors begin silent and the encoder
only feels them once they have learned something.
With ``null_middle`` the middle role of a triple ``(i, i, k)`` (``s == h``: the closest sibling)
uses a learned vector instead of the projection of word ``i``.
"""
from typing import Callable, List, Optional, Tuple

from thinc.api import Model, Relu, with_array
from thinc.types import Floats1d, Floats2d, Ints2d

InT = Tuple[List[Floats2d], List[Ints2d]]


def trilinear(name: str, rank: int = 64, dropout: float = 0.2, null_middle: bool = False) -> Model[InT, List[Floats1d]]:
    """Scores for (T, 3) index triples into each (n+1, d) block, one (T,) array per block."""
    roles = [with_array(Relu(nO=rank, dropout=dropout, normalize=False)) for _ in range(3)]
    return Model(
        name,
        forward,
        init=init,
        layers=roles,
        params={"null": None, "w": None},
        dims={"nH": rank},
        attrs={"null_middle": null_middle},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> Model:
    blocks = None if X is None else X[0]
    for layer in model.layers:
        layer.initialize(X=blocks)
    # Small non-zero start so the product has a gradient in every factor.
    rank = model.get_dim("nH")
    model.set_param("null", model.ops.xp.full((rank,), 0.1, dtype="f"))
    model.set_param("w", model.ops.alloc1f(rank))
    return model


def forward(model: Model, X: InT, is_train: bool) -> Tuple[List[Floats1d], Callable]:
    blocks, triples = X
    projected, backprops = zip(*(layer(blocks, is_train) for layer in model.layers))
    null = model.get_param("null")
    w = model.get_param("w")
    use_null = model.attrs["null_middle"]
    cached = []
    scores = []
    for b, idx in enumerate(triples):
        A = projected[0][b][idx[:, 0]]
        B = projected[1][b][idx[:, 1]]
        C = projected[2][b][idx[:, 2]]
        is_null = (idx[:, 0] == idx[:, 1]) if use_null else None
        if use_null:
            B = B.copy()
            B[is_null] = null
        cached.append((A, B, C, is_null))
        scores.append((A * B * C) @ w)

    def backprop(d_scores: List[Floats1d]) -> List[Floats2d]:
        ops = model.ops
        d_proj = [[ops.alloc2f(*p.shape) for p in role] for role in projected]
        d_null = ops.alloc1f(null.shape[0])
        dw = ops.alloc1f(w.shape[0])
        for b, (idx, (A, B, C, is_null), dS) in enumerate(zip(triples, cached, d_scores)):
            dS = ops.xp.ascontiguousarray(dS[:, None], dtype="f")
            dw += (dS * A * B * C).sum(axis=0)
            dSw = dS * w[None, :]
            dA, dB, dC = dSw * B * C, dSw * A * C, dSw * A * B
            if use_null:
                d_null += dB[is_null].sum(axis=0)
                dB[is_null] = 0.0
            for role, d_role in enumerate((dA, dB, dC)):
                ops.scatter_add(d_proj[role][b], ops.xp.ascontiguousarray(idx[:, role], dtype="i"), d_role)
        model.inc_grad("null", d_null)
        model.inc_grad("w", dw)
        d_blocks = [bp(d) for bp, d in zip(backprops, d_proj)]
        return [sum(parts) for parts in zip(*d_blocks)]

    return scores, backprop
