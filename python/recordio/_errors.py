"""recordio's exceptions: one class per kind of failure, all recordio.Error.

Each carries what the C library knows about where it happened: `code` (the
library's RIO_E* code or a negative errno), `file` (the shard or index file,
or None), `offset` (byte offset in the uncompressed stream, or None) and
`record` (record number in the shard, or None). str(e) is the library's
one-line message, which names the file, offset and record.
"""
import errno as _errno

from . import _core


class Error(Exception):
    """Base class of every error recordio raises from its C library."""

    def __init__(self, message, code=0, file=None, offset=None, record=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.file = file
        self.offset = offset
        self.record = record


class CorruptRecordError(Error):
    """A damaged record: bad length or data CRC, a truncated record, a length
    over the limit, or a damaged compressed stream."""


class ExampleError(Error, ValueError):
    """A malformed tf.train.Example, or a feature missing, of another kind, or
    of another length than the loader's decode spec says."""


class IndexFileError(Error):
    """A malformed .idx sidecar, or one that does not match its shard."""


class ShardSetError(Error):
    """No shards match, a shard of a set is missing, names disagree, or a set
    is half replaced (an interrupted recordio-pack)."""


class UnsupportedError(Error):
    """Not supported for this file (e.g. random access in a compressed shard,
    the global shuffle over compressed shards, a Writer's path that is a
    FIFO, a device node or a symbolic link)."""


class StateError(Error, ValueError):
    """A saved loader state that is damaged or belongs to another loader
    (other data, rank, world or options)."""


class SystemCallError(Error, OSError):
    """An operating-system error (errno), e.g. a file that cannot be read."""

    def __init__(self, message, code=0, file=None, offset=None, record=None):
        Error.__init__(self, message, code, file, offset, record)
        self.errno = -code
        # str() is OSError's "[Errno N] TEXT: 'FILE'": TEXT without the file
        prefix = "%s: " % file if file else None
        self.strerror = message[len(prefix):] if prefix and message.startswith(prefix) else message
        if file is not None:  # None would be shown: "[Errno 19] TEXT: None"
            self.filename = file
        self.args = (message,)


class OptionError(Error, ValueError):
    """An option out of its range (the message names it)."""


class HoldError(Error):
    """The consumer holds as many batches as the loader's `hold`: drop or copy
    the arrays of older batches, or open the loader with a larger hold."""


_CLASSES = {
    _core.RIO_ECORRUPT_LENGTH: CorruptRecordError,
    _core.RIO_ECORRUPT_DATA: CorruptRecordError,
    _core.RIO_ETRUNCATED: CorruptRecordError,
    _core.RIO_ETOOLARGE: CorruptRecordError,
    _core.RIO_ECOMPRESSED: CorruptRecordError,
    _core.RIO_EBADEXAMPLE: ExampleError,
    _core.RIO_ENOFEATURE: ExampleError,
    _core.RIO_EFEATUREKIND: ExampleError,
    _core.RIO_EFEATURELEN: ExampleError,
    _core.RIO_EBADINDEX: IndexFileError,
    _core.RIO_EMISSINGSHARD: ShardSetError,
    _core.RIO_ENOSHARDS: ShardSetError,
    _core.RIO_EBADSHARDNAME: ShardSetError,
    _core.RIO_EINCOMPLETESET: ShardSetError,
    _core.RIO_EUNSUPPORTED: UnsupportedError,
    _core.RIO_ERANGE: Error,
    _core.RIO_ESTATE: StateError,
    -_errno.EINVAL: OptionError,
    -_errno.ENOBUFS: HoldError,
}


_OS_BUILTIN = {_errno.ENOENT: FileNotFoundError, _errno.EEXIST: FileExistsError,
               _errno.EACCES: PermissionError, _errno.EPERM: PermissionError,
               _errno.EISDIR: IsADirectoryError, _errno.ENOTDIR: NotADirectoryError,
               _errno.EINTR: InterruptedError, _errno.ETIMEDOUT: TimeoutError}
_OS_CLASSES = {}


def _os_class(err):
    """SystemCallError, also the builtin OSError subclass of errno `err`
    (FileNotFoundError for ENOENT...), so `except FileNotFoundError` works."""
    builtin = _OS_BUILTIN.get(err)
    if builtin is None:
        return SystemCallError
    cls = _OS_CLASSES.get(err)
    if cls is None:
        cls = _OS_CLASSES[err] = type(builtin.__name__, (SystemCallError, builtin),
                                      {"__module__": "recordio", "__doc__": SystemCallError.__doc__})
    return cls


def make_error(code, message, file, offset, record):
    """The exception for a C error (called by the extension)."""
    cls = _CLASSES.get(code)
    if cls is None:
        cls = _os_class(-code) if -4096 < code < 0 else Error
    return cls(message, code, file, offset, record)


_core._set_error_factory(make_error)


# shown as recordio.CorruptRecordError (etc.) in tracebacks: where users import them
for _cls in (Error, CorruptRecordError, ExampleError, IndexFileError, ShardSetError,
             UnsupportedError, StateError, SystemCallError, OptionError, HoldError):
    _cls.__module__ = "recordio"
