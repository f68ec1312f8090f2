"""layers.rows.host_arrays and device_arrays: one copy between host and device for a list of
arrays, the same values on the other side."""
import numpy as np
from thinc.api import NumpyOps

from spacy_hcparse.layers.rows import device_arrays, host_arrays, split_flat


class DeviceArray:
    """A stand-in for a device array (not a numpy array): what ``host_arrays`` concatenates."""

    def __init__(self, data):
        self.data = np.asarray(data)
        self.shape, self.dtype = self.data.shape, self.data.dtype

    def ravel(self):
        return self.data.ravel()

    def __getitem__(self, index):
        return self.data[index]


class CountingOps:
    """Ops whose ``to_numpy`` and ``asarray`` count their calls (the copies a GPU would make)."""

    xp = np

    def __init__(self):
        self.copies = 0

    def asarray(self, x, dtype=None):
        self.copies += 1
        return DeviceArray(np.asarray(x.data if isinstance(x, DeviceArray) else x, dtype=dtype))

    def to_numpy(self, x):
        self.copies += 1
        return np.asarray(x.data if isinstance(x, DeviceArray) else x)


def test_one_copy_for_device_arrays_and_the_same_values():
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=shape).astype("f") for shape in [(3, 3), (1, 1), (5, 5), (0,), (2, 4)]]
    ops = CountingOps()
    out = host_arrays(ops, [DeviceArray(a) for a in arrays])
    assert ops.copies == 1
    assert all(o.shape == a.shape and o.dtype == a.dtype and np.array_equal(o, a) for o, a in zip(out, arrays))


def test_numpy_arrays_and_mixed_dtypes_go_one_by_one():
    arrays = [np.zeros((2, 2), dtype="f"), np.ones(3, dtype="f")]
    assert all(a is b for a, b in zip(host_arrays(NumpyOps(), arrays), arrays))
    ops = CountingOps()
    mixed = host_arrays(ops, [DeviceArray(np.zeros(2, dtype="f")), DeviceArray(np.zeros(2, dtype="i"))])
    assert ops.copies == 2 and [m.dtype for m in mixed] == [np.float32, np.int32]
    assert host_arrays(ops, []) == []


def test_split_flat():
    parts = split_flat(np.arange(10), [(2, 2), (0,), (3, 2)])
    assert [p.tolist() for p in parts] == [[[0, 1], [2, 3]], [], [[4, 5], [6, 7], [8, 9]]]


class DeviceOps(CountingOps):
    xp = object()  # not numpy: a device's ops


def test_device_arrays_one_copy_for_host_arrays_and_the_same_values():
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=shape) for shape in [(3, 3), (1, 1), (0,), (2, 4)]]  # float64, as losses give
    ops = DeviceOps()
    out = device_arrays(ops, arrays)
    assert ops.copies == 1
    for o, a in zip(out, arrays):
        assert o.shape == a.shape and o.dtype == np.float32 and np.array_equal(o, a.astype("f"))
    # numpy's ops, a list of one, or values already on the device: one by one.
    assert ops.copies == 1 and len(device_arrays(ops, [arrays[0]])) == 1 and ops.copies == 2
    device_arrays(ops, [DeviceArray(a) for a in arrays[:2]])
    assert ops.copies == 4
    assert all(np.array_equal(o, a.astype("f")) for o, a in zip(device_arrays(NumpyOps(), arrays), arrays))
    assert device_arrays(ops, []) == []
