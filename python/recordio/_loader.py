"""recordio.Loader: the C loader's batches as dicts of NumPy arrays, no copy."""
import gc
import math
import os
import sys

import numpy as np

from . import _core
from ._errors import HoldError
from ._remote import DEFAULTS as _REMOTE, remote_args
from ._size import is_int as _is_int, size_arg

__all__ = ["Loader"]

_DTYPES = {"u8": "u8", "uint8": "u8", "f32": "f32", "float32": "f32", "i64": "i64",
           "int64": "i64", "bf16": "bf16", "bfloat16": "bf16"}


def _bf16_array(column):
    """A bf16 column as NumPy has it: an ml_dtypes.bfloat16 array when
    ml_dtypes is installed, else a uint16 array of the same bits (widen
    with (a.astype(np.uint32) << 16).view(np.float32)). Either is a view
    of the batch's memory; torch.from_dlpack(column) gives torch.bfloat16."""
    a = np.asarray(column)
    try:
        import ml_dtypes
    except ImportError:
        return a
    return a.view(ml_dtypes.bfloat16)


def _column_of(array):
    """The _core.Column under an array the Loader handed out."""
    while array is not None and not isinstance(array, _core.Column):
        array = array.base
    return array


def _columns(decode):
    """decode dict -> ([(name, dtype, length, scale)], (record shape, ...)),
    each checked: ValueError naming the column for what the C loader would
    read otherwise (a name that is not a str, holds a NUL or is too long),
    a shape that is not positive integers, a record of more values than
    the loader takes (batch_size * its bytes wrapped around: SIGBUS), and
    a scale that is not a finite non-zero float32 number."""
    cols, shapes = [], []
    for name, spec in decode.items():
        if not isinstance(name, str) or "\0" in name or not 0 < _utf8_len(name) < 128:
            raise ValueError("decode[%r]: a feature name is a str of 1 to 127 bytes without "
                             "NUL" % (name,))
        if isinstance(spec, str):
            spec = (spec, 1)
        if not isinstance(spec, (tuple, list)) or not 2 <= len(spec) <= 3:
            raise ValueError("decode[%r]: want (dtype, length or shape[, scale])" % name)
        try:
            dtype = _DTYPES.get(spec[0] if isinstance(spec[0], str) else str(np.dtype(spec[0])))
        except TypeError:
            dtype = None
        if dtype is None:
            raise ValueError("decode[%r]: dtype %r: want u8, f32, bf16 or i64" % (name, spec[0]))
        shape = _shape(name, spec[1])
        length = math.prod(shape)
        if length > _core.MAX_COLUMN_LENGTH:
            raise ValueError("decode[%r]: %d values per record: at most %d" %
                             (name, length, _core.MAX_COLUMN_LENGTH))
        scale = _scale(name, dtype, spec[2]) if len(spec) == 3 else 0.0
        cols.append((name, dtype, length, scale))
        shapes.append(shape)
    return cols, tuple(shapes)


def _utf8_len(name):
    try:
        return len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate
        return -1


def _shape(name, spec):
    """A record's shape: an int n is (n,), () a scalar; dimensions >= 1."""
    shape = (spec,) if _is_int(spec) else spec
    if not isinstance(shape, (tuple, list)) or not all(_is_int(d) for d in shape):
        raise ValueError("decode[%r]: length or shape %r: want an int or a tuple of ints"
                         % (name, spec))
    if any(d < 1 for d in shape):
        raise ValueError("decode[%r]: shape %r: every dimension 1 or more" % (name, spec))
    return tuple(int(d) for d in shape)


def _scale(name, dtype, scale):
    if dtype not in ("f32", "bf16"):
        raise ValueError("decode[%r]: a scale applies to f32 and bf16 only" % name)
    try:  # a number: not a bool, nor a str that NumPy would read as one
        if isinstance(scale, (bool, np.bool_, str, bytes)):
            raise TypeError
        with np.errstate(over="ignore"):
            f = float(np.float32(scale))
    except (TypeError, ValueError, OverflowError):
        f = math.nan
    if not math.isfinite(f) or f == 0:
        raise ValueError("decode[%r]: scale %r: want a finite float32 other than 0"
                         % (name, scale))
    return f


_U64 = (1 << 64) - 1
_SSIZE = (1 << 63) - 1
_INT = (1 << 31) - 1
# the C loader's integer options: the range of their C types, so that none
# wraps (seed=-1, cache=-1 were 2**64-1); the loader checks its own limits
_INT_OPTIONS = {"batch_size": (1, _SSIZE), "seed": (0, _U64), "workers": (1, _INT),
                "rank": (-1, _INT), "world": (-1, _INT), "shuffle_buffer": (1, _SSIZE),
                "interleave": (1, _SSIZE), "prefetch": (0, _SSIZE), "hold": (1, _SSIZE),
                "chunk_bytes": (1, _SSIZE), "max_record_size": (0, _U64), "device": (0, _INT),
                "cache": (0, _U64), "shard_cache_limit": (0, _U64)}


# the options that take a size: an int, or a str such as "64M" (_size.py)
_SIZE_OPTIONS = ("chunk_bytes", "max_record_size", "cache", "shard_cache_limit")


def _check_ints(opts):
    for name, (lo, hi) in _INT_OPTIONS.items():
        v = opts[name]
        if not _is_int(v) or not lo <= v <= hi:
            raise ValueError("Loader: %s=%r: want an integer from %d to %d" % (name, v, lo, hi))


def _dist_rank_world():
    """torch.distributed's rank and world when it is initialised (only when
    the program imported torch), else (-1, -1): the C loader's environment
    defaults (OMPI_COMM_WORLD_*, PMI_*, SLURM_*, else 0 of 1)."""
    if "torch" in sys.modules:
        try:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank(), dist.get_world_size()
        except ImportError:
            pass
    return -1, -1


def _cuda_present():
    if not _core.HAVE_CUDA or "torch" not in sys.modules:
        return False
    try:
        return bool(sys.modules["torch"].cuda.is_available())
    except Exception:
        return False


def _from_core(name, doc):
    """A read-only property that hands out the C loader's attribute `name`."""
    return property(lambda self: getattr(self._c, name), doc=doc)


class Loader:
    """Batches of a set of TFRecord shards for one rank of a training job.

    Loader(shards, batch_size=32, decode=None, shuffle="buffer", seed=0,
           workers=2, rank=None, world=None, drop_remainder=False,
           skip_damaged=False, shuffle_buffer=10000, interleave=4,
           prefetch=0, hold=4, sharding="auto", io="auto", verify_crc=True,
           pin_memory=None, chunk_bytes=1 MiB, direct=False,
           max_record_size=0, device=0, cache=0, shard_cache=None,
           shard_cache_limit=0, remote_part_size=8 MiB, remote_inflight=16,
           remote_attempts=10, remote_stall=30)

    Iterating gives one epoch of batches; iterating again gives the next:

        loader = recordio.Loader("data/train", batch_size=128, seed=1,
                                 decode={"image": ("f32", 784, 1 / 255),
                                         "label": ("i64", ())})
        for epoch in range(10):
            for batch in loader:        # {"image": (128, 784) float32,
                ...                     #  "label": (128,) int64}

    shards       a glob, a comma-separated list, a directory, a shard
                 PREFIX, a file, or a list of paths (see recordio.expand);
                 in S3 too ("s3://bucket/data/train", a glob of keys, a
                 "directory" s3://bucket/data/), and shards at http(s)://
                 URLs (doc/remote.md: the AWS settings, retries, errors).
    decode       {feature: (dtype, length or shape[, scale])}: each record
                 is a tf.train.Example whose feature becomes one row of a
                 dense column. dtype "u8" (from a bytes feature of that many
                 bytes), "f32" (from a float list, an int64 list, or a
                 bytes feature's bytes as numbers; multiplied by scale when
                 given), "bf16" (the f32 value rounded to bfloat16, to
                 nearest even, as it is decoded: half the memory; an
                 ml_dtypes.bfloat16 array when ml_dtypes is installed, else
                 a uint16 array of the bits; recordio.torch gives
                 torch.bfloat16 through DLPack), "i64" (from an int64
                 list). length n gives arrays
                 of shape (batch, n); a shape tuple gives (batch, *shape),
                 () a scalar per record: (batch,). A record whose feature
                 is missing or of another length raises ExampleError (or is
                 skipped with skip_damaged). None (default): undecoded
                 mode, each batch is a list of the records' bytes. Checked
                 at construction (ValueError naming the feature): a name
                 of 1 to 127 UTF-8 bytes without NUL, dimensions of 1 or
                 more, at most recordio._core.MAX_COLUMN_LENGTH (2**30)
                 values per record, a finite non-zero float32 scale. The
                 integer options are checked alike (never wrapped).
    shuffle      "none" (shard order), "buffer" (tf.data's scheme: shards
                 in a per-epoch order, `interleave` read at once, through a
                 buffer of `shuffle_buffer` records) or "global" (an exact
                 permutation of the rank's records per epoch; uncompressed
                 shards). The order depends only on seed, epoch, rank,
                 world, data and options, never on workers or timing.
    rank, world  this process's part of the data. None: torch.distributed's
                 when it is initialised, else the MPI/Slurm environment
                 (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/
                 NTASKS), else 0 of 1. Every record appears once per epoch
                 across the ranks; len(loader) is the same on every rank
                 when drop_remainder=True (no rank waits at a collective).
    sharding     "auto", "files" (rank r takes shards r, r+W, ...) or
                 "records" (balanced ranges of records; needs .idx files
                 or scans the shards once).
    workers      reader/decoder threads. prefetch: ready batches queued
                 (default 0: automatic, 4 batches, or about 512 records'
                 worth of small batches, up to 16).
    hold         batches whose arrays may be alive at once (default 4):
                 the pool has prefetch + hold batch slots. Asking for a
                 batch while `hold` are alive raises HoldError: copy what
                 must outlive the step (array.copy()), or raise hold.
    pin_memory   the batches' memory is pinned (page-locked) CUDA host
                 memory, so tensor.cuda(non_blocking=True) is asynchronous.
                 None (default): when this build has CUDA and
                 torch.cuda.is_available().
    skip_damaged damaged records (and records that do not match decode)
                 are skipped and counted in stats()["skipped"] instead of
                 raising.
    cache        bytes (0, the default: off), an int or a size such as
                 "512M" or "1.5G" (as chunk_bytes and max_record_size:
                 K, M, G, T and KiB..TiB are powers of 1024, KB..TB
                 powers of 1000). When the compressed shards
                 (gzip, zlib, lz4) this rank reads hold at most `cache`
                 bytes decompressed, they are decompressed once, when the
                 loader opens (and, with decode, each record decoded once,
                 into rows kept in memory; uncompressed shards are then
                 read in too, with buffer shuffling), and every epoch is
                 served from memory: the same batches, several times
                 faster, with less CPU (as
                 tf.data's .cache(), but the shuffle still changes every
                 epoch). All or nothing: shards that do not fit (or a
                 damaged one, or skip_damaged) are read from the files as
                 without it. stats()["cache_bytes"]: the bytes held.
    shard_cache  a directory (None, the default: none): shards at URLs are
                 downloaded there whole, once, verified, and later epochs
                 (and other loaders and processes of the host sharing the
                 directory) read the local copies. Not the in-memory
                 `cache`. shard_cache_limit: bytes of copies kept (an int
                 or a size such as "20G"; 0, the default: no limit); the
                 least recently used copies no loader holds are deleted to
                 make room, never a file the cache did not download, and a
                 shard larger than the limit is read from the network.
    remote_part_size, remote_inflight, remote_attempts, remote_stall
                 how shards at URLs are read (rio_loader_opts.remote in
                 loader.h, recordio-bench's --remote-* options): bytes per
                 ranged GET (default 8 MiB; an int or a size such as "16M",
                 64K to 1G), GETs in flight at once for the whole loader
                 (default 16, 1 to 256), tries of a request that fails for
                 a passing reason (a reset, a stall, 429, 5xx: default 10,
                 1 to 100) and seconds without progress before a transfer
                 is broken off and retried (default 30, 1 to 3600).
    chunk_bytes  bytes a worker reads at a time, 4096 or more (default
                 1 MiB; 0 is refused).
    max_record_size  the longest record accepted (0, the default: the
                 library's limit, 256 MiB).
    io, direct, verify_crc: see loader.h.

    Batches are views, not copies: each array's memory is the loader's
    batch slot (arr.base is a recordio._core.Column, arr.flags.owndata is
    False), and the slot returns to the pool once every array of the batch
    (and every tensor made from one with torch.from_numpy or
    torch.from_dlpack) is gone. The arrays are writable and support
    __dlpack__, so torch.from_dlpack(arr) shares the memory.

    The GIL is released while waiting for a batch, and Ctrl-C
    (KeyboardInterrupt) interrupts the wait promptly. Errors are
    recordio.Error subclasses with .file, .offset and .record. A loader is
    used from one thread; two loaders in one process are independent.

    Resuming: state_dict() after batch k of an epoch, and
    load_state_dict(state) on a new Loader with the same data, options,
    rank and world, make its next batch batch k+1 of that epoch, records
    and order identical (the shuffle state included). The pair follows
    torchdata's StatefulDataLoader protocol.

    close() (or `with Loader(...) as loader:`) stops the threads; memory of
    batches still alive is freed when the last of them goes.
    """

    def __init__(self, shards, batch_size=32, decode=None, shuffle="buffer", seed=0, workers=2,
                 rank=None, world=None, drop_remainder=False, skip_damaged=False,
                 shuffle_buffer=10000, interleave=4, prefetch=0, hold=4, sharding="auto",
                 io="auto", verify_crc=True, pin_memory=None, chunk_bytes=1 << 20, direct=False,
                 max_record_size=0, device=0, cache=0, shard_cache=None, shard_cache_limit=0,
                 remote_part_size=_REMOTE["remote_part_size"],
                 remote_inflight=_REMOTE["remote_inflight"],
                 remote_attempts=_REMOTE["remote_attempts"],
                 remote_stall=_REMOTE["remote_stall"]):
        if isinstance(shards, (str, bytes, os.PathLike)):
            spec = os.fsdecode(shards)
        else:  # the C loader takes one comma-separated specification
            paths = [os.fsdecode(p) for p in shards]
            for p in paths:
                if "," in p:
                    raise ValueError("Loader: shards: %r: a path with a comma cannot be one "
                                     "of a list (it would be split there); give it alone"
                                     % (p,))
            spec = ",".join(paths)
        if rank is None or world is None:
            r, w = _dist_rank_world()
            rank = r if rank is None else rank
            world = w if world is None else world
        chunk_bytes, max_record_size, cache, shard_cache_limit = (
            size_arg("Loader", name, value, _INT_OPTIONS[name][1]) for name, value in
            zip(_SIZE_OPTIONS, (chunk_bytes, max_record_size, cache, shard_cache_limit)))
        _check_ints(dict(batch_size=batch_size, seed=seed, workers=workers, rank=rank,
                         world=world, shuffle_buffer=shuffle_buffer, interleave=interleave,
                         prefetch=prefetch, hold=hold, chunk_bytes=chunk_bytes,
                         max_record_size=max_record_size, device=device, cache=cache,
                         shard_cache_limit=shard_cache_limit))
        if shard_cache is not None:
            shard_cache = os.fsdecode(shard_cache)
            if not shard_cache:
                raise ValueError("Loader: shard_cache='': want a directory, or None for none")
        elif shard_cache_limit:
            raise ValueError("Loader: shard_cache_limit=%r without a shard_cache directory"
                             % (shard_cache_limit,))
        remote = remote_args("Loader", remote_part_size=remote_part_size,
                             remote_inflight=remote_inflight, remote_attempts=remote_attempts,
                             remote_stall=remote_stall)
        if pin_memory is None:
            pin_memory = _cuda_present()
        self.decode = dict(decode) if decode else None
        cols, self._shapes = _columns(decode) if decode else (None, ())
        self._names = tuple(c[0] for c in cols) if cols else ()
        self._bf16 = frozenset(c[0] for c in cols if c[1] == "bf16") if cols else frozenset()
        self._c = _core.Loader(spec, batch_size, cols, shuffle, seed, workers, rank, world,
                               drop_remainder, skip_damaged, shuffle_buffer, interleave,
                               prefetch, hold, sharding, io, verify_crc, bool(pin_memory),
                               chunk_bytes, direct, max_record_size, device, cache, remote,
                               shard_cache, shard_cache_limit)
        self.batch_size = batch_size
        self.pinned = bool(pin_memory)

    # ---- iteration ------------------------------------------------------

    def __iter__(self):
        return self

    def __next__(self):
        try:
            b = self._c.next()
        except HoldError:
            gc.collect()  # batches kept only by reference cycles
            b = self._c.next()
        if b is None:
            raise StopIteration
        if not self._names:
            return b.records()
        return {name: _bf16_array(c) if name in self._bf16 else np.asarray(c)
                for name, c in zip(self._names, b.columns(self._shapes))}

    def __len__(self):
        """Batches per epoch on this rank (a shorter epoch is possible only
        when skip_damaged skips records)."""
        return self._c.batches

    # ---- position -------------------------------------------------------

    epoch = _from_core("epoch", "The epoch the next batch comes from.")
    position = _from_core("position", "Records delivered so far in the current epoch.")

    def set_epoch(self, epoch):
        """Ends the current epoch where it is and makes the next batch the
        first of `epoch` (its reading starts at once)."""
        if not _is_int(epoch) or not 0 <= epoch < 1 << 64:
            raise ValueError("Loader: set_epoch(%r): want an integer from 0 to 2**64-1"
                             % (epoch,))
        self._c.set_epoch(int(epoch))

    def state_dict(self):
        """The position as a small picklable dict: the next batch after a
        load_state_dict() of it is the one this loader hands out next."""
        return {"recordio_loader_state": self._c.state_save(), "epoch": self._c.epoch,
                "position": self._c.position}

    def load_state_dict(self, state):
        """Restores a state_dict(); StateError if it belongs to other data,
        rank, world or options."""
        self._c.state_restore(state["recordio_loader_state"])

    # ---- facts ----------------------------------------------------------

    full_batches = _from_core("full_batches", "Full batches per epoch on this rank.")
    records = _from_core("records", "Records this rank reads per epoch.")
    rank = _from_core("rank", "This loader's rank.")
    world = _from_core("world", "The world size.")
    shards = _from_core("shards", "The sorted shard list.")

    def stats(self):
        """Counters: records, bytes, batches, skipped, file_bytes,
        index_mismatches, wait_seconds, io_uring and the first warning."""
        return self._c.stats()

    # ---- lifetime -------------------------------------------------------

    closed = _from_core("closed", "True once close() has been called.")

    def close(self):
        """Stops the threads; batches still alive stay valid and their
        memory goes when the last of them does."""
        self._c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self.closed:
            return "<recordio.Loader closed>"
        return "<recordio.Loader %d shards, %d records, batch_size %d, rank %d of %d>" % (
            len(self.shards), self.records, self.batch_size, self.rank, self.world)
