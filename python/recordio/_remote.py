"""The remote options (shards at s3:// and http(s):// URLs): the arguments
remote_part_size, remote_inflight, remote_attempts and remote_stall that
Loader, Reader and expand take, with the C library's defaults and ranges
(rio_remote_opts in recordio.h, given by _core.REMOTE), checked here so that
a message names the argument."""
from . import _core
from ._size import is_int, size_arg

# {argument: the library's field}, in the order _core takes them
_FIELDS = (("remote_part_size", "part_size"), ("remote_inflight", "inflight"),
           ("remote_attempts", "attempts"), ("remote_stall", "stall"))

# the library's defaults: 8 MiB parts, 16 requests in flight, 10 attempts,
# 30 s without progress
DEFAULTS = {arg: _core.REMOTE[field][0] for arg, field in _FIELDS}


def remote_args(who, **values):
    """The (part_size, inflight, attempts, stall) tuple _core takes, from the
    remote_* arguments in `values` (None or absent: the default; the part
    size may be a size such as "16M"); ValueError naming `who` and the
    argument for a value outside the library's range."""
    out = []
    for arg, field in _FIELDS:
        v = values.get(arg)
        default, lo, hi = _core.REMOTE[field]
        if v is None:
            v = default
        elif field == "part_size":
            v = size_arg(who, arg, v, hi)
        if not is_int(v) or not lo <= v <= hi:
            raise ValueError("%s: %s=%r: want an integer from %d to %d%s"
                             % (who, arg, v, lo, hi,
                                " (or a size such as '16M')" if field == "part_size" else ""))
        out.append(int(v))
    return tuple(out)
