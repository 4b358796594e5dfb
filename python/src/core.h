/*
 * core.h — what the files of recordio._core, the CPython extension over
 * librecordio, share: the error hook and the type objects each file defines.
 * The Python package (python/recordio/) wraps these types; only that layer
 * knows NumPy (the extension uses no NumPy C API, so one build works with
 * any NumPy: columns reach NumPy through __array_interface__).
 */
#ifndef RIO_PY_CORE_H
#define RIO_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "recordio.h"
#include "loader.h"

/* Raises the recordio.Error subclass for `code`, with the message and the
 * offset/record of `e` (may be NULL: rio_strerror(code) then) and `file`
 * (may be NULL: taken from the message's "PATH: " prefix when that names
 * one of `paths`, a NULL-terminated array that may be NULL). Returns NULL. */
PyObject *rio_py_raise(int code, const rio_error *e, const char *file,
                       char *const *paths, size_t npaths);

/* The same from a plain message. */
PyObject *rio_py_raise_msg(int code, const char *file, const char *fmt, ...);

/* A list of `n` items, item(ctx, i) making each (a new reference, or NULL
 * with an exception set: the list is then dropped). NULL on failure. */
PyObject *rio_py_list(size_t n, PyObject *(*item)(const void *ctx, size_t i), const void *ctx);

/* A list of str from `n` file-system paths (decoded as os.fsdecode does). */
PyObject *rio_py_paths_list(char *const *paths, size_t n);

/* A PyArg "O&" converter: None (the defaults) or the tuple (part_size,
 * inflight, attempts, stall) into the rio_remote_opts at `out`, checked
 * (ValueError with rio_remote_opts_check's message). The package names
 * and checks each argument first (recordio/_remote.py). */
int rio_py_remote_opts(PyObject *obj, void *out);

/* A DLPack capsule ("dltensor") over `data`: `ndim` dimensions of
 * `shape`, row-major, of `type`, in host memory, holding a reference to
 * `owner` until the consumer's deleter runs (dlpack.c). NULL with an
 * exception set on failure. */
PyObject *rio_py_dlpack(PyObject *owner, void *data, rio_dtype type, const int64_t *shape,
                        int ndim);

extern PyTypeObject RioPy_ReaderType;
extern PyTypeObject RioPy_WriterType;
extern PyTypeObject RioPy_LoaderType;
extern PyTypeObject RioPy_BatchType;
extern PyTypeObject RioPy_ColumnType;

/* Module functions defined in example.c and reader.c. */
PyObject *rio_py_example_parse(PyObject *self, PyObject *args);
PyObject *rio_py_example_build(PyObject *self, PyObject *args);
PyObject *rio_py_sequence_example_parse(PyObject *self, PyObject *args);
PyObject *rio_py_expand(PyObject *self, PyObject *args);
PyObject *rio_py_path_size(PyObject *self, PyObject *args);
PyObject *rio_py_index_read(PyObject *self, PyObject *args);
PyObject *rio_py_index_build(PyObject *self, PyObject *args);
PyObject *rio_py_index_write(PyObject *self, PyObject *args);

#endif
