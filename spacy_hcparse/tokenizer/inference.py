"""Prediction with the tokenizer's model (``model.build_char_model``) in fewer passes over memory.

``predict_probs(model, X)`` returns what ``model.predict(X)`` returns, up to the order of float
summation. The embedding and the projection after it are folded together: the projection is
linear in each embedding table, so each table is multiplied by its columns of the projection's
weights once (``folded_tables``), and a piece's projection is the sum of its rows of those
tables (4 per hashed column, 1 per other; ``_gather_maxout_norm``), not a product with the
concatenated embeddings; pieces with the same features are projected once (``unique_rows``).
Each residual block runs ``TILE_ROWS`` rows at a time, so that its window and product stay in
the processor's cache: the window (``_window_rows``), one matrix product (numpy's BLAS, as
``blas.use_blas`` sets the model's), and one numba kernel for the bias, the maxout, the layer
norm and the residual sum (``_norm_rows``). The Maxouts' outputs are laid out piece-major
(``_piece_major``), so that the maxout reads contiguous values, and the layer norm sums eight
rows side by side, each in its own order; the softmax repeats the thinc layer's operations on
the transposed scores (``_softmax_rows``). A model of another structure goes through
``model.predict`` unchanged.

The folded tables are kept from one call to the next in a ``Folds`` dict, with copies of the
weights they were folded from: ``kept_folds`` hands it back while the model's weights are still
those (compared exactly, since training updates them in place), so a tokenizer folds once for as
long as its weights stay, not once per call.
"""
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Ragged

from ..compiling import njit

LAYER_NORM_EPS = 1e-08  # thinc's LayerNorm: var + 1e-08
# The kernels' float maths may be contracted and approximated, but sums run in the order written
# (no "reassoc"), so the output does not depend on how the compiler vectorizes them.
ORDERED_MATH = {"nsz", "arcp", "contract", "afn"}
GATHER_ROWS = 256  # pieces whose embedding sums are normalized together

Block = Tuple[Model, Model, Model]  # (dilated_window, maxout, layernorm)
TILE_ROWS = 1024  # rows of a residual block computed together


Embedding = Tuple[Model, int]  # a hashembed or embed node and the feature column it reads


# "tables": ``folded_tables`` of the model; "weights": copies of what they were folded from
Folds = Dict[str, Any]


def predict_probs(model: Model, X: Ragged, folds: Optional[Folds] = None) -> np.ndarray:
    """``model.predict(X)`` for a ``build_char_model`` model: (n_pieces, n_labels) probabilities.
    ``folds``: where ``folded_tables`` are kept from one call to the next, which the caller hands
    over only while the weights stay the same (``kept_folds``); None: folded anew."""
    layers = _layers(model)
    if layers is None:
        return model.ops.to_numpy(model.predict(X))
    tables, (maxout, norm), blocks = layers
    ids = np.asarray(X.dataXd, dtype=np.uint64)
    lengths = np.asarray(X.lengths, dtype=np.int64)
    if folds is None or "tables" not in folds:
        folded = folded_tables(tables, maxout)
        if folds is not None:
            folds["tables"] = folded
            folds["weights"] = [np.array(w, copy=True) for w in _folded_weights(tables, maxout)]
    folded, rows = folds["tables"] if folds is not None else folded
    unique, inverse = unique_rows(ids)  # a piece's projection depends on its features alone
    data = _gather_maxout_norm(folded, _table_rows(tables, unique, rows), _piece_major(maxout)[1],
                               np.asarray(norm.get_param("G"), dtype=np.float32),
                               np.asarray(norm.get_param("b"), dtype=np.float32))
    if inverse is not None:
        data = data[inverse]
    ends = np.cumsum(lengths)
    first = np.repeat(ends - lengths, lengths)  # per row, the first and the last + 1 of its sequence
    last = np.repeat(ends, lengths)
    for window, maxout, norm in blocks:
        data = _residual_block(maxout, norm, window.attrs["dilation"], data, first, last)
    return _softmax_rows(model.layers[-1], data)


def _softmax_rows(softmax: Model, X: np.ndarray) -> np.ndarray:
    """``softmax.predict(X)`` for thinc's Softmax (``ops.affine``, then ``ops.softmax``) with the
    same float operations in the same order, on the scores transposed (a contiguous row per
    label, not a row of a few labels per piece): the max, the exp, and the sum as numpy sums a
    row of fewer than 8 values (in order), then the division.
    Another Softmax (a temperature, unnormalized, 8 labels or more) goes through ``predict``."""
    nO = softmax.get_dim("nO")
    if softmax.attrs.get("softmax_temperature") != 1.0 or not softmax.attrs.get("softmax_normalize") \
            or not 2 <= nO < 8:
        return softmax.ops.to_numpy(softmax.predict(X))
    scores = softmax.ops.affine(X, softmax.get_param("W"), softmax.get_param("b"))
    T = np.ascontiguousarray(softmax.ops.to_numpy(scores).T)
    top = T[0].copy()
    for row in T[1:]:
        np.maximum(top, row, out=top)
    T -= top
    np.exp(T, out=T)
    total = T[0].copy()
    for row in T[1:]:
        total += row
    T /= total
    return np.ascontiguousarray(T.T)


def unique_rows(ids: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """(the distinct rows of ``ids``, per row of ``ids`` its row among them), or (``ids``, None)
    where the rows' keys (a wrapping polynomial of the columns) would merge two distinct rows."""
    if len(ids) < 2:
        return ids, None
    with np.errstate(over="ignore"):
        key = ids[:, 0].copy()
        for column in range(1, ids.shape[1]):
            key *= _KEY_MUL
            key += ids[:, column]
    order = np.argsort(key)
    ordered = key[order]
    new = np.empty(len(key), dtype=bool)  # per sorted key: the first of its run
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    unique = ids[order[new]]
    if not np.array_equal(unique[inverse], ids):
        return ids, None
    return unique, inverse


_KEY_MUL = np.uint64(0x100000001B3)


def kept_folds(model: Model, folds: Folds) -> Folds:
    """``folds`` (as ``predict_probs`` filled it) if the model's embedding tables and projection
    are those it was folded from, compared exactly; else a new, empty one."""
    layers = _layers(model)
    kept = folds.get("weights")
    if layers is None or kept is None:
        return {}
    current = _folded_weights(layers[0], layers[1][0])
    if len(current) == len(kept) and all(np.array_equal(a, b) for a, b in zip(current, kept)):
        return folds
    return {}


def _folded_weights(tables: List[Embedding], maxout: Model) -> List[np.ndarray]:
    """What ``folded_tables`` reads: each table's rows and the projection's weights (views)."""
    return [np.asarray(node.get_param("E")) for node, _ in tables] + [np.asarray(maxout.get_param("W"))]


def _residual_block(maxout: Model, norm: Model, dilation: int, data: np.ndarray, first: np.ndarray,
                    last: np.ndarray) -> np.ndarray:
    """``data + LayerNorm(Maxout(dilated_window(data)))`` (``first``, ``last``: per row, where its
    sequence begins and ends), ``TILE_ROWS`` rows at a time: the window and the product of a tile
    stay in the processor's cache."""
    nO, nP, nI = maxout.get_dim("nO"), maxout.get_dim("nP"), maxout.get_dim("nI")
    W, b = _piece_major(maxout)
    W = np.ascontiguousarray(W.T)
    G = np.asarray(norm.get_param("G"), dtype=np.float32)
    beta = np.asarray(norm.get_param("b"), dtype=np.float32)
    n = len(data)
    out = np.empty_like(data)
    wide = np.empty((min(n, TILE_ROWS), nI), dtype=np.float32)
    Y = np.empty((min(n, TILE_ROWS), nO * nP), dtype=np.float32)
    for lo in range(0, n, TILE_ROWS):
        hi = min(n, lo + TILE_ROWS)
        _window_rows(data, first, last, dilation, lo, hi, wide)
        np.matmul(wide[:hi - lo], W, out=Y[:hi - lo])
        _norm_rows(Y[:hi - lo].reshape(hi - lo, nP, nO), b, G, beta, data[lo:hi], out[lo:hi])
    return out


def _piece_major(maxout: Model) -> Tuple[np.ndarray, np.ndarray]:
    """A Maxout's weights (nP * nO, nI) and bias (nP, nO), float32, with its outputs in
    piece-major order: output ``p * nO + o`` is thinc's ``o * nP + p``, so that each piece's
    outputs are contiguous (what ``_norm_rows`` reads)."""
    nO, nP, nI = maxout.get_dim("nO"), maxout.get_dim("nP"), maxout.get_dim("nI")
    W = np.asarray(maxout.get_param("W"), dtype=np.float32).reshape(nO, nP, nI).transpose(1, 0, 2)
    b = np.asarray(maxout.get_param("b"), dtype=np.float32).reshape(nO, nP).T
    return np.ascontiguousarray(W.reshape(nP * nO, nI)), np.ascontiguousarray(b)


def folded_tables(tables: List[Embedding], maxout: Model) -> Tuple[np.ndarray, np.ndarray]:
    """Every embedding table times its columns of the projection's weights (``maxout`` after the
    concatenated embeddings, outputs in ``_piece_major`` order), stacked: ((total rows, nP * nO)
    float32, the first row of each table)."""
    W = _piece_major(maxout)[0]
    out, column = [], 0
    for node, _ in tables:
        E = np.asarray(node.get_param("E"), dtype=np.float32)
        out.append(E @ W[:, column:column + E.shape[1]].T)
        column += E.shape[1]
    rows = np.cumsum([0] + [len(t) for t in out[:-1]]).astype(np.int64)
    return np.ascontiguousarray(np.concatenate(out), dtype=np.float32), rows


def _table_rows(tables: List[Embedding], ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per piece, the rows of the stacked ``folded_tables`` its features pick (int64): a hashed
    feature's keys as thinc's HashEmbed hashes them, another's id, each plus its table's first row."""
    out = []
    for (node, column), first in zip(tables, rows.tolist()):
        col = np.ascontiguousarray(ids[:, column])
        if node.name == "hashembed":
            keys = node.ops.hash(col, node.attrs["seed"]) % node.get_dim("nV")
            out.append(np.asarray(keys, dtype=np.int64) + first)
        else:
            out.append(col.astype(np.int64)[:, None] + first)
    return np.ascontiguousarray(np.concatenate(out, axis=1))


def _layers(model: Model) -> Optional[Tuple[List[Embedding], Tuple[Model, Model], List[Block]]]:
    """(embedding tables and their columns, (maxout, layernorm) of the projection, residual
    blocks) of a ``build_char_model`` model; None for another model."""
    names = [layer.name for layer in model.layers]
    if len(names) < 3 or names[-2:] != ["ragged_data", "softmax"] or not all(n.startswith("residual(") for n in names[1:-2]):
        return None
    first = model.layers[0].layers[0] if model.layers[0].layers else None
    if first is None or len(first.layers) != 2 or \
            first.layers[0].name != "|".join(child.name for child in first.layers[0].layers):  # concatenate
        return None
    tables = []
    for child in first.layers[0].layers:
        nodes = [node for node in child.walk() if node.name in ("hashembed", "embed")]
        if [node.name for node in child.layers] != ["ints-getitem", nodes[0].name if nodes else None] or len(nodes) != 1 \
                or not isinstance(child.attrs.get("column"), int):
            return None
        tables.append((nodes[0], child.attrs["column"]))
    project = {node.name: node for node in first.layers[1].walk()}
    if set(project) != {"maxout>>layernorm", "maxout", "layernorm"} or project["maxout"].get_dim("nI") != \
            sum(node.get_dim("nO") for node, _ in tables):
        return None
    blocks = []
    for block in model.layers[1:-2]:
        nodes = {node.name: node for node in block.walk()}
        windows = [node for node in block.walk() if node.name == f"dilated_window({node.attrs.get('dilation')})"]
        if len(windows) != 1 or "maxout" not in nodes or "layernorm" not in nodes:
            return None
        blocks.append((windows[0], nodes["maxout"], nodes["layernorm"]))
    return tables, (project["maxout"], project["layernorm"]), blocks


@njit(cache=True, fastmath=ORDERED_MATH)
def _gather_maxout_norm(table: np.ndarray, rows: np.ndarray, b: np.ndarray, G: np.ndarray,
                        beta: np.ndarray) -> np.ndarray:
    """Per piece ``i``: ``y = sum_k table[rows[i, k]]`` (in the order of k), then
    ``LayerNorm(maxout(y + b))`` as ``_norm_rows`` (no residual), ``GATHER_ROWS`` pieces at a time.
    table: (R, nP * nO), piece-major; rows: (n, K); b: (nP, nO)."""
    n, K = rows.shape
    width = table.shape[1]
    nP, nO = b.shape
    out = np.empty((n, nO), dtype=np.float32)
    Y = np.empty((GATHER_ROWS, width), dtype=np.float32)
    pieces = Y.reshape((GATHER_ROWS, nP, nO))  # Y's rows as _norm_rows reads them
    zero = np.zeros((GATHER_ROWS, nO), dtype=np.float32)
    for lo in range(0, n, GATHER_ROWS):
        m = min(GATHER_ROWS, n - lo)
        for i in range(m):
            r = rows[lo + i, 0]
            for j in range(width):
                Y[i, j] = table[r, j]
            for k in range(1, K):
                r = rows[lo + i, k]
                for j in range(width):
                    Y[i, j] += table[r, j]
        _norm_rows(pieces[:m], b, G, beta, zero[:m], out[lo:lo + m])
    return out


@njit(cache=True)
def _window_rows(data: np.ndarray, first: np.ndarray, last: np.ndarray, d: int, lo: int, hi: int,
                 out: np.ndarray) -> None:
    """``layers.dilated_window``'s rows ``lo`` to ``hi`` into ``out[:hi - lo]``: row ``i`` is
    ``[data[i - d], data[i], data[i + d]]``, zeros where ``i - d`` or ``i + d`` falls outside its
    sequence (``first``, ``last``: per row, where its sequence begins and ends)."""
    width = data.shape[1]
    for i in range(lo, hi):
        r = i - lo
        left, right = i - d, i + d
        if left >= first[i]:
            for j in range(width):
                out[r, j] = data[left, j]
        else:
            for j in range(width):
                out[r, j] = np.float32(0.0)
        for j in range(width):
            out[r, width + j] = data[i, j]
        if right < last[i]:
            for j in range(width):
                out[r, 2 * width + j] = data[right, j]
        else:
            for j in range(width):
                out[r, 2 * width + j] = np.float32(0.0)


@njit(cache=True, fastmath=ORDERED_MATH)
def _norm_rows(Y: np.ndarray, b: np.ndarray, G: np.ndarray, beta: np.ndarray, X: np.ndarray,
               out: np.ndarray) -> None:
    """Per row: ``z[o] = max_p (Y[p, o] + b[p, o])``, then ``out = X + LayerNorm(z)`` (thinc's:
    ``(z - mean) / sqrt(var + eps) * G + beta``; the mean's sum in float32, the variance's in
    float64, each in the order of o), eight rows at a time (their sums side by side).
    Y: (n, nP, nO), piece-major (``_piece_major``; three indices, each provably non-negative, so
    that the maxout compiles to vector code); b: (nP, nO); X, out: (n, nO)."""
    n, nP, nO = Y.shape
    z = np.empty((8, nO), dtype=np.float32)
    i = 0
    while i < n:
        m = min(8, n - i)
        for k in range(m):
            for o in range(nO):
                z[k, o] = Y[i + k, 0, o] + b[0, o]
            for p in range(1, nP):
                for o in range(nO):
                    z[k, o] = max(z[k, o], Y[i + k, p, o] + b[p, o])
        if m == 8:
            t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = np.float32(0.0)
            for o in range(nO):
                t0 += z[0, o]
                t1 += z[1, o]
                t2 += z[2, o]
                t3 += z[3, o]
                t4 += z[4, o]
                t5 += z[5, o]
                t6 += z[6, o]
                t7 += z[7, o]
            m0, m1, m2, m3, m4, m5, m6, m7 = t0 / nO, t1 / nO, t2 / nO, t3 / nO, t4 / nO, t5 / nO, t6 / nO, t7 / nO
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
            for o in range(nO):
                d0, d1, d2, d3 = z[0, o] - m0, z[1, o] - m1, z[2, o] - m2, z[3, o] - m3
                d4, d5, d6, d7 = z[4, o] - m4, z[5, o] - m5, z[6, o] - m6, z[7, o] - m7
                s0 += d0 * d0
                s1 += d1 * d1
                s2 += d2 * d2
                s3 += d3 * d3
                s4 += d4 * d4
                s5 += d5 * d5
                s6 += d6 * d6
                s7 += d7 * d7
            _norm_tail(z[0], m0, s0, G, beta, X[i], out[i])
            _norm_tail(z[1], m1, s1, G, beta, X[i + 1], out[i + 1])
            _norm_tail(z[2], m2, s2, G, beta, X[i + 2], out[i + 2])
            _norm_tail(z[3], m3, s3, G, beta, X[i + 3], out[i + 3])
            _norm_tail(z[4], m4, s4, G, beta, X[i + 4], out[i + 4])
            _norm_tail(z[5], m5, s5, G, beta, X[i + 5], out[i + 5])
            _norm_tail(z[6], m6, s6, G, beta, X[i + 6], out[i + 6])
            _norm_tail(z[7], m7, s7, G, beta, X[i + 7], out[i + 7])
        else:
            for k in range(m):
                total = np.float32(0.0)
                for o in range(nO):
                    total += z[k, o]
                mu = total / nO
                sq = 0.0
                for o in range(nO):
                    d = z[k, o] - mu
                    sq += d * d
                _norm_tail(z[k], mu, sq, G, beta, X[i + k], out[i + k])
        i += m


@njit(cache=True, fastmath=ORDERED_MATH, inline="always")
def _norm_tail(z: np.ndarray, mu: float, sq: float, G: np.ndarray, beta: np.ndarray, x: np.ndarray,
               out: np.ndarray) -> None:
    """``out = x + (z - mu) / sqrt(sq / nO + eps) * G + beta`` for one row (``mu``: its mean;
    ``sq``: its sum of squared deviations)."""
    nO = z.shape[0]
    scale = np.float32(1.0) / np.sqrt(sq / nO + np.float32(LAYER_NORM_EPS))
    for o in range(nO):
        out[o] = x[o] + ((z[o] - mu) * scale * G[o] + beta[o])
