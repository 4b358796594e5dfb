"""bf16 columns: the f32 values rounded to nearest even, as NumPy gets them
(ml_dtypes.bfloat16 when installed, else uint16 bits) and through DLPack
(kDLBfloat, 16 bits: read from the capsule itself, no torch needed; and
torch.bfloat16 where torch is installed)."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import recordio
from recordio._loader import _column_of

SCALE = 1 / 255


def rne_bf16(f32):
    """The reference rounding of float32 values (no NaNs here) to bf16 bits:
    nearest, ties to even."""
    u = np.asarray(f32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def both(shards, batch_size=64):
    """The first batch with the image as bf16 and as f32 (same scale)."""
    bf = recordio.Loader(shards, batch_size=batch_size, shuffle="none",
                         decode={"image": ("bf16", (28, 28), SCALE), "label": ("i64", ())})
    f32 = recordio.Loader(shards, batch_size=batch_size, shuffle="none",
                          decode={"image": ("f32", (28, 28), SCALE), "label": ("i64", ())})
    return bf, next(bf), next(f32)


def test_bf16_is_f32_rounded_to_nearest_even(shards, monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # the uint16 view
    _, b, f = both(shards)
    assert b["image"].dtype == np.uint16 and b["image"].shape == (64, 28, 28)
    assert b["image"].nbytes * 2 == f["image"].nbytes  # half the memory
    want = rne_bf16(f["image"])
    np.testing.assert_array_equal(b["image"], want)
    # the rounding is not a truncation: some pixels round up
    assert (want != (f["image"].view(np.uint32) >> 16)).any()
    np.testing.assert_array_equal(b["label"], f["label"])


def test_ml_dtypes_array_when_installed(shards):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    _, b, f = both(shards)
    a = b["image"]
    assert a.dtype == ml_dtypes.bfloat16 and a.shape == (64, 28, 28)
    np.testing.assert_array_equal(a.view(np.uint16), rne_bf16(f["image"]))
    assert _column_of(a).address == a.__array_interface__["data"][0]  # a view


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def capsule_tensor(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return DLTensor.from_address(get(capsule, b"dltensor"))


def test_dlpack_capsule_says_bfloat16(shards):
    loader, b, _ = both(shards)
    col = _column_of(b["image"])
    assert col.__dlpack_device__() == (1, 0)
    cap = col.__dlpack__()
    t = capsule_tensor(cap)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (4, 16, 1)  # kDLBfloat
    assert t.data == col.address and t.device_type == 1 and t.byte_offset == 0
    assert t.ndim == 3 and [t.shape[i] for i in range(3)] == [64, 28, 28]
    assert [t.strides[i] for i in range(3)] == [784, 28, 1]
    label = capsule_tensor(_column_of(b["label"]).__dlpack__(stream=None))
    assert (label.dtype.code, label.dtype.bits, label.ndim) == (0, 64, 1)  # kDLInt
    del b, col, label
    gc.collect()
    assert loader._c.live_batches == 1  # the capsule not consumed holds the slot
    del cap, t
    gc.collect()
    assert loader._c.live_batches == 0  # and gives it back when it goes


def test_torch_gets_bfloat16(shards, dataset):
    torch = pytest.importorskip("torch")
    import recordio.torch
    _, b, f = both(shards)
    t = torch.from_dlpack(_column_of(b["image"]))
    assert t.dtype == torch.bfloat16 and t.shape == (64, 28, 28)
    assert t.data_ptr() == _column_of(b["image"]).address
    want = torch.from_numpy(rne_bf16(f["image"]).astype(np.int16)).view(torch.bfloat16)
    assert torch.equal(t, want)
    ds = recordio.torch.IterableDataset(shards, batch_size=32, shuffle="none",
                                        decode={"image": ("bf16", 784, SCALE),
                                                "label": ("i64", ())})
    first = next(iter(ds))
    assert first["image"].dtype == torch.bfloat16 and first["label"].dtype == torch.int64
    assert torch.equal(first["image"], want[:32].reshape(32, 784))


def test_bf16_spec_checks(shards):
    with pytest.raises(ValueError, match="f32 and bf16 only"):
        recordio.Loader(shards, batch_size=8, decode={"label": ("i64", 1, 2.0)})
    with pytest.raises(ValueError, match="u8, f32, bf16 or i64"):
        recordio.Loader(shards, batch_size=8, decode={"image": ("f16", 784)})
