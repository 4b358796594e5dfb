/*
 * reader.c — recordio._core.Reader (one shard, read in order or by index),
 * recordio._core.Writer (one shard, written atomically), shard-set
 * expansion and .idx sidecars. The Python layer (recordio/_io.py) makes
 * several shards one sequence and adds the context manager.
 */
#include "core.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Replaces *dst with a PyMem copy of the bytes path `pathobj` (from
 * PyUnicode_FSConverter), whose reference it consumes; -1 with
 * MemoryError. */
static int set_path(char **dst, PyObject *pathobj)
{
	PyMem_Free(*dst);
	*dst = PyMem_Malloc(PyBytes_GET_SIZE(pathobj) + 1);
	if (*dst)
		memcpy(*dst, PyBytes_AS_STRING(pathobj), PyBytes_GET_SIZE(pathobj) + 1);
	Py_DECREF(pathobj);
	if (!*dst) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

/* ---- Reader ----------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	rio_reader *r;
	char *path;
} ReaderObject;

static int reader_init(ReaderObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"path", "compression", "verify_crc", "skip_damaged",
	                        "max_record_size", "remote", NULL};
	PyObject *pathobj;
	const char *comp = "auto";
	int verify = 1, skip = 0;
	unsigned long long max_record = 0;
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|sppKO&", names, PyUnicode_FSConverter,
	                                 &pathobj, &comp, &verify, &skip, &max_record,
	                                 rio_py_remote_opts, &o.remote))
		return -1;
	if (strcmp(comp, "auto") != 0 && rio_compression_parse(comp, &o.compression) < 0) {
		Py_DECREF(pathobj);
		PyErr_Format(PyExc_ValueError,
		             "compression=%s: want auto, none, gzip, zlib or lz4", comp);
		return -1;
	}
	o.verify_crc = verify;
	o.on_damage = skip ? RIO_DAMAGE_SKIP : RIO_DAMAGE_FAIL;
	if (max_record)
		o.max_record_size = max_record;
	if (self->r) {
		rio_reader_close(self->r);
		self->r = NULL;
	}
	if (set_path(&self->path, pathobj) < 0)
		return -1;
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_reader_open(&self->r, self->path, &o);
	Py_END_ALLOW_THREADS
	if (rc < 0) { /* recordio.Error (FileNotFoundError etc. for an errno) */
		self->r = NULL;
		rio_py_raise_msg(rc, self->path, "%s", rio_strerror(rc));
		return -1;
	}
	return 0;
}

static void reader_dealloc(ReaderObject *self)
{
	rio_reader_close(self->r);
	PyMem_Free(self->path);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int reader_check(ReaderObject *self)
{
	if (!self->r) {
		PyErr_SetString(PyExc_ValueError, "the reader is closed");
		return -1;
	}
	return 0;
}

static PyObject *reader_fail(ReaderObject *self, int rc)
{
	return rio_py_raise(rc, rio_reader_error(self->r), self->path, NULL, 0);
}

/* next() -> bytes, or None at the end of the file. */
static PyObject *reader_next(ReaderObject *self, PyObject *unused)
{
	(void)unused;
	if (reader_check(self) < 0)
		return NULL;
	rio_record rec;
	int rc = rio_reader_next(self->r, &rec);
	if (rc == 1)
		return PyBytes_FromStringAndSize((const char *)rec.data, (Py_ssize_t)rec.size);
	if (rc == 0)
		Py_RETURN_NONE;
	return reader_fail(self, rc);
}

/* next_entry() -> (offset, framed size) of the next record, or None at
 * the end: what an .idx entry says, for an index that skips damage. */
static PyObject *reader_next_entry(ReaderObject *self, PyObject *unused)
{
	(void)unused;
	if (reader_check(self) < 0)
		return NULL;
	rio_record rec;
	int rc = rio_reader_next(self->r, &rec);
	if (rc == 1)
		return Py_BuildValue("(KK)", (unsigned long long)rec.offset,
		                     (unsigned long long)rec.size + RIO_FRAME_OVERHEAD);
	if (rc == 0)
		Py_RETURN_NONE;
	return reader_fail(self, rc);
}

/* read_at(offsets, framed_sizes, i) -> bytes: record i of the shard, by
 * its index (two buffers of native uint64, as the .idx gives them): an
 * error names record i, as reading in order would. */
static PyObject *reader_read_at(ReaderObject *self, PyObject *args)
{
	Py_buffer off, size;
	unsigned long long i;
	if (!PyArg_ParseTuple(args, "y*y*K", &off, &size, &i))
		return NULL;
	PyObject *r = NULL;
	if (reader_check(self) == 0) {
		size_t n = (size_t)(off.len < size.len ? off.len : size.len) / sizeof(uint64_t);
		rio_index idx = {.count = n, .offset = off.buf, .framed_size = size.buf};
		rio_record rec;
		int rc = rio_reader_read_at(self->r, &idx, i, &rec);
		if (rc == 1)
			r = PyBytes_FromStringAndSize((const char *)rec.data, (Py_ssize_t)rec.size);
		else if (rc == 0)
			rio_py_raise_msg(RIO_ETRUNCATED, self->path, "offset %llu (record %llu): %s",
			                 (unsigned long long)idx.offset[i], i,
			                 rio_strerror(RIO_ETRUNCATED));
		else
			reader_fail(self, rc);
	}
	PyBuffer_Release(&off);
	PyBuffer_Release(&size);
	return r;
}

static PyObject *reader_close(ReaderObject *self, PyObject *unused)
{
	(void)unused;
	rio_reader_close(self->r);
	self->r = NULL;
	Py_RETURN_NONE;
}

static PyObject *reader_compression(ReaderObject *self, void *closure)
{
	(void)closure;
	if (reader_check(self) < 0)
		return NULL;
	return PyUnicode_FromString(rio_compression_name(rio_reader_compression(self->r)));
}

static PyObject *reader_skipped(ReaderObject *self, void *closure)
{
	(void)closure;
	if (reader_check(self) < 0)
		return NULL;
	return PyLong_FromUnsignedLongLong(rio_reader_skipped(self->r));
}

static PyObject *reader_path(ReaderObject *self, void *closure)
{
	(void)closure;
	return self->path ? PyUnicode_DecodeFSDefault(self->path) : Py_NewRef(Py_None);
}

static PyMethodDef reader_methods[] = {
	{"next", (PyCFunction)reader_next, METH_NOARGS, "next() -> bytes, or None at the end."},
	{"next_entry", (PyCFunction)reader_next_entry, METH_NOARGS,
	 "next_entry() -> (offset, framed_size) of the next record, or None."},
	{"read_at", (PyCFunction)reader_read_at, METH_VARARGS,
	 "read_at(offsets, framed_sizes, i) -> bytes: record i by its index (uint64 buffers; "
	 "uncompressed shards)."},
	{"close", (PyCFunction)reader_close, METH_NOARGS, "close()"},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef reader_getset[] = {
	{"compression", (getter)reader_compression, NULL, "the compression found", NULL},
	{"skipped", (getter)reader_skipped, NULL, "damaged regions skipped", NULL},
	{"path", (getter)reader_path, NULL, "the shard's path", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RioPy_ReaderType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recordio._core.Reader",
	.tp_basicsize = sizeof(ReaderObject),
	.tp_dealloc = (destructor)reader_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Reader(path, compression='auto', verify_crc=True, skip_damaged=False, "
	          "max_record_size=0): one shard.",
	.tp_methods = reader_methods,
	.tp_getset = reader_getset,
	.tp_init = (initproc)reader_init,
	.tp_new = PyType_GenericNew,
};

/* ---- Writer ----------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	rio_writer *w;
	char *path;
	rio_index idx; /* with index=True: the entries of the .idx written on close */
	int want_index;
} WriterObject;

static int writer_init(WriterObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"path", "compression", "level", "fsync", "overwrite", "index", NULL};
	PyObject *pathobj;
	const char *comp = "none";
	int level = 0, do_fsync = 0, overwrite = 1, index = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|sippp", names, PyUnicode_FSConverter,
	                                 &pathobj, &comp, &level, &do_fsync, &overwrite, &index))
		return -1;
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	if (rio_compression_parse(comp, &o.compression) < 0 ||
	    o.compression == RIO_COMPRESSION_AUTO) {
		Py_DECREF(pathobj);
		PyErr_Format(PyExc_ValueError, "compression=%s: want none, gzip, zlib or lz4", comp);
		return -1;
	}
	o.level = level;
	o.fsync = do_fsync;
	o.overwrite = overwrite;
	if (self->w) {
		PyErr_SetString(PyExc_ValueError, "the writer is already open");
		Py_DECREF(pathobj);
		return -1;
	}
	if (set_path(&self->path, pathobj) < 0)
		return -1;
	self->want_index = index;
	/* what is there and is not a regular file is refused at open, in a
	 * message that says what it is (rio_writer_open() checks it again) */
	rio_error e;
	int rc = overwrite ? rio_output_check(self->path, &e) : 0;
	if (rc < 0) {
		rio_py_raise(rc, &e, self->path, NULL, 0);
		return -1;
	}
	if (index) { /* and the .idx that close() will write */
		char *ip = rio_index_path(self->path);
		if (!ip) {
			PyErr_NoMemory();
			return -1;
		}
		rc = rio_output_check(ip, &e);
		if (rc < 0)
			rio_py_raise(rc, &e, ip, NULL, 0);
		free(ip);
		if (rc < 0)
			return -1;
	}
	rc = rio_writer_open(&self->w, self->path, &o);
	if (rc < 0) {
		self->w = NULL;
		rio_py_raise_msg(rc, self->path, "%s", rio_strerror(rc));
		return -1;
	}
	return 0;
}

static void writer_dealloc(WriterObject *self)
{
	rio_writer_abort(self->w); /* never closed: nothing appears under path */
	rio_index_free(&self->idx);
	PyMem_Free(self->path);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int writer_check(WriterObject *self)
{
	if (!self->w) {
		PyErr_SetString(PyExc_ValueError, "the writer is closed");
		return -1;
	}
	return 0;
}

/* write(data) -> the record's offset in the uncompressed stream. */
static PyObject *writer_write(WriterObject *self, PyObject *args)
{
	Py_buffer b;
	if (!PyArg_ParseTuple(args, "y*", &b))
		return NULL;
	if (writer_check(self) < 0) {
		PyBuffer_Release(&b);
		return NULL;
	}
	uint64_t off = 0;
	int rc = rio_writer_write(self->w, b.buf, (size_t)b.len, &off);
	if (rc >= 0 && self->want_index)
		rc = rio_index_append(&self->idx, off, (uint64_t)b.len + RIO_FRAME_OVERHEAD);
	PyBuffer_Release(&b);
	if (rc < 0)
		return rio_py_raise(rc, rio_writer_error(self->w), self->path, NULL, 0);
	return PyLong_FromUnsignedLongLong(off);
}

/* Removes the .idx at `ip` when it is a regular file: it lists the records
 * of the file that was just replaced, so a reader would count and seek by
 * it. 0, or a negative errno. */
static int remove_stale_index(const char *ip)
{
	struct stat st;
	if (lstat(ip, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return unlink(ip) < 0 && errno != ENOENT ? -errno : 0;
}

/* close(): finishes the file and renames it into place, then writes its
 * .idx when asked; otherwise removes the .idx of the file it replaced
 * (and one that could not be written): an index never outlives its file. */
static PyObject *writer_close(WriterObject *self, PyObject *unused)
{
	(void)unused;
	if (!self->w)
		Py_RETURN_NONE;
	rio_error e = *rio_writer_error(self->w);
	int rc;
	rio_writer *w = self->w;
	self->w = NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_writer_close(w);
	Py_END_ALLOW_THREADS
	if (rc < 0) {
		if (e.code != rc)
			return rio_py_raise_msg(rc, self->path, "%s", rio_strerror(rc));
		return rio_py_raise(rc, &e, self->path, NULL, 0);
	}
	char *ip = rio_index_path(self->path);
	if (!ip)
		return PyErr_NoMemory();
	rio_error ie = {0};
	rc = self->want_index ? rio_index_write(ip, &self->idx, &ie) : 0;
	if (rc < 0) {
		remove_stale_index(ip);
		rio_py_raise(rc, &ie, ip, NULL, 0);
	} else if (!self->want_index && (rc = remove_stale_index(ip)) < 0) {
		rio_py_raise_msg(rc, ip, "%s: the index of the file %s replaced, which could not "
		                 "be removed", strerror(-rc), self->path);
	}
	free(ip);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* abort(): removes the temporary file; nothing appears under path. */
static PyObject *writer_abort(WriterObject *self, PyObject *unused)
{
	(void)unused;
	rio_writer_abort(self->w);
	self->w = NULL;
	Py_RETURN_NONE;
}

static PyObject *writer_records(WriterObject *self, void *closure)
{
	(void)closure;
	if (writer_check(self) < 0)
		return NULL;
	return PyLong_FromUnsignedLongLong(rio_writer_records(self->w));
}

static PyMethodDef writer_methods[] = {
	{"write", (PyCFunction)writer_write, METH_VARARGS, "write(data) -> offset"},
	{"close", (PyCFunction)writer_close, METH_NOARGS, "close(): commit the file"},
	{"abort", (PyCFunction)writer_abort, METH_NOARGS, "abort(): discard the file"},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef writer_getset[] = {
	{"records", (getter)writer_records, NULL, "records written so far", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RioPy_WriterType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recordio._core.Writer",
	.tp_basicsize = sizeof(WriterObject),
	.tp_dealloc = (destructor)writer_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Writer(path, compression='none', level=0, fsync=False, overwrite=True, "
	          "index=False): one shard, atomically.",
	.tp_methods = writer_methods,
	.tp_getset = writer_getset,
	.tp_init = (initproc)writer_init,
	.tp_new = PyType_GenericNew,
};

/* ---- shard sets and indexes ------------------------------------------- */

PyObject *rio_py_expand(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *specobj, *remoteobj = Py_None;
	rio_remote_opts remote;
	if (!PyArg_ParseTuple(args, "O&|O", PyUnicode_FSConverter, &specobj, &remoteobj))
		return NULL;
	if (!rio_py_remote_opts(remoteobj, &remote)) {
		Py_DECREF(specobj);
		return NULL;
	}
	rio_shardset set = {0};
	rio_error e = {0};
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_shardset_expand_remote(PyBytes_AS_STRING(specobj), &set, &remote, &e);
	Py_END_ALLOW_THREADS
	Py_DECREF(specobj);
	if (rc < 0)
		return rio_py_raise(rc, &e, NULL, NULL, 0);
	PyObject *list = rio_py_paths_list(set.paths, set.count);
	rio_shardset_free(&set);
	return list;
}

PyObject *rio_py_path_size(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *pathobj, *remoteobj = Py_None;
	rio_remote_opts remote;
	if (!PyArg_ParseTuple(args, "O&|O", PyUnicode_FSConverter, &pathobj, &remoteobj))
		return NULL;
	if (!rio_py_remote_opts(remoteobj, &remote)) {
		Py_DECREF(pathobj);
		return NULL;
	}
	uint64_t size = 0;
	rio_error e = {0};
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_path_size(PyBytes_AS_STRING(pathobj), &remote, &size, &e);
	Py_END_ALLOW_THREADS
	PyObject *r = rc < 0    ? rio_py_raise(rc, &e, PyBytes_AS_STRING(pathobj), NULL, 0)
	              : rc == 0 ? Py_NewRef(Py_None)
	              : size == UINT64_MAX ? Py_NewRef(Py_None)
	                                   : PyLong_FromUnsignedLongLong(size);
	Py_DECREF(pathobj);
	return r;
}

static PyObject *index_tuple(rio_index *idx)
{
	PyObject *o = PyByteArray_FromStringAndSize((const char *)idx->offset,
	                                            (Py_ssize_t)(idx->count * 8));
	PyObject *s = PyByteArray_FromStringAndSize((const char *)idx->framed_size,
	                                            (Py_ssize_t)(idx->count * 8));
	rio_index_free(idx);
	if (!o || !s) {
		Py_XDECREF(o);
		Py_XDECREF(s);
		return NULL;
	}
	return Py_BuildValue("(NN)", o, s);
}

/* rio_index_read_opts and rio_index_build's: the index at `path` with
 * the remote options `remote` (a URL's requests). */
typedef int (*index_get)(const char *path, const rio_remote_opts *remote, rio_index *idx,
                         rio_error *err);

static int index_build_remote(const char *path, const rio_remote_opts *remote, rio_index *idx,
                              rio_error *err)
{
	rio_reader_opts o;
	rio_reader_opts_init(&o);
	o.remote = *remote;
	return rio_index_build_opts(path, &o, idx, err);
}

/* index_read and index_build: a path and the remote options in, (offsets,
 * sizes) out; they differ only in how the index is got. */
static PyObject *index_from_path(PyObject *args, index_get get)
{
	PyObject *pathobj, *remoteobj = Py_None;
	rio_remote_opts remote;
	if (!PyArg_ParseTuple(args, "O&|O", PyUnicode_FSConverter, &pathobj, &remoteobj))
		return NULL;
	if (!rio_py_remote_opts(remoteobj, &remote)) {
		Py_DECREF(pathobj);
		return NULL;
	}
	rio_index idx = {0};
	rio_error e = {0};
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = get(PyBytes_AS_STRING(pathobj), &remote, &idx, &e);
	Py_END_ALLOW_THREADS
	if (rc < 0) {
		PyObject *r = rio_py_raise(rc, &e, PyBytes_AS_STRING(pathobj), NULL, 0);
		Py_DECREF(pathobj);
		return r;
	}
	Py_DECREF(pathobj);
	return index_tuple(&idx);
}

PyObject *rio_py_index_read(PyObject *self, PyObject *args)
{
	(void)self;
	return index_from_path(args, rio_index_read_opts);
}

PyObject *rio_py_index_build(PyObject *self, PyObject *args)
{
	(void)self;
	return index_from_path(args, index_build_remote);
}

PyObject *rio_py_index_write(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *pathobj;
	Py_buffer o, s;
	if (!PyArg_ParseTuple(args, "O&y*y*", PyUnicode_FSConverter, &pathobj, &o, &s))
		return NULL;
	PyObject *r = NULL;
	if (o.len != s.len || o.len % 8) {
		PyErr_SetString(PyExc_ValueError, "offsets and sizes: two uint64 buffers of one length");
	} else {
		rio_index idx = {.count = (uint64_t)o.len / 8, .offset = o.buf, .framed_size = s.buf};
		rio_error e = {0};
		int rc = rio_index_write(PyBytes_AS_STRING(pathobj), &idx, &e);
		r = rc < 0 ? rio_py_raise(rc, &e, PyBytes_AS_STRING(pathobj), NULL, 0)
		           : Py_NewRef(Py_None);
	}
	PyBuffer_Release(&o);
	PyBuffer_Release(&s);
	Py_DECREF(pathobj);
	return r;
}
