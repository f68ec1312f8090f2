"""Hypothesis over malformed score arrays for every public decoder: wrong shapes, dtypes,
NaN/+inf in used arc cells (-inf there is an absent arc, valid), NaN/inf in the cubes,
mismatched factor cubes. Each call either returns a valid tree (the input
was fine) or raises ValueError saying what is wrong; nothing else escapes, nothing hangs."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import (
    count_local_optima, decode_dual, decode_eisner, decode_hill_climb, decode_mst, tree_problem,
)

DECODERS = {
    "mst": lambda arc, sib, grand: decode_mst(arc),
    "eisner": lambda arc, sib, grand: decode_eisner(arc, sib),
    "hill_climb": lambda arc, sib, grand: decode_hill_climb(arc, sib, grand, time_limit=0.2, max_restarts=3, min_restarts=1).heads,
    "dual": lambda arc, sib, grand: decode_dual(arc, sib, grand, time_limit=0.2, max_iter=10).heads,
    "local_optima": lambda arc, sib, grand: count_local_optima(arc, max_count=50),
}
DTYPES = ["float64", "float32", "int64", "bool", "complex", "str", "object"]
BAD_VALUES = [np.nan, np.inf, -np.inf]
BAD_ARC_VALUES = [np.nan, np.inf]


@st.composite
def score_arrays(draw):
    """(arc, sib, grand, what is wrong or None)."""
    n = draw(st.integers(0, 7))
    size = n + 1
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    fault = draw(st.sampled_from([None, "shape", "dtype", "value", "cube_shape", "cube_value", "ragged",
                                  "absent"]))
    arc = rng.normal(size=(size, size))
    sib = rng.normal(size=(size,) * 3) if draw(st.booleans()) else None
    grand = rng.normal(size=(size,) * 3) if draw(st.booleans()) else None
    if fault == "shape":
        shape = draw(st.sampled_from([(size, size + 1), (size,), (size, size, 2), (0, 0), ()]))
        arc = rng.normal(size=shape)
    elif fault == "dtype":
        dtype = draw(st.sampled_from(["complex", "str", "object"]))
        arc = arc.astype(dtype) if dtype != "object" else np.array([[object()] * size] * size, dtype=object)
    elif fault == "value" and n >= 1:
        h, m = draw(st.integers(0, n)), draw(st.integers(1, n))
        if h == m:
            h = 0
        arc[h, m] = draw(st.sampled_from(BAD_ARC_VALUES))
    elif fault == "absent":  # -inf arcs are absent arcs: a valid input, even with no tree left
        arc[rng.random((size, size)) < draw(st.sampled_from([0.3, 0.7, 1.0]))] = -np.inf
        fault = None
    elif fault == "cube_shape":
        sib = rng.normal(size=(size, size, size + 1))
    elif fault == "cube_value":
        sib = rng.normal(size=(size,) * 3)
        sib[tuple(draw(st.integers(0, n)) for _ in range(3))] = draw(st.sampled_from(BAD_VALUES))
    elif fault == "ragged":
        arc = [[0.0] * size, [0.0]] if size > 1 else [[0.0, 1.0], [0.0]]
    else:
        dtype = draw(st.sampled_from(["float64", "float32", "int64", "bool"]))
        arc = (arc * 3).astype(dtype)
        if fault == "value":
            fault = None  # n == 0: nothing to poison
    return arc, sib, grand, fault


MESSAGES = {
    "shape": "shape|square|at least one row",
    "dtype": "numeric|real-valued",
    "value": "NaN or inf",
    "cube_shape": "sib must have shape",
    "cube_value": "NaN or inf",
    "ragged": "numeric array|square",
}


@pytest.mark.parametrize("name", list(DECODERS))
@settings(max_examples=60, deadline=None)
@given(case=score_arrays())
def test_malformed_scores_raise_value_errors_that_say_what_is_wrong(name, case):
    arc, sib, grand, fault = case
    if name == "mst" and fault in ("cube_shape", "cube_value"):
        fault = None  # MST ignores the higher-order factors
    if name == "local_optima" and fault in ("cube_shape", "cube_value"):
        fault = None
    if name == "eisner" and fault == "cube_value" and sib is None:
        fault = None
    try:
        out = DECODERS[name](arc, sib, grand)
    except ValueError as err:
        assert fault is not None, f"valid input refused: {err}"
        assert re.search(MESSAGES[fault], str(err)), (fault, str(err))
        return
    assert fault is None, f"{fault} accepted"
    if name != "local_optima":
        assert tree_problem(np.asarray(out)) == ""
