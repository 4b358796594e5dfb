"""tf.train.Example and SequenceExample as Python dicts."""
from collections.abc import Mapping, Set

import numpy as np

from . import _core

__all__ = ["Example", "SequenceExample"]


def _value(kind, value):
    if kind == "float":
        return np.frombuffer(value, dtype=np.float32)
    if kind == "int64":
        return np.frombuffer(value, dtype=np.int64)
    return value  # "bytes": a list of bytes; "none": None


_KINDS = ("bytes", "float", "int64")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_BYTES_TYPES = (bytes, bytearray, memoryview, str, np.bytes_, np.str_)
_INTEGER_TYPES = (int, np.integer, np.bool_)  # bool is an int
_REAL_TYPES = (float, np.floating)


def _feature(name, value):
    """(name, kind, value) for the C builder, from a Python value. Every
    value is kept exactly (floats rounded to float32, the float_list's
    type) or refused with TypeError/ValueError naming the feature."""
    if not isinstance(name, str):
        raise TypeError("feature %r: a feature name is a str" % (name,))
    if "\0" in name or not _utf8(name):
        raise ValueError("feature %r: a feature name holds a NUL character or a lone "
                         "surrogate" % name)
    if value is None:
        return (name, "none", None)
    kind = None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        if value[0] in _KINDS:
            kind, value = value
        elif not isinstance(value[1], _BYTES_TYPES):
            raise TypeError("feature %s: kind %r: want 'bytes', 'float' or 'int64'"
                            % (name, value[0]))
    if isinstance(value, np.ndarray) and value.dtype.kind not in "O":
        return _from_array(name, kind, value)
    if isinstance(value, np.generic) and not isinstance(value, (np.bytes_, np.str_)):
        return _from_array(name, kind, np.asarray(value))
    if isinstance(value, np.ndarray):  # dtype object: its items, as a list's
        items = value.ravel().tolist()
    elif isinstance(value, _BYTES_TYPES) or isinstance(value, (int, float)):
        items = [value]
    else:
        items = _list_of(name, value)
    return _from_list(name, kind, items)


def _list_of(name, value):
    if isinstance(value, (Mapping, Set)):
        raise TypeError("feature %s: a %s has no Example kind (a feature is a value, a flat "
                        "list of values or an array)" % (name, type(value).__name__))
    try:
        return list(value)
    except TypeError:
        raise TypeError("feature %s: a %s has no Example kind (a feature is bytes, str, int, "
                        "float, a flat list of them, an array or None)"
                        % (name, type(value).__name__)) from None


def _item_kind(name, i, x):
    if isinstance(x, _BYTES_TYPES):
        return "bytes"
    if isinstance(x, _INTEGER_TYPES):
        return "int64"
    if isinstance(x, _REAL_TYPES):
        return "float"
    what = "a list" if isinstance(x, (list, tuple, np.ndarray)) else \
        "None" if x is None else "a " + type(x).__name__
    raise TypeError("feature %s: item %d is %s: a feature is one flat list of numbers or of "
                    "bytes (flatten nested lists, or give a NumPy array)" % (name, i, what))


def _from_list(name, kind, items):
    kinds = {_item_kind(name, i, x) for i, x in enumerate(items)}
    if kind is None:
        if not items:
            raise TypeError("feature %s: an empty list has no kind: give ('float', []), "
                            "('int64', []) or ('bytes', [])" % name)
        if kinds == {"bytes"}:
            kind = "bytes"
        elif "bytes" in kinds:
            raise TypeError("feature %s: a list of both bytes and numbers" % name)
        else:
            kind = "int64" if kinds == {"int64"} else "float"
    if kind == "bytes":
        if kinds - {"bytes"}:
            raise TypeError("feature %s: a bytes feature of numbers (give bytes, str, or "
                            "array.tobytes())" % name)
        return (name, "bytes", [_as_bytes(name, x) for x in items])
    if "bytes" in kinds:
        raise TypeError("feature %s: a %s feature holds bytes or str" % (name, kind))
    if kind == "int64":
        return (name, "int64", np.array([_int64(name, i, x) for i, x in enumerate(items)],
                                        dtype=np.int64))
    return _from_array(name, "float", np.array([_float(name, i, x) for i, x in enumerate(items)],
                                               dtype=np.float64))


def _int64(name, i, x):
    """x as an int64 value, exactly, or ValueError."""
    if isinstance(x, _REAL_TYPES):
        if not (np.isfinite(x) and float(x).is_integer()):
            raise ValueError("feature %s: item %d is %r, not an integer (an int64 list keeps "
                             "values exactly)" % (name, i, x))
    v = int(x)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError("feature %s: item %d is %d, outside int64's range" % (name, i, v))
    return v


def _float(name, i, x):
    """x as a float, or ValueError where that is not x rounded (an int or a
    long double beyond a float's range)."""
    try:
        f = float(x)
    except OverflowError:
        f = np.inf
    if not np.isfinite(f) and (isinstance(x, _INTEGER_TYPES) or np.isfinite(x)):
        raise ValueError("feature %s: item %d is beyond float32's range (a float list is "
                         "float32)" % (name, i))
    return f


def _from_array(name, kind, a):
    """A NumPy array of a numeric, bytes or str dtype, flattened in C order."""
    k = a.dtype.kind
    if np.ma.isMaskedArray(a) and np.ma.is_masked(a):
        raise ValueError("feature %s: a masked array with masked values" % name)
    if k in "SU":
        if kind not in (None, "bytes"):
            raise TypeError("feature %s: a %s feature from an array of strings" % (name, kind))
        return (name, "bytes", [_as_bytes(name, x) for x in a.ravel().tolist()])
    if k not in "iubf":
        raise TypeError("feature %s: arrays of dtype %s have no Example kind" % (name, a.dtype))
    if kind == "bytes":
        raise TypeError("feature %s: a bytes feature from an array of numbers (give "
                        "array.tobytes())" % name)
    if kind is None:
        kind = "float" if k == "f" else "int64"
    a = a.ravel()
    if kind == "int64":
        if k == "f" and not (np.isfinite(a).all() and (a == np.round(a)).all()):
            raise ValueError("feature %s: values that are not integers (an int64 list keeps "
                             "values exactly)" % name)
        if a.size and (int(a.max()) > _INT64_MAX or int(a.min()) < _INT64_MIN):
            raise ValueError("feature %s: values outside int64's range" % name)
        return (name, "int64", np.ascontiguousarray(a.astype(np.int64)))
    with np.errstate(over="ignore"):  # integers round; only floats can overflow
        f = a.astype(np.float32)
    if k == "f" and (np.isinf(f) & np.isfinite(a)).any():
        raise ValueError("feature %s: values beyond float32's range (a float list is float32)"
                         % name)
    return (name, "float", np.ascontiguousarray(f))


def _utf8(s):
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _as_bytes(name, x):
    if isinstance(x, str):
        if not _utf8(x):
            raise ValueError("feature %s: a str with a lone surrogate has no UTF-8" % name)
        return x.encode("utf-8")
    if isinstance(x, memoryview):
        return x.tobytes()  # any shape or stride, in C order
    return x


class Example:
    """tf.train.Example to and from a dict.

    Example.parse(data) -> {name: value}: a float list is a float32 NumPy
    array, an int64 list an int64 array, a bytes list a list of bytes, and
    a Feature with no kind set None. Raises ExampleError on malformed bytes.

    Example.build(features) -> bytes, byte-identical to TensorFlow's
    serialization of the same features in the same order. Values:
      bytes / str (UTF-8) / bytearray / memoryview, or a list of them
                                                -> bytes_list
      int (bool as 0/1), a list of ints, an integer or bool array
                                                -> int64_list
      float, a list of numbers with a float, a float array (float16 to
      long double)                              -> float_list (float32)
      None                                      -> a Feature with no kind
      (kind, value) with kind "bytes", "float" or "int64" forces the kind
      (e.g. ("int64", []) for an empty list, ("bytes", img.tobytes())).
    Arrays (NumPy, any shape, 0-d included) are flattened in C order.
    Every value is kept exactly, floats rounded to float32 (the
    float_list's type: what is below its smallest subnormal becomes 0), or
    refused: TypeError or ValueError naming the
    feature for a value of no kind (a dict, a set, a complex, a Decimal,
    None in a list, a nested list, an object array of such, a list of bytes
    and numbers), an int outside int64 (2**63, a uint64 array's 2**64-1), a
    float beyond float32's range, a non-integer forced to "int64" (2.7), a
    number forced to "bytes", a str forced to a number, a kind not one of
    the three, a str with no UTF-8 (a lone surrogate), and a name that is
    not a str, holds a NUL or has no UTF-8.
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
