"""A (Bi)LSTM with ``layers.lstm``'s parameters, run by torch's fused LSTM (cuDNN on a GPU).

``layers.lstm`` steps through the sequences one time step at a time, a few array calls per step
(one small kernel launch each on a GPU). This layer has the same contract (``Padded`` in and out,
thinc's parameter layout and node name ``lstm``, weight dropout, ``HC0`` as the initial states)
and hands the whole recurrence to ``torch.nn.LSTM``: the thinc parameters become the module's
weights for the call (``torch.func.functional_call``, the gate blocks reordered from thinc's
``f, i, o, c`` to torch's ``i, f, g, o``), the sequences go in packed (``PackedSequence``: thinc's
``size_at_t`` are its batch sizes, so padding never enters the backward direction), and the
gradients of the inputs and of the thinc parameters come back from torch's autograd. Tensors
cross through thinc's ``xp2torch`` / ``torch2xp`` (DLPack on a GPU: no copy).

Because the parameters are the same, a model trained with either layer loads into the other:
the choice of kernel is a config setting (``BiLSTMContext.v1``'s ``kernel``), not a retraining.
``fused_on_gpu`` (the default kernel) runs this layer's forward on a GPU where torch sees CUDA and
``layers.lstm``'s everywhere else (torch is not a dependency of the package); torch is imported
only when this layer runs.
"""
import warnings
from functools import lru_cache
from typing import Callable, Dict, Tuple

import numpy as np
from thinc.api import Model, torch2xp, xp2torch
from thinc.types import Padded

from . import lstm as array_lstm
from .lstm import _packed, _padded, lstm_inputs, lstm_node

# One nn.LSTM per shape and device: its own parameters are never used (functional_call replaces them).
_MODULES: Dict[Tuple, object] = {}


def torch_lstm(nO: int, *, bi: bool = True, depth: int = 1, dropout: float = 0.0) -> Model[Padded, Padded]:
    """``layers.lstm.lstm(nO, bi=bi, depth=depth, dropout=dropout)`` (same init, parameters and
    weight dropout) with torch's fused LSTM as the kernel. ``nO`` counts both directions."""
    return lstm_node(forward, nO, bi=bi, depth=depth, dropout=dropout)


def fused_on_gpu(nO: int, *, bi: bool = True, depth: int = 1, dropout: float = 0.0) -> Model[Padded, Padded]:
    """The same node whose kernel follows its ops: torch's fused LSTM (cuDNN) when the arrays are
    on a GPU and torch sees CUDA, ``layers.lstm`` otherwise (CPU arrays, or no torch)."""
    return lstm_node(_forward_fused_on_gpu, nO, bi=bi, depth=depth, dropout=dropout)


def _forward_fused_on_gpu(model: Model[Padded, Padded], Xp: Padded, is_train: bool) -> Tuple[Padded, Callable]:
    if model.ops.xp is not np and torch_sees_cuda():
        return forward(model, Xp, is_train)
    return array_lstm.forward(model, Xp, is_train)


@lru_cache(maxsize=1)
def torch_sees_cuda() -> bool:
    """Whether torch is installed and has a CUDA device (asked once per process)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def forward(model: Model[Padded, Padded], Xp: Padded, is_train: bool) -> Tuple[Padded, Callable]:
    import torch

    ops = model.ops
    params, mask, HC0, sizes, cells, X = lstm_inputs(model, Xp, is_train)
    if X.shape[0] == 0:
        Y = ops.alloc2f(0, model.get_dim("nO"))
        return _padded(ops, Y, Xp, cells), lambda dYp: _padded(ops, ops.alloc2f(0, X.shape[1]), dYp, cells)
    x = xp2torch(ops.xp.ascontiguousarray(X), requires_grad=is_train)
    flat = xp2torch(ops.xp.ascontiguousarray(params), requires_grad=is_train)
    with torch.set_grad_enabled(is_train):
        out = run_lstm(flat, xp2torch(ops.xp.ascontiguousarray(HC0)), x, sizes)
    Yp = _padded(ops, torch2xp(out.detach(), ops=ops), Xp, cells)
    if not is_train:
        return Yp, _no_backprop

    def backprop(dYp: Padded) -> Padded:
        dY = xp2torch(_packed(ops, dYp, cells))
        torch.autograd.backward(out, dY)
        d_params = torch2xp(flat.grad, ops=ops)
        if mask is not None:
            d_params *= mask
        model.inc_grad("LSTM", d_params)
        return _padded(ops, torch2xp(x.grad, ops=ops), dYp, cells)

    return Yp, backprop


def _no_backprop(dYp: Padded) -> Padded:
    raise ValueError("torch_lstm: no backward pass after a forward pass at prediction (is_train=False)")


def run_lstm(flat, HC0, x, sizes: np.ndarray):
    """Outputs ``(N, dirs * H)`` of the top layer for packed inputs ``x (N, nI)`` (torch tensors;
    ``sizes``: rows per time step, longest sequences first), parameters ``flat`` in thinc's
    layout and initial states ``HC0 (2, depth, dirs, H)`` (cell, hidden)."""
    import torch
    from torch.nn.utils.rnn import PackedSequence

    depth, dirs, H = HC0.shape[1:]
    n_in = x.shape[1]
    module = _module(n_in, H, depth, dirs, x.device)
    weights = torch_weights(flat, n_in, H, depth, dirs)
    batch = int(sizes[0])
    h0 = HC0[1].reshape(depth * dirs, 1, H).expand(-1, batch, -1).contiguous()
    c0 = HC0[0].reshape(depth * dirs, 1, H).expand(-1, batch, -1).contiguous()
    packed = PackedSequence(x, torch.as_tensor(sizes, dtype=torch.int64))
    with warnings.catch_warnings():  # cuDNN copies weights that are not one flat buffer: expected here
        warnings.filterwarnings("ignore", message=".*contiguous chunk of memory.*")
        out, _ = torch.func.functional_call(module, weights, (packed, (h0, c0)))
    return out.data


def torch_weights(flat, n_in: int, H: int, depth: int, dirs: int) -> Dict[str, object]:
    """``nn.LSTM``'s parameters by name (``weight_ih_l0``, ..., ``_reverse`` for direction 1)
    as views of thinc's flat parameters, gate rows reordered from ``f, i, o, c`` to ``i, f, g, o``
    (differentiable: the gradients flow back to ``flat``)."""
    import torch

    order = torch.cat([torch.arange(k * H, (k + 1) * H) for k in (1, 0, 3, 2)]).to(flat.device)
    out, start = {}, 0
    for layer in range(depth):
        width = n_in if layer == 0 else dirs * H
        for d in range(dirs):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            shapes = [("weight_ih", (4 * H, width)), ("bias_ih", (4 * H,)), ("weight_hh", (4 * H, H)),
                      ("bias_hh", (4 * H,))]
            for name, shape in shapes:
                size = int(np.prod(shape))
                out[name + suffix] = flat[start: start + size].reshape(shape).index_select(0, order)
                start += size
    if start != flat.shape[0]:
        raise ValueError(f"LSTM parameters hold {flat.shape[0]} values, the shapes need {start}")
    return out


def _module(n_in: int, H: int, depth: int, dirs: int, device) -> object:
    """The ``nn.LSTM`` whose forward runs the layer (made once per shape and device)."""
    import torch

    key = (n_in, H, depth, dirs, str(device))
    if key not in _MODULES:
        _MODULES[key] = torch.nn.LSTM(n_in, H, depth, bidirectional=dirs == 2).to(device)
    return _MODULES[key]

