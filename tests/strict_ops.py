"""A stand-in for a GPU in tests: thinc ``Ops`` whose arrays are ``DeviceArray``s.

A ``DeviceArray`` holds a numpy array but is no numpy array, and behaves like a cupy array where
that matters for device-agnostic code, only more strictly:

- numpy refuses it: ``np.asarray``, ``np.split``, ``np.concatenate`` ... raise ``DeviceLeak`` when
  called from ``spacy_hcparse`` (thinc's own fallbacks, which cupy also serves, are let through);
- it refuses host arrays: a numpy array as an operand (``dev + host``), as an index
  (``dev[host_ints]``), as a value assigned into it, or as an argument of an ``xp`` function other
  than ``xp.asarray``/``xp.array`` (the explicit transfers) and ``xp.split``'s indices;
- ``StrictOps.to_numpy`` is the one way back to the host (cupy's ``.get()``).

So a layer that runs under ``StrictOps`` without a ``DeviceLeak`` keeps its arrays on
``model.ops`` and moves index arrays with ``ops.asarray``/``xp.asarray``.
"""
import sys
import types

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin
import thinc.backends.ops
import thinc.util
from thinc.api import Ops

PACKAGE = "spacy_hcparse"


class DeviceLeak(TypeError):
    """A host array met a device array, or numpy was handed a device array."""


def _called_from_package(depth: int) -> bool:
    name = sys._getframe(depth + 1).f_globals.get("__name__", "")
    return name == PACKAGE or name.startswith(PACKAGE + ".")


def _is_host(value) -> bool:
    return isinstance(value, np.ndarray)


def _unwrap(value, what: str, allow_host: bool = False):
    """``value`` with every ``DeviceArray`` replaced by its data, refusing host arrays."""
    if isinstance(value, DeviceArray):
        return value._data
    if _is_host(value) and not allow_host:
        raise DeviceLeak(f"a numpy array of shape {value.shape} reached {what}")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, what, allow_host) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, what, allow_host) for k, v in value.items()}
    return value


def _wrap(value):
    if isinstance(value, np.ndarray):
        return DeviceArray(value)
    if isinstance(value, np.generic):
        return DeviceArray(np.asarray(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v) for v in value)
    return value


class DeviceArray(NDArrayOperatorsMixin):
    """An array 'on the device' (see the module docstring)."""

    __slots__ = ("_data",)
    # Binary operators with a numpy array on the left defer to this class.
    __array_priority__ = 1000

    def __init__(self, data: np.ndarray):
        self._data = data

    def get(self) -> np.ndarray:
        """The data on the host (cupy's name)."""
        return self._data

    def __array__(self, dtype=None, copy=None):
        if _called_from_package(1):
            raise DeviceLeak("numpy converted a device array (np.asarray / np.array) in " + PACKAGE)
        return self._data if dtype is None else self._data.astype(dtype)

    def __array_function__(self, func, types_, args, kwargs):
        if _called_from_package(1):
            raise DeviceLeak(f"np.{func.__name__} called on a device array in {PACKAGE}")
        # thinc's own numpy fallbacks (``get_array_module`` of a non-cupy array): serve them, as
        # cupy's ``__array_function__`` does.
        return _wrap(func(*_unwrap(args, f"np.{func.__name__}"), **_unwrap(kwargs, f"np.{func.__name__}")))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        what = f"np.{ufunc.__name__}.{method} with a device array"
        args = _unwrap(inputs, what)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = _unwrap(out, what)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __getitem__(self, key):
        return _wrap(self._data[_unwrap(key, "an index of a device array")])

    def __setitem__(self, key, value):
        self._data[_unwrap(key, "an index of a device array")] = _unwrap(value, "an assignment into a device array")

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        # A vector's items come back as host scalars (as ``int(x)``): thinc loops over lengths
        # with ``start += size``, which would mutate a shared 0-d array in place.
        return iter(self._data) if self._data.ndim == 1 else (_wrap(row) for row in self._data)

    def __float__(self) -> float:
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __index__(self) -> int:
        return self._data.__index__()

    def __bool__(self) -> bool:
        return bool(self._data)

    def __repr__(self) -> str:
        return f"DeviceArray({self._data!r})"

    def __getattr__(self, name):
        if name.startswith("__"):  # numpy's array protocols (__array_interface__ ...) stay hidden
            raise AttributeError(name)
        value = getattr(self._data, name)
        if not callable(value):
            return _wrap(value)

        def method(*args, **kwargs):
            what = f"ndarray.{name} of a device array"
            return _wrap(value(*_unwrap(args, what), **_unwrap(kwargs, what)))

        return method

    def __deepcopy__(self, memo):
        return DeviceArray(self._data.copy())


# xp functions that may take host arrays: the transfers, and split's indices (cupy wants them on
# the host).
_TRANSFERS = {"asarray", "array"}


class _Ufunc:
    def __init__(self, ufunc: np.ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        what = f"xp.{self._ufunc.__name__}"
        return _wrap(self._ufunc(*_unwrap(args, what), **_unwrap(kwargs, what)))

    def __getattr__(self, name):
        method = getattr(self._ufunc, name)

        def call(*args, **kwargs):
            what = f"xp.{self._ufunc.__name__}.{name}"
            result = method(*_unwrap(args, what), **_unwrap(kwargs, what))
            return None if result is None else _wrap(result)

        return call


class _Module:
    """numpy (or one of its submodules, or an object such as a ``RandomState``) seen from the
    device: results are ``DeviceArray``s, host arrays are refused."""

    def __init__(self, target, prefix: str = "xp"):
        self._target = target
        self._prefix = prefix

    def __getattr__(self, name):
        if name == "ndarray":
            return DeviceArray
        value = getattr(self._target, name)
        if isinstance(value, type) and (issubclass(value, np.generic) or value is np.dtype):
            return value
        if isinstance(value, np.ufunc):
            return _Ufunc(value)
        if isinstance(value, types.ModuleType):
            return _Module(value, f"{self._prefix}.{name}")
        if not callable(value):
            return value
        what = f"{self._prefix}.{name}"

        def function(*args, **kwargs):
            if name in _TRANSFERS:
                args = _unwrap(args, what, allow_host=True)
            elif name in ("split", "array_split"):
                args = (_unwrap(args[0], what),) + _unwrap(args[1:], what, allow_host=True)
            else:
                args = _unwrap(args, what)
            result = value(*args, **_unwrap(kwargs, what))
            if isinstance(result, (np.ndarray, np.generic, list, tuple)) or result is None:
                return _wrap(result)
            if isinstance(result, (int, float, bool, str)):
                return result
            return _Module(result, f"{what}()")

        return function


strict_xp = _Module(np)


class StrictOps(Ops):
    """thinc ``Ops`` on the stand-in device."""

    name = "strict"
    xp = strict_xp

    def to_numpy(self, data, *, byte_order=None):
        if isinstance(data, DeviceArray):
            return data.get()
        if isinstance(data, np.ndarray):
            return data
        raise ValueError(f"not an array: {type(data)}")

    def asarray(self, data, *, dtype=None):
        if isinstance(data, DeviceArray):
            return data if dtype is None or data.dtype == dtype else DeviceArray(data.get().astype(dtype))
        if isinstance(data, (list, tuple)) and any(isinstance(d, DeviceArray) for d in data):
            data = [d.get() if isinstance(d, DeviceArray) else d for d in data]
        return DeviceArray(np.array(data, dtype=dtype))


def teach_thinc(monkeypatch) -> None:
    """thinc's helpers outside ``Ops`` (``flatten``, the LSTM) ask ``get_array_module``, which
    knows numpy and cupy only: point it at ``strict_xp`` for ``DeviceArray``s."""
    original = thinc.util.get_array_module

    def get_array_module(arr):
        return strict_xp if isinstance(arr, DeviceArray) else original(arr)

    for module in (thinc.util, thinc.backends.ops):
        monkeypatch.setattr(module, "get_array_module", get_array_module)


def to_ops(model, ops: Ops):
    """Move ``model``'s parameters (and every node's ``ops``) to ``ops``, as ``Model.to_gpu``."""
    for node in model.walk():
        node.ops = ops
        for name in node.param_names:
            if node.has_param(name):
                node.set_param(name, ops.asarray(node.get_param(name)))
    return model
