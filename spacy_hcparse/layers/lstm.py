"""A (Bi)LSTM with thinc's parameters and a correct backward pass on every device.

thinc 8.3's ``LSTM`` layer leaves its gradients to the ops, and both ops get them wrong:
``NumpyOps.backprop_lstm`` returns the weights plus their gradient (its gradient buffers start
as copies of the weights), skips each sequence's first step and takes the recurrent weights'
gradient against the wrong step's output; the generic ``Ops.backprop_lstm`` (what ``CupyOps``
runs) never writes its gate gradients, so the LSTM and everything under it get none, and its
forward pass goes wrong on batches of unequal lengths. ``lstm`` keeps thinc's parameter layout
and node name (models trained with thinc's layer load unchanged), runs ``NumpyOps``' forward
kernel where the ops multiply with blis (``blas.uses_blis``), the array code of ``lstm_forward``
elsewhere (a GPU, or ``NumpyOps(use_blis=False)``: numpy's BLAS), and always the backward pass of
``lstm_backward``.

Conventions (thinc's): input and output are ``Padded``; inside, sequences are packed by time step
(``size_at_t[t]`` rows at step ``t``, sequences sorted longest first). Parameters ``LSTM``: per
layer and direction ``Wx (4H, nI)``, ``bx (4H,)``, ``Wh (4H, H)``, ``bh (4H,)``, gates in blocks
``f, i, o, c``; ``HC0 (2, depth, dirs, H)`` the initial states (thinc never trains them: zeros),
read as ``NumpyOps``' kernel reads them, ``HC0[0]`` the cell state and ``HC0[1]`` the hidden.
Direction 0 runs left to right, 1 right to left; a layer's output is ``[forward; backward]``.
"""
from functools import partial
from typing import Callable, List, Tuple

import numpy as np
from thinc.api import Model, glorot_uniform_init, zero_init
from thinc.layers.lstm import init as thinc_init
from thinc.types import Floats2d, Padded

from ..blas import uses_blis

Weights = Tuple[Floats2d, Floats2d, Floats2d]  # Wx (4H, nI), Wh (4H, H), bias (4H,): bx + bh


def lstm(nO: int, *, bi: bool = True, depth: int = 1, dropout: float = 0.0) -> Model[Padded, Padded]:
    """thinc's ``LSTM(nO=nO, bi=bi, depth=depth, dropout=dropout)`` (its init, parameters and
    weight dropout) with this module's forward and backward passes. ``nO`` counts both
    directions."""
    return lstm_node(forward, nO, bi=bi, depth=depth, dropout=dropout)


def lstm_node(forward_fn: Callable, nO: int, *, bi: bool, depth: int, dropout: float) -> Model[Padded, Padded]:
    """The LSTM node every kernel shares (name ``lstm``, dims, thinc's init, parameters ``LSTM``
    and ``HC0``, weight dropout rate), run by ``forward_fn``: so a model trained with one kernel
    loads into another."""
    if depth < 1:
        raise ValueError(f"LSTM depth must be at least 1, got {depth}")
    return Model(
        "lstm",
        forward_fn,
        init=partial(thinc_init, glorot_uniform_init, zero_init),
        dims={"nO": nO, "nI": None, "depth": depth, "dirs": 1 + int(bi)},
        attrs={"dropout_rate": dropout},
        params={"LSTM": None, "HC0": None},
    )


def lstm_inputs(model: Model[Padded, Padded], Xp: Padded, is_train: bool) -> Tuple:
    """What every kernel's forward starts from: the weights ``LSTM`` (times the dropout ``mask``
    in training, else ``mask`` is None), ``HC0``, the host ``sizes`` per time step, the padded
    layout's ``cells`` and the packed input ``X``."""
    ops = model.ops
    params = model.get_param("LSTM")
    mask = None
    if is_train and model.attrs["dropout_rate"] > 0:
        # Dropout over the weights (thinc's, after Gal and the AWD-LSTM), the same mask both ways.
        mask = ops.get_dropout_mask(params.shape, model.attrs["dropout_rate"])
        params = params * mask
    sizes = np.asarray(ops.to_numpy(Xp.size_at_t), dtype=np.int64)
    # The output and both gradients share the input's layout (one size_at_t: with_padded pads
    # the gradients by the same lengths), so its cells are found once.
    cells = _cells(ops.xp, sizes)
    return params, mask, model.get_param("HC0"), sizes, cells, _packed(ops, Xp, cells)


def forward(model: Model[Padded, Padded], Xp: Padded, is_train: bool) -> Tuple[Padded, Callable]:
    ops = model.ops
    params, mask, HC0, sizes, cells, X = lstm_inputs(model, Xp, is_train)
    if not is_train:
        if uses_blis(ops):
            Y = ops.lstm_forward_inference(params, HC0[0], HC0[1], X, sizes.astype("i"))
        else:
            Y = lstm_forward(ops.xp, params, HC0, X, sizes, keep_states=False)[0]
        return _padded(ops, Y, Xp, cells), _no_backprop
    if uses_blis(ops):
        Y, (Ys, Gs, Cs, _) = ops.lstm_forward_training(params, HC0[0], HC0[1], X, sizes.astype("i"))
        states = [(Ys[i, d], _block_gates(Gs[i, d]), Cs[i, d]) for i in range(Ys.shape[0])
                  for d in range(Ys.shape[1])]
    else:
        Y, states = lstm_forward(ops.xp, params, HC0, X, sizes)
    Yp = _padded(ops, Y, Xp, cells)

    def backprop(dYp: Padded) -> Padded:
        dX, d_params = lstm_backward(ops.xp, params, HC0, X, sizes, states, _packed(ops, dYp, cells))
        if mask is not None:
            d_params *= mask
        model.inc_grad("LSTM", d_params)
        return _padded(ops, dX, dYp, cells)

    return Yp, backprop


def _no_backprop(dYp: Padded) -> Padded:
    raise ValueError("lstm: no backward pass after a forward pass at prediction (is_train=False)")


def lstm_forward(xp, params, HC0, X, sizes: np.ndarray, keep_states: bool = True) -> Tuple[Floats2d, List[Tuple]]:
    """Outputs ``(N, dirs * H)`` of the top layer for packed inputs ``X (N, nI)``, and per layer
    and direction ``(Y, gates, C)``: hidden states, activated gates ``(N, 4H)`` in blocks
    ``f, i, o, c`` and cell states, as ``lstm_backward`` reads them (none with ``keep_states``
    False: at prediction the gates are not kept, so memory stays that of the outputs)."""
    depth, dirs, H = HC0.shape[1:]
    offsets = _offsets(sizes)
    states, start = [], 0
    for layer in range(depth):
        outputs = []
        for d in range(dirs):
            (Wx, Wh, bias), start = _weights(xp, params, start, X.shape[1], H)
            Y, C = (xp.zeros((X.shape[0], H), dtype=X.dtype) for _ in range(2))
            gates = xp.zeros((X.shape[0], 4 * H), dtype=X.dtype) if keep_states else None
            A = X @ Wx.T + bias
            for t, prev in _steps(len(sizes), d):
                b, rows = sizes[t], slice(offsets[t], offsets[t] + sizes[t])
                h_prev, c_prev = _previous(xp, Y, C, HC0, layer, d, b, offsets, sizes, prev)
                g = A[rows] + h_prev @ Wh.T
                g[:, : 3 * H] = 1.0 / (1.0 + xp.exp(-g[:, : 3 * H]))
                g[:, 3 * H:] = xp.tanh(g[:, 3 * H:])
                C[rows] = g[:, :H] * c_prev + g[:, H: 2 * H] * g[:, 3 * H:]
                Y[rows] = xp.tanh(C[rows]) * g[:, 2 * H: 3 * H]
                if keep_states:
                    gates[rows] = g
            del A
            if keep_states:
                states.append((Y, gates, C))
            outputs.append(Y)
        X = xp.ascontiguousarray(xp.hstack(outputs)) if dirs > 1 else outputs[0]
    return X, states


def lstm_backward(xp, params, HC0, X, sizes: np.ndarray, states: List[Tuple], dY) -> Tuple[Floats2d, Floats2d]:
    """Gradients of the packed inputs ``X`` and of the parameters (thinc's layout) given the
    outputs' gradient ``dY (N, dirs * H)`` and ``lstm_forward``'s states."""
    depth, dirs, H = HC0.shape[1:]
    offsets = _offsets(sizes)
    inputs, start, layout = [X], 0, []
    for layer in range(depth):
        for d in range(dirs):
            n_in = inputs[-1].shape[1]
            weights, end = _weights(xp, params, start, n_in, H)
            layout.append((weights, start, n_in))
            start = end
        if layer + 1 < depth:
            ys = states[layer * dirs: (layer + 1) * dirs]
            inputs.append(xp.ascontiguousarray(xp.hstack([y for y, _, _ in ys])) if dirs > 1 else ys[0][0])
    d_params = xp.zeros(params.shape, dtype=params.dtype)
    for layer in reversed(range(depth)):
        X_layer = inputs[layer]
        dX = xp.zeros(X_layer.shape, dtype=X_layer.dtype)
        for d in range(dirs):
            (Wx, Wh, _), start, n_in = layout[layer * dirs + d]
            Y, gates, C = states[layer * dirs + d]
            c_prev = _previous_rows(xp, C, HC0[0, layer, d], sizes, offsets, d)
            dA = _backward_steps(xp, Wh, gates, C, c_prev, dY[:, d * H: (d + 1) * H], sizes, offsets, d)
            h_prev = _previous_rows(xp, Y, HC0[1, layer, d], sizes, offsets, d)
            d_bias = dA.sum(axis=0)
            parts = [dA.T @ X_layer, d_bias, dA.T @ h_prev, d_bias]
            flat = xp.concatenate([p.ravel() for p in parts])
            d_params[start: start + flat.size] += flat
            dX += dA @ Wx
        dY = dX
    return dY, d_params


def _backward_steps(xp, Wh, gates, C, c_prev_rows, dY, sizes, offsets, d):
    """Gradient of the pre-activation gates ``(N, 4H)`` of one layer and direction
    (``c_prev_rows``: the cell state each packed row's step read, ``_previous_rows``)."""
    H = C.shape[1]
    dA = xp.zeros(gates.shape, dtype=gates.dtype)
    dh_next = xp.zeros((int(sizes.max()) if len(sizes) else 0, H), dtype=C.dtype)
    dc_next = xp.zeros_like(dh_next)
    for t, prev in reversed(list(_steps(len(sizes), d))):
        b, rows = sizes[t], slice(offsets[t], offsets[t] + sizes[t])
        c_prev = c_prev_rows[rows]
        f, i, o, c = (gates[rows, k * H: (k + 1) * H] for k in range(4))
        tanh_c = xp.tanh(C[rows])
        dh = dY[rows] + dh_next[:b]
        dc = dc_next[:b] + dh * o * (1.0 - tanh_c ** 2)
        dA[rows] = xp.hstack((dc * c_prev * f * (1.0 - f), dc * c * i * (1.0 - i),
                              dh * tanh_c * o * (1.0 - o), dc * i * (1.0 - c ** 2)))
        # Only rows with a previous step pass gradient back; the others started from HC0.
        kept = min(b, sizes[prev]) if prev is not None else 0
        dh_next = xp.zeros_like(dh_next)
        dc_next = xp.zeros_like(dc_next)
        dh_next[:kept] = (dA[rows] @ Wh)[:kept]
        dc_next[:kept] = (dc * f)[:kept]
    return dA


def _steps(n_steps: int, direction: int):
    """``(t, previous t or None)`` in the order a direction runs."""
    order = range(n_steps) if direction == 0 else range(n_steps - 1, -1, -1)
    prev = None
    for t in order:
        yield t, prev
        prev = t


def _previous(xp, Y, C, HC0, layer, d, b, offsets, sizes, prev):
    """The ``b`` rows of hidden and cell state that step's rows continue from: the previous
    step's where the sequence has one, the initial state where it starts here."""
    c0, h0 = HC0[0, layer, d], HC0[1, layer, d]
    h = xp.repeat(h0[None, :], b, axis=0)
    c = xp.repeat(c0[None, :], b, axis=0)
    if prev is not None:
        kept = min(b, sizes[prev])
        h[:kept] = Y[offsets[prev]: offsets[prev] + kept]
        c[:kept] = C[offsets[prev]: offsets[prev] + kept]
    return h, c


def _previous_rows(xp, states, initial, sizes, offsets, d):
    """``(N, H)``: for every packed row the state (hidden ``Y`` or cell ``C``) its step read: the
    previous step's row where the sequence has one, ``initial`` where it starts."""
    out = xp.repeat(initial[None, :], states.shape[0], axis=0)
    for t, prev in _steps(len(sizes), d):
        if prev is not None:
            kept = min(sizes[t], sizes[prev])
            out[offsets[t]: offsets[t] + kept] = states[offsets[prev]: offsets[prev] + kept]
    return out


def _weights(xp, params, start: int, n_in: int, H: int) -> Tuple[Weights, int]:
    """One layer and direction's ``(Wx, Wh, bx + bh)`` from the flat parameters at ``start``."""
    sizes = (4 * H * n_in, 4 * H, 4 * H * H, 4 * H)
    Wx, bx, Wh, bh = (params[s: s + n] for s, n in zip(np.cumsum((start,) + sizes[:-1]), sizes))
    return (Wx.reshape(4 * H, n_in), Wh.reshape(4 * H, H), bx + bh), start + sum(sizes)


def _block_gates(interleaved: Floats2d) -> Floats2d:
    """``NumpyOps``' activated gates ``(N, 4H)`` (unit-major: ``4 j + gate``) in blocks."""
    n, width = interleaved.shape
    return np.ascontiguousarray(interleaved.reshape(n, width // 4, 4).transpose(0, 2, 1).reshape(n, width))


def _offsets(sizes: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)


def _packed(ops, Xp: Padded, cells) -> Floats2d:
    """``(N, width)``: the padded batch's real rows, step by step (``cells``: ``_cells``)."""
    steps, rows = cells
    return ops.xp.ascontiguousarray(Xp.data[steps, rows])


def _padded(ops, Y: Floats2d, like: Padded, cells) -> Padded:
    """The packed rows ``Y`` laid out as ``like`` (zeros where a sequence has ended)."""
    out = ops.alloc3f(like.data.shape[0], like.data.shape[1], Y.shape[1])
    steps, rows = cells
    out[steps, rows] = Y
    return Padded(out, size_at_t=like.size_at_t, lengths=like.lengths, indices=like.indices)


def _cells(xp, sizes: np.ndarray):
    """(step, batch row) of each packed row of a batch with ``sizes`` rows per step, as ``xp``
    index arrays (on the model's device)."""
    steps = np.repeat(np.arange(len(sizes)), sizes)
    rows = np.arange(len(steps)) - np.repeat(_offsets(sizes), sizes)
    return xp.asarray(steps), xp.asarray(rows)
