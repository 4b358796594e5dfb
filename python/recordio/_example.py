"""tf.train.Example and SequenceExample as Python dicts."""
import numpy as np

from . import _core

__all__ = ["Example", "SequenceExample"]


def _value(kind, value):
    if kind == "float":
        return np.frombuffer(value, dtype=np.float32)
    if kind == "int64":
        return np.frombuffer(value, dtype=np.int64)
    return value  # "bytes": a list of bytes; "none": None


def _feature(name, value):
    """(name, kind, value) for the C builder, from a Python value."""
    if value is None:
        return (name, "none", None)
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("bytes", "float", "int64"):
        kind, v = value
        if kind == "bytes":
            return (name, "bytes", [_as_bytes(x) for x in ([v] if _is_bytes(v) else v)])
        dt = np.float32 if kind == "float" else np.int64
        return (name, kind, np.ascontiguousarray(np.asarray(v, dtype=dt).ravel()))
    if _is_bytes(value):
        return (name, "bytes", [_as_bytes(value)])
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SUO":
            return (name, "bytes", [_as_bytes(x) for x in value.ravel().tolist()])
        if value.dtype.kind == "f":
            return (name, "float", np.ascontiguousarray(value.astype(np.float32, copy=False).ravel()))
        if value.dtype.kind in "iub":
            return (name, "int64", np.ascontiguousarray(value.astype(np.int64, copy=False).ravel()))
        raise TypeError("feature %s: arrays of dtype %s have no Example kind" % (name, value.dtype))
    if isinstance(value, (bool, int, np.integer)):
        return (name, "int64", np.array([value], dtype=np.int64))
    if isinstance(value, (float, np.floating)):
        return (name, "float", np.array([value], dtype=np.float32))
    items = list(value)
    if not items:
        raise TypeError("feature %s: an empty list has no kind: give ('float', []), "
                        "('int64', []) or ('bytes', [])" % name)
    if all(_is_bytes(x) for x in items):
        return (name, "bytes", [_as_bytes(x) for x in items])
    if all(isinstance(x, (bool, int, np.integer)) for x in items):
        return (name, "int64", np.array(items, dtype=np.int64))
    return (name, "float", np.array(items, dtype=np.float32))


def _is_bytes(x):
    return isinstance(x, (bytes, bytearray, memoryview, str))


def _as_bytes(x):
    return x.encode("utf-8") if isinstance(x, str) else x


class Example:
    """tf.train.Example to and from a dict.

    Example.parse(data) -> {name: value}: a float list is a float32 NumPy
    array, an int64 list an int64 array, a bytes list a list of bytes, and
    a Feature with no kind set None. Raises ExampleError on malformed bytes.

    Example.build(features) -> bytes, byte-identical to TensorFlow's
    serialization of the same features in the same order. Values:
      bytes / str (UTF-8) / a list of them      -> bytes_list
      int, a list of ints, an integer or bool array -> int64_list
      float, a list with a float, a float array -> float_list
      None                                      -> a Feature with no kind
      (kind, value) with kind "bytes", "float" or "int64" forces the kind
      (e.g. ("int64", []) for an empty list, ("bytes", img.tobytes())).
    Arrays are flattened in C order.
    """

    @staticmethod
    def parse(data):
        return {name: _value(kind, v) for name, kind, v in _core.example_parse(data)}

    @staticmethod
    def build(features):
        return _core.example_build([_feature(n, v) for n, v in features.items()])


class SequenceExample:
    """tf.train.SequenceExample to a dict.

    SequenceExample.parse(data) -> (context, feature_lists): context is a
    dict as Example.parse gives it; feature_lists maps each list's name to
    its steps, a list of values of the same forms (one per time step).
    """

    @staticmethod
    def parse(data):
        ctx, lists = _core.sequence_example_parse(data)
        context = {name: _value(kind, v) for name, kind, v in ctx}
        return context, {name: [_value(k, v) for k, v in steps] for name, steps in lists}
