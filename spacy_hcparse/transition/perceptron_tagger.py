"""Hashed perceptron tagger layer: word attribute rows of spans -> tag ids.

Input: ``(attrs, offsets)``, the parser's word attribute rows (``transition.templates.token_attrs``)
of spans one after another, span ``s`` at rows ``offsets[s]..offsets[s+1]-1`` with the root first.
Output: ``(len(attrs),)`` int64 tag ids (``0..nO-1``), ``-1`` on root rows. Greedy, left to right
(``transition.tagging``). ``W`` is flat hashed weights as in ``layers.sparse_linear``
(``len(W) == nB + nO``); it has no gradient: ``transition.tagger_trainer`` trains it and the
averaged weights are set with ``set_param("W", ...)``.
"""
from typing import Callable, Optional, Tuple

import numpy as np
from thinc.api import Model

from .tagging import tag_spans, tagger_templates

TaggerInput = Tuple[np.ndarray, np.ndarray]


def perceptron_tagger(n_buckets: int = 2**20, templates: str = "base", nO: Optional[int] = None) -> Model:
    """``templates``: a set of ``transition.tagging.TAGGER_TEMPLATE_SETS``; ``nO``: the number of
    tags; ``n_buckets``: the hash table size (a power of two)."""
    if n_buckets < 1 or n_buckets & (n_buckets - 1):
        raise ValueError(f"n_buckets must be a power of two, got {n_buckets}")
    tagger_templates(templates)  # an unknown set fails here, at config time
    return Model(
        "hc_perceptron_tagger", forward, init=init, params={"W": None},
        dims={"nB": n_buckets, "nO": nO}, attrs={"templates": templates},
    )


def init(model: Model, X=None, Y=None) -> Model:
    if model.get_dim("nO") is None:
        raise ValueError("hc_perceptron_tagger needs nO (the number of tags) before initialization")
    model.set_param("W", np.zeros(model.get_dim("nB") + model.get_dim("nO"), dtype="f"))
    return model


def forward(model: Model, X: TaggerInput, is_train: bool) -> Tuple[np.ndarray, Callable]:
    attrs, offsets = X
    out = np.empty(len(attrs), dtype=np.int64)
    tag_spans(
        attrs, offsets, model.get_param("W"), tagger_templates(model.attrs["templates"]),
        np.int64(model.get_dim("nB") - 1), model.get_dim("nO"), out,
    )

    def backprop(dY):
        raise ValueError("hc_perceptron_tagger has no gradient: transition.tagger_trainer trains it")

    return out, backprop
