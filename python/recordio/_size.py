"""Size arguments: an int of bytes, or a str as the tools take it ("64M",
"1.5G"), parsed by the library's one parser (rio_size_parse in recordio.h):
K, M, G, T and KiB..TiB are powers of 1024, KB..TB powers of 1000, B bytes;
a fraction needs a unit; no blanks, signs, hex, exponents, inf or nan."""
import numpy as np

from . import _core


def is_int(x):
    """An int or a NumPy integer; never a bool (True is not a size)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def size_arg(who, name, value, most):
    """`value` as bytes when it is a str (ValueError naming `who` and the
    argument for anything the parser refuses, or more than `most`); any
    other value is returned as it is, for the caller's own checks."""
    if not isinstance(value, str):
        return value
    try:
        return _core.parse_size(value, most)
    except ValueError as e:
        raise ValueError("%s: %s=%r: %s" % (who, name, value, e)) from None
