"""Reader and Writer: TFRecord shards as sequences of bytes."""
import array
import bisect
import operator
import os

from . import _core
from ._errors import make_error
from ._remote import DEFAULTS as _REMOTE, remote_args
from ._size import is_int as _is_int, size_arg

__all__ = ["Reader", "Writer", "expand"]


def expand(spec, remote_attempts=_REMOTE["remote_attempts"],
           remote_stall=_REMOTE["remote_stall"]):
    """The sorted list of shard paths a specification names: a glob
    ("data/train-*.tfrecord"), a comma-separated list, a directory, a shard
    PREFIX ("data/train" for data/train-SSSSS-of-NNNNN.tfrecord[.gz|.zz|.lz4])
    or a file. A set named by a directory or PREFIX must be complete, and a
    glob must find every shard of a set whose name it matches (a missing
    shard raises ShardSetError naming it); a glob that matches only some
    shards' names ("data/train-0000[0-2]-of-00004.tfrecord") reads just
    those. The same forms in S3 ("s3://bucket/data/train", a glob of keys,
    "s3://bucket/data/") are listed (ListObjectsV2): remote_attempts and
    remote_stall are its requests' (as Reader's)."""
    remote = remote_args("expand", remote_attempts=remote_attempts, remote_stall=remote_stall)
    return _core.expand(os.fspath(spec), remote)


def _paths(path_or_shards, remote):
    if isinstance(path_or_shards, (str, bytes, os.PathLike)):
        p = os.fsdecode(path_or_shards)
        if os.path.isfile(p):
            return [p]
        return _core.expand(p, remote)
    paths = [os.fsdecode(p) for p in path_or_shards]
    if not paths:
        raise ValueError("Reader: an empty list of shards")
    return paths


def _uint64s(buf):
    """A bytearray of native uint64s, or an array("Q"), as a uint64 view."""
    return memoryview(buf).cast("B").cast("Q")


# the names the C library takes for each codec (any case), and their own
_CODECS = {"none": "none", "": "none", "gzip": "gzip", "gz": "gzip", "zlib": "zlib",
           "zz": "zlib", "lz4": "lz4"}


def _codec(who, compression, auto):
    """The codec's name ("none", "gzip", "zlib", "lz4", or "auto" where
    `auto`), else ValueError naming the argument."""
    name = _CODECS.get(compression.lower()) if isinstance(compression, str) else None
    if name is None and auto and isinstance(compression, str) and compression.lower() == "auto":
        name = "auto"
    if name is None:
        raise ValueError("%s: compression=%r: want %s'none', 'gzip', 'zlib' or 'lz4'"
                         % (who, compression, "'auto', " if auto else ""))
    return name


class Reader:
    """Reads the records of one shard or of a set of shards, in order.

    Reader(path_or_shards, compression="auto", verify_crc=True,
           skip_damaged=False, max_record_size=0, remote_part_size=8 MiB,
           remote_inflight=16, remote_attempts=10, remote_stall=30)

    path_or_shards: a file, a shard specification (see expand()) or a list
    of files; any of them may be at an s3:// or http(s):// URL
    (doc/remote.md). Every codec reads the same (none, gzip, zlib, LZ4
    frames; the compression of each file is detected from its bytes unless
    given).

        for payload in recordio.Reader("data/train"):   # bytes
            ...
        r = recordio.Reader("data/train-00000-of-00008.tfrecord")
        len(r), r[10], r[-1]                            # random access

    Iterating yields each record's payload as bytes. len() and r[i] need the
    number and place of each record: they come from each shard's .idx
    sidecar (recordio-index or Writer(index=True) writes one), or from one
    scan of a shard that has none (list(reader) asks len() first, so it
    reads such a shard twice: index the shards that are read often). r[i] reads one record with one seek in an
    uncompressed shard; in a compressed shard it decompresses the stream up
    to record i (slow: keep .idx-backed random access to uncompressed
    shards). A damaged record raises CorruptRecordError naming the file,
    offset and record; with skip_damaged=True damaged records are skipped
    while iterating (and counted in `skipped`). An uncompressed shard's
    .idx whose records do not end where the shard does (the shard was
    replaced, cut or grown since it was indexed) raises
    IndexFileError naming it, or with skip_damaged=True is replaced by a
    scan; a compressed shard's .idx is trusted for len(). max_record_size:
    the longest record accepted, an int of bytes or a size such as "64M"
    (K, M, G, T powers of 1024, KB, MB, GB, TB of 1000); 0, the default, is
    the library's limit (256 MiB).

    Shards at URLs (s3://, http://, https://) are read with parallel ranged
    GETs; the remote_* arguments are the library's (rio_remote_opts in
    recordio.h, the tools' --remote-* options): remote_part_size bytes a
    GET (an int or a size such as "16M", 64K to 1G), remote_inflight GETs
    at once (1 to 256), remote_attempts tries of a request that fails for a
    passing reason (a reset, a stall, 429, 5xx; 1 to 100) and remote_stall
    seconds without progress before a transfer is broken off and retried
    (1 to 3600). The defaults are the library's.
    """

    def __init__(self, path_or_shards, compression="auto", verify_crc=True,
                 skip_damaged=False, max_record_size=0,
                 remote_part_size=_REMOTE["remote_part_size"],
                 remote_inflight=_REMOTE["remote_inflight"],
                 remote_attempts=_REMOTE["remote_attempts"],
                 remote_stall=_REMOTE["remote_stall"]):
        max_record_size = size_arg("Reader", "max_record_size", max_record_size, (1 << 64) - 1)
        if not _is_int(max_record_size) or not 0 <= max_record_size < 1 << 64:
            raise ValueError("Reader: max_record_size=%r: want an integer or a size such as "
                             "'64M', from 0 (the default limit) to 2**64-1" % (max_record_size,))
        compression = _codec("Reader", compression, auto=True)
        remote = remote_args("Reader", remote_part_size=remote_part_size,
                             remote_inflight=remote_inflight, remote_attempts=remote_attempts,
                             remote_stall=remote_stall)
        self.paths = _paths(path_or_shards, remote)
        self._opts = dict(compression=compression, verify_crc=verify_crc,
                          skip_damaged=skip_damaged, max_record_size=int(max_record_size),
                          remote=remote)
        self._indexes = [None] * len(self.paths)
        self._ends = None
        self._random = {}
        self.skipped = 0
        self._closed = False

    def _open(self, path):
        return _core.Reader(path, **self._opts)

    def __iter__(self):
        self._check()
        for path in self.paths:
            r = self._open(path)
            try:
                while True:
                    rec = r.next()
                    if rec is None:
                        break
                    yield rec
                self.skipped += r.skipped
            finally:
                r.close()

    def _sidecar(self, path):
        """The shard's .idx as (offsets, sizes), or None where it has none.
        An uncompressed shard's .idx whose records end elsewhere than the
        shard does lists another file's records: IndexFileError, or with
        skip_damaged None (the shard is scanned instead). A shard at a URL
        takes two requests here (the .idx's GET, the shard's HEAD), never
        a read of the shard."""
        idx = path + ".idx"
        try:
            off, size = _core.index_read(idx, self._opts["remote"])
        except FileNotFoundError:  # no sidecar (a 404 for a URL)
            return None
        n = len(off) // 8
        end = _uint64s(off)[n - 1] + _uint64s(size)[n - 1] if n else 0
        have = _core.path_size(path, self._opts["remote"])
        if have is None or end == have:  # None: a server that sent no size
            return off, size
        r = self._open(path)
        try:
            compressed = r.compression != "none"  # its offsets are in the stream
        finally:
            r.close()
        if compressed:
            return off, size
        if self._opts["skip_damaged"]:
            return None
        raise make_error(_core.RIO_EBADINDEX, "%s: malformed or mismatched index: its %d "
                         "records end at byte %d, the shard is %d bytes (replaced, cut or "
                         "grown since it was indexed): rebuild it with recordio-index"
                         % (idx, n, end, have), idx, None, None)

    def _index(self, i):
        if self._indexes[i] is None:
            path = self.paths[i]
            got = self._sidecar(path)
            if got is not None:
                off, size = got
            elif not self._opts["skip_damaged"]:
                off, size = _core.index_build(path, self._opts["remote"])
            else:  # the places of the records that are whole
                off, size = array.array("Q"), array.array("Q")
                r = self._open(path)
                try:
                    for o, s in iter(r.next_entry, None):
                        off.append(o)
                        size.append(s)
                finally:
                    r.close()
            self._indexes[i] = (_uint64s(off), _uint64s(size))
        return self._indexes[i]

    def _counts(self):
        if self._ends is None:
            ends, total = [], 0
            for i in range(len(self.paths)):
                total += len(self._index(i)[0])
                ends.append(total)
            self._ends = ends
        return self._ends

    def __len__(self):
        self._check()
        ends = self._counts()
        return ends[-1] if ends else 0

    def __getitem__(self, i):
        self._check()
        n = len(self)
        try:
            i = want = operator.index(i)  # an int, a NumPy integer
        except TypeError:
            raise TypeError("Reader indices are integers, not %s" % type(i).__name__) from None
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("record %d of %d" % (want, n))
        ends = self._counts()
        f = bisect.bisect_right(ends, i)
        local = i - (ends[f - 1] if f else 0)
        r = self._random.get(f)
        if r is None:
            r = self._random[f] = self._open(self.paths[f])
        if r.compression == "none":
            off, size = self._index(f)
            return r.read_at(off, size, local)
        seq = self._open(self.paths[f])  # a stream: read up to the record
        try:
            for _ in range(local):
                if seq.next() is None:
                    break
            rec = seq.next()
        finally:
            seq.close()
        if rec is None:
            raise IndexError("%s: record %d: the shard ends before it" % (self.paths[f], local))
        return rec

    def _check(self):
        if self._closed:
            raise ValueError("the reader is closed")

    def close(self):
        """Closes the files held open for random access."""
        for r in self._random.values():
            r.close()
        self._random.clear()
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


_SUFFIXES = ((".gz", "gzip"), (".zz", "zlib"), (".lz4", "lz4"))
_LEVELS = {"gzip": 9, "zlib": 9, "lz4": 12}  # "none": 0 only (a level would do nothing)


class Writer:
    """Writes one shard, atomically.

    Writer(path, compression=None, level=0, fsync=False, overwrite=True,
           index=False)

        with recordio.Writer("out/train-00000-of-00001.tfrecord.gz") as w:
            for ex in examples:
                w.write(recordio.Example.build(ex))

    Records go to a hidden temporary file beside `path`; only a successful
    close() renames it to `path`, so a crash, an error, or an exception
    inside the with-block leaves no file under `path` (the block's exception
    aborts the writer). compression: "none", "gzip", "zlib" or "lz4";
    None (the default) takes it from the name (.gz, .zz, .lz4, else none).
    level: 0 for the codec's fast default, 1-9 for zlib's deflate (lz4
    1-12; uncompressed: 0 only, else ValueError). fsync: the file and its
    directory are synced on close.
    overwrite=False: an existing `path` is never replaced (FileExistsError).
    index=True: also writes the .idx sidecar on close (for random access
    and the loader's record sharding). write() returns the record's offset.

    The .idx of the file replaced (and one that close() could not write)
    is removed: an index never outlives its file.

    Only a regular file is ever replaced. A `path` (or, with index=True,
    its .idx) that exists and is anything else is refused here, at open,
    with a recordio.Error naming it: a directory (IsADirectoryError), a
    FIFO, a device node such as /dev/null, or a symbolic link, even one to
    a regular file (UnsupportedError: links are not written through; give
    the link's target). What appears there while writing is refused by
    close() the same way, and the temporary file removed.
    """

    def __init__(self, path, compression=None, level=0, fsync=False, overwrite=True,
                 index=False):
        self.path = os.fsdecode(path)
        if compression is None:
            compression = next((c for s, c in _SUFFIXES if self.path.endswith(s)), "none")
        self.compression = compression = _codec("Writer", compression, auto=False)
        top = _LEVELS.get(compression, 0)
        if not _is_int(level) or not 0 <= level <= top:
            raise ValueError("Writer: level=%r: want 0 to %d for compression %r" %
                             (level, top, compression))
        level = int(level)
        self._w = _core.Writer(self.path, compression=compression, level=level, fsync=fsync,
                               overwrite=overwrite, index=index)

    def write(self, data):
        """Appends one record (any bytes-like payload); returns its offset in
        the uncompressed stream."""
        return self._w.write(data)

    @property
    def records(self):
        """Records written so far."""
        return self._w.records

    def close(self):
        """Finishes the file and renames it into place (raises on failure,
        and then nothing appears under path)."""
        self._w.close()

    def abort(self):
        """Discards everything written: nothing appears under path."""
        self._w.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False
