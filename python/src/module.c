/*
 * module.c — recordio._core: the module, its functions table, and how a
 * librecordio error becomes a Python exception. The exception classes live
 * in Python (recordio/_errors.py), which registers a factory here at import:
 * factory(code, message, file, offset, record) returns the exception to
 * raise, so the class hierarchy is written once, in Python.
 */
#include "core.h"

#include <stdarg.h>
#include <string.h>

static PyObject *error_factory; /* recordio._errors.make_error */

static PyObject *set_error_factory(PyObject *self, PyObject *fn)
{
	(void)self;
	if (!PyCallable_Check(fn))
		return PyErr_Format(PyExc_TypeError, "the error factory must be callable");
	Py_INCREF(fn);
	Py_XSETREF(error_factory, fn);
	Py_RETURN_NONE;
}

/* The file a message names: its "PATH: " prefix, when it is one of paths
 * or its .idx sidecar. */
static PyObject *file_from_message(const char *msg, char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < npaths; i++) {
		size_t n = strlen(paths[i]);
		if (strncmp(msg, paths[i], n) != 0)
			continue;
		if (msg[n] == ':')
			return PyUnicode_DecodeFSDefault(paths[i]);
		if (strncmp(msg + n, ".idx:", 5) == 0)
			return PyUnicode_DecodeFSDefaultAndSize(msg, (Py_ssize_t)n + 4);
	}
	Py_RETURN_NONE;
}

static PyObject *raise_with(int code, const char *message, PyObject *file, uint64_t offset,
                            uint64_t record)
{
	PyObject *off = offset == UINT64_MAX ? Py_NewRef(Py_None)
	                                     : PyLong_FromUnsignedLongLong(offset);
	PyObject *rec = record == UINT64_MAX ? Py_NewRef(Py_None)
	                                     : PyLong_FromUnsignedLongLong(record);
	PyObject *exc = NULL;
	if (off && rec && error_factory)
		exc = PyObject_CallFunction(error_factory, "isOOO", code, message, file, off, rec);
	Py_XDECREF(off);
	Py_XDECREF(rec);
	Py_DECREF(file);
	if (!exc) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError, message);
		return NULL;
	}
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
	return NULL;
}

PyObject *rio_py_raise(int code, const rio_error *e, const char *file, char *const *paths,
                       size_t npaths)
{
	if (code == -ENOMEM) { /* MemoryError, with what ran out where it is known */
		if (e && e->code == code && e->message[0])
			PyErr_SetString(PyExc_MemoryError, e->message);
		else
			PyErr_NoMemory();
		return NULL;
	}
	const char *msg = e && e->code == code && e->message[0] ? e->message : rio_strerror(code);
	PyObject *f = file ? PyUnicode_DecodeFSDefault(file) : file_from_message(msg, paths, npaths);
	if (!f)
		return NULL;
	const char *colon = strstr(msg, ": ");
	if (f == Py_None && colon &&
	    (code == RIO_ENOSHARDS || code == RIO_EMISSINGSHARD || code == RIO_EBADSHARDNAME ||
	     code == RIO_EINCOMPLETESET)) {
		/* shard-set messages start with the set, directory or shard they name */
		Py_DECREF(f);
		if (!(f = PyUnicode_DecodeFSDefaultAndSize(msg, colon - msg)))
			return NULL;
	}
	uint64_t off = e && e->code == code ? e->offset : UINT64_MAX;
	uint64_t rec = e && e->code == code ? e->record : UINT64_MAX;
	if (file && e && e->code == code && strncmp(msg, file, strlen(file)) != 0) {
		/* a message that does not name the file yet: name it */
		PyObject *full = PyUnicode_FromFormat("%s: %s", file, msg);
		if (!full) {
			Py_DECREF(f);
			return NULL;
		}
		PyObject *r = raise_with(code, PyUnicode_AsUTF8(full), f, off, rec);
		Py_DECREF(full);
		return r;
	}
	return raise_with(code, msg, f, off, rec);
}

PyObject *rio_py_raise_msg(int code, const char *file, const char *fmt, ...)
{
	char buf[1024];
	int n = 0;
	if (file)
		n = snprintf(buf, sizeof buf, "%s: ", file);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	va_end(ap);
	PyObject *f = file ? PyUnicode_DecodeFSDefault(file) : Py_NewRef(Py_None);
	if (!f)
		return NULL;
	return raise_with(code, buf, f, UINT64_MAX, UINT64_MAX);
}

PyObject *rio_py_list(size_t n, PyObject *(*item)(const void *ctx, size_t i), const void *ctx)
{
	PyObject *list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		PyObject *o = item(ctx, i);
		if (!o) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, o);
	}
	return list;
}

static PyObject *path_item(const void *paths, size_t i)
{
	return PyUnicode_DecodeFSDefault(((char *const *)paths)[i]);
}

PyObject *rio_py_paths_list(char *const *paths, size_t n)
{
	return rio_py_list(n, path_item, paths);
}

int rio_py_remote_opts(PyObject *obj, void *out)
{
	rio_remote_opts *o = out;
	rio_remote_opts_init(o);
	if (obj == Py_None)
		return 1;
	unsigned long long part;
	unsigned inflight, attempts, stall;
	if (!PyArg_ParseTuple(obj, "KIII;remote: want (part_size, inflight, attempts, stall)",
	                      &part, &inflight, &attempts, &stall))
		return 0;
	o->part_size = part;
	o->inflight = inflight;
	o->attempts = attempts;
	o->stall_seconds = stall;
	rio_error err;
	if (rio_remote_opts_check(o, &err) < 0) {
		PyErr_SetString(PyExc_ValueError, err.message);
		return 0;
	}
	return 1;
}

/* REMOTE: {name: (default, min, max)} of the remote options, the library's
 * (recordio.h), for the package's defaults and checks (_remote.py). */
static PyObject *remote_table(void)
{
	rio_remote_opts d;
	rio_remote_opts_init(&d);
	return Py_BuildValue("{s(KKK)s(III)s(III)s(III)}", "part_size",
	                     (unsigned long long)d.part_size,
	                     (unsigned long long)RIO_REMOTE_MIN_PART,
	                     (unsigned long long)RIO_REMOTE_MAX_PART, "inflight", d.inflight, 1u,
	                     RIO_REMOTE_MAX_INFLIGHT, "attempts", d.attempts, 1u,
	                     RIO_REMOTE_MAX_ATTEMPTS, "stall", d.stall_seconds, 1u,
	                     RIO_REMOTE_MAX_STALL);
}

static PyObject *strerror_fn(PyObject *self, PyObject *arg)
{
	(void)self;
	int code = PyLong_AsLong(arg);
	if (code == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(rio_strerror(code));
}

static PyObject *version_fn(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyUnicode_FromString(rio_version());
}

/* parse_size(text, max) -> int: rio_size_parse(), ValueError with its
 * message on a text that is not a size of at most `max` bytes. */
static PyObject *parse_size_fn(PyObject *self, PyObject *args)
{
	(void)self;
	const char *text;
	unsigned long long max;
	if (!PyArg_ParseTuple(args, "sK", &text, &max))
		return NULL;
	uint64_t bytes;
	rio_error err;
	if (rio_size_parse(text, max, &bytes, &err) < 0) {
		PyErr_SetString(PyExc_ValueError, err.message);
		return NULL;
	}
	return PyLong_FromUnsignedLongLong(bytes);
}

static PyMethodDef functions[] = {
	{"_set_error_factory", set_error_factory, METH_O,
	 "Registers factory(code, message, file, offset, record) -> exception."},
	{"strerror", strerror_fn, METH_O, "strerror(code) -> the library's text for an error code."},
	{"version", version_fn, METH_NOARGS, "version() -> librecordio's version string."},
	{"parse_size", parse_size_fn, METH_VARARGS,
	 "parse_size(text, max) -> bytes: '4096', '64M', '1.5G' (K..T, KiB..TiB powers of "
	 "1024; KB..TB powers of 1000); ValueError past max or for anything else."},
	{"example_parse", rio_py_example_parse, METH_VARARGS,
	 "example_parse(data) -> [(name, kind, value)]: kind 'bytes' (list of bytes), "
	 "'float' (bytearray of float32), 'int64' (bytearray of int64) or 'none'."},
	{"sequence_example_parse", rio_py_sequence_example_parse, METH_VARARGS,
	 "sequence_example_parse(data) -> (context, [(name, [steps])]), each step and "
	 "context item as example_parse gives them."},
	{"example_build", rio_py_example_build, METH_VARARGS,
	 "example_build([(name, kind, value)]) -> bytes: kind 'bytes' (a list of "
	 "bytes-like), 'float' (a float32 buffer), 'int64' (an int64 buffer) or 'none'."},
	{"expand", rio_py_expand, METH_VARARGS,
	 "expand(spec, remote=None) -> list of shard paths (a glob, a list, a directory or a "
	 "PREFIX; S3 ones listed with remote's attempts and stall)."},
	{"path_size", rio_py_path_size, METH_VARARGS,
	 "path_size(path, remote=None) -> the size in bytes of the file or object there "
	 "(one HEAD for a URL, with remote's attempts and stall), or None where there is none (or a server sent no size)."},
	{"index_read", rio_py_index_read, METH_VARARGS,
	 "index_read(path, remote=None) -> (offsets, framed_sizes) as bytearrays of uint64 "
	 "(remote: a URL's options, as path_size's)."},
	{"index_build", rio_py_index_build, METH_VARARGS,
	 "index_build(shard, remote=None) -> (offsets, framed_sizes), by reading the shard "
	 "(remote: a URL's options, as path_size's)."},
	{"index_write", rio_py_index_write, METH_VARARGS,
	 "index_write(path, offsets, framed_sizes): writes an .idx file atomically."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "recordio._core",
	"The C extension under the recordio package: librecordio's reader, writer, "
	"Example codec and loader. Use the recordio package, not this module.",
	-1, functions, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
	if (PyType_Ready(t) < 0)
		return -1;
	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
		Py_DECREF(t);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	if (add_type(m, &RioPy_ReaderType, "Reader") < 0 ||
	    add_type(m, &RioPy_WriterType, "Writer") < 0 ||
	    add_type(m, &RioPy_LoaderType, "Loader") < 0 ||
	    add_type(m, &RioPy_BatchType, "Batch") < 0 ||
	    add_type(m, &RioPy_ColumnType, "Column") < 0)
		goto fail;
#ifdef RIO_PY_HAVE_CUDA /* setup.py: the library was built with CUDA */
	if (PyModule_AddIntConstant(m, "HAVE_CUDA", 1) < 0)
		goto fail;
#else
	if (PyModule_AddIntConstant(m, "HAVE_CUDA", 0) < 0)
		goto fail;
#endif
	if (PyModule_AddIntConstant(m, "MAX_COLUMN_LENGTH", (long)RIO_LOADER_MAX_COLUMN_LENGTH) < 0)
		goto fail;
	PyObject *remote = remote_table();
	int added = remote ? PyModule_AddObjectRef(m, "REMOTE", remote) : -1;
	Py_XDECREF(remote);
	if (added < 0)
		goto fail;
#define ADD_CODE(name, value, text)                                                               \
	if (PyModule_AddIntConstant(m, #name, value) < 0)                                         \
		goto fail;
	RIO_ERROR_TABLE(ADD_CODE)
#undef ADD_CODE
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
