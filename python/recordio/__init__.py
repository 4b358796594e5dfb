"""recordio: TFRecord-compatible shards from Python, over librecordio (C).

  Reader(path_or_shards)          records as bytes (every codec; r[i] with .idx)
  Writer(path, compression=...)   one shard, atomically (a context manager)
  Example.parse / Example.build   tf.train.Example <-> dict of arrays, lists, bytes
  SequenceExample.parse           tf.train.SequenceExample -> (context, lists)
  Loader(shards, batch_size, decode=..., shuffle=..., ...)
                                  multi-threaded batches as zero-copy NumPy arrays
  recordio.torch.IterableDataset  the Loader for torch.utils.data.DataLoader
  Error and its subclasses        every failure, with .file, .offset, .record

help(recordio.Loader) is the loader's manual.
"""
from . import _core
from ._errors import (CorruptRecordError, Error, ExampleError, HoldError, IndexFileError,
                      OptionError, ShardSetError, StateError, SystemCallError,
                      UnsupportedError)
from ._example import Example, SequenceExample
from ._io import Reader, Writer, expand
from ._loader import Loader

__version__ = _core.version()
HAVE_CUDA = bool(_core.HAVE_CUDA)

__all__ = ["Reader", "Writer", "Example", "SequenceExample", "Loader", "expand", "Error",
           "CorruptRecordError", "ExampleError", "HoldError", "IndexFileError", "OptionError",
           "ShardSetError", "StateError", "SystemCallError", "UnsupportedError", "HAVE_CUDA"]
