/*
 * pyloader.c — recordio._core.Loader, Batch and Column: the loader's
 * batches handed to Python without a copy.
 *
 * Ownership: a Batch holds one of the loader's batch slots (taken with
 * rio_loader_next_timeout, given back with rio_loader_release when the
 * Batch is freed) and a reference to its Loader. A Column holds its Batch
 * and describes one column's memory through __array_interface__, so a
 * NumPy array made from it has the Column as its base and the batch's
 * memory as its data: the slot returns to the pool when the last array,
 * tensor (torch.from_numpy / from_dlpack keep the array) or Column is gone.
 * Loader.close() with batches still alive stops handing out batches and
 * frees the loader when the last of them goes, never under a live view.
 *
 * Waiting: next() releases the GIL and waits in slices of WAIT_SLICE_MS,
 * checking for signals between them, so Ctrl-C stops it promptly.
 *
 * fork(): a child has a copy of the loader's memory but none of its
 * threads. There every call is a RuntimeError, and freeing the loader or a
 * batch touches nothing (closing would wait for threads that are not
 * there, or crash on their state): the child opens a loader of its own.
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WAIT_SLICE_MS = 100 };

typedef struct {
	PyObject_HEAD
	rio_loader *l;
	char **paths; /* the shard list, for the file of an error */
	size_t npaths;
	Py_ssize_t live; /* Batch objects alive */
	int in_next;     /* next() is waiting with the GIL released */
	int closed;
	size_t hold;
	rio_column_spec *specs; /* opts.columns: kept while the loader lives */
	pid_t pid;              /* the process that opened it (see fork() above) */
} LoaderObject;

typedef struct {
	PyObject_HEAD
	LoaderObject *loader;
	rio_batch *b;
} BatchObject;

typedef struct {
	PyObject_HEAD
	BatchObject *batch;
	size_t i;
	PyObject *shape; /* a record's shape (a tuple), or NULL: (length,) */
} ColumnObject;

/* ---- Loader ----------------------------------------------------------- */

/* Whether this is the process that opened the loader (its threads run). */
static int loader_ours(const LoaderObject *self)
{
	return self->pid == getpid();
}

static void loader_free_now(LoaderObject *self)
{
	if (self->l && !loader_ours(self)) {
		self->l = NULL; /* a forked child's copy: the parent's to free */
	} else if (self->l) {
		rio_loader *l = self->l;
		self->l = NULL;
		Py_BEGIN_ALLOW_THREADS
		rio_loader_close(l);
		Py_END_ALLOW_THREADS
	}
}

/* columns: a sequence of (name, dtype, length, scale). */
static int parse_columns(PyObject *columns, rio_column_spec **specs, size_t *n)
{
	*specs = NULL;
	*n = 0;
	if (columns == Py_None)
		return 0;
	PyObject *seq = PySequence_Fast(columns, "columns: a list of (name, dtype, length, scale)");
	if (!seq)
		return -1;
	Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
	rio_column_spec *s = count ? PyMem_Calloc((size_t)count, sizeof *s) : NULL;
	if (count && !s) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < count; i++) {
		const char *name, *dtype;
		Py_ssize_t name_len, length;
		double scale = 0;
		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "s#sn|d", &name, &name_len,
		                      &dtype, &length, &scale))
			goto fail;
		if ((size_t)name_len != strlen(name)) {
			PyErr_Format(PyExc_ValueError, "column %s: the name holds a NUL character",
			             name);
			goto fail;
		}
		if ((size_t)name_len >= sizeof s[i].name) {
			PyErr_Format(PyExc_ValueError, "column %s: a name of at most %zu bytes", name,
			             sizeof s[i].name - 1);
			goto fail;
		}
		memcpy(s[i].name, name, (size_t)name_len + 1);
		if (strcmp(dtype, "u8") == 0)
			s[i].type = RIO_DTYPE_U8;
		else if (strcmp(dtype, "f32") == 0)
			s[i].type = RIO_DTYPE_F32;
		else if (strcmp(dtype, "i64") == 0)
			s[i].type = RIO_DTYPE_I64;
		else if (strcmp(dtype, "bf16") == 0)
			s[i].type = RIO_DTYPE_BF16;
		else {
			PyErr_Format(PyExc_ValueError, "column %s: dtype %s: want u8, f32, bf16 or i64",
			             name, dtype);
			goto fail;
		}
		if (length < 1) {
			PyErr_Format(PyExc_ValueError, "column %s: length %zd: want 1 or more", name,
			             length);
			goto fail;
		}
		if (scale != 0 && s[i].type != RIO_DTYPE_F32 && s[i].type != RIO_DTYPE_BF16) {
			PyErr_Format(PyExc_ValueError, "column %s: a scale applies to f32 and bf16 only",
			             name);
			goto fail;
		}
		s[i].length = (size_t)length;
		s[i].scale = (float)scale;
	}
	Py_DECREF(seq);
	*specs = s;
	*n = (size_t)count;
	return 0;
fail:
	Py_DECREF(seq);
	PyMem_Free(s);
	return -1;
}

static PyObject *loader_fail(LoaderObject *self, int rc)
{
	if (rc == -ENOBUFS)
		return rio_py_raise_msg(rc, NULL,
		                        "hold=%zu batches are still alive: drop or copy the arrays "
		                        "of old batches, or open the loader with a larger hold",
		                        self->hold);
	return rio_py_raise(rc, self->l ? rio_loader_error(self->l) : NULL, NULL, self->paths,
	                    self->npaths);
}

/* A PyArg "O&" converter: None (no shard cache: *out stays NULL) or a
 * directory's path as bytes (PyUnicode_FSConverter). */
static int shard_cache_path(PyObject *obj, void *out)
{
	return obj == Py_None ? 1 : PyUnicode_FSConverter(obj, out);
}

static int loader_init(LoaderObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"shards",     "batch_size",   "columns",   "shuffle",
	                        "seed",       "workers",      "rank",      "world",
	                        "drop_remainder", "skip_damaged", "shuffle_buffer", "interleave",
	                        "prefetch",   "hold",         "sharding",  "io",
	                        "verify_crc", "pinned",       "chunk_bytes", "direct",
	                        "max_record_size", "device", "cache", "remote", "shard_cache",
	                        "shard_cache_limit", NULL};
	PyObject *shardsobj, *columns = Py_None, *shard_cache = NULL;
	rio_loader_opts o;
	rio_loader_opts_init(&o);
	Py_ssize_t batch = 32, shuffle_buffer = (Py_ssize_t)o.shuffle_buffer,
	           interleave = (Py_ssize_t)o.interleave, prefetch = (Py_ssize_t)o.prefetch,
	           hold = (Py_ssize_t)o.hold, chunk = (Py_ssize_t)o.chunk_bytes;
	unsigned long long seed = 0, max_record = 0, cache = 0, shard_cache_limit = 0;
	const char *shuffle = "none", *sharding = "auto", *io = "auto";
	int workers = o.workers, rank = -1, world = -1, drop = 0, skip = 0, verify = 1, pinned = 0,
	    direct = 0, device = 0;
	if (self->l || self->closed) {
		PyErr_SetString(PyExc_ValueError, "a loader is initialised once");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|nOsKiiippnnnnssppnpKiKO&O&K", names,
	                                 PyUnicode_FSConverter, &shardsobj, &batch, &columns,
	                                 &shuffle, &seed, &workers, &rank, &world, &drop, &skip,
	                                 &shuffle_buffer, &interleave, &prefetch, &hold, &sharding,
	                                 &io, &verify, &pinned, &chunk, &direct, &max_record,
	                                 &device, &cache, rio_py_remote_opts, &o.remote,
	                                 shard_cache_path, &shard_cache, &shard_cache_limit))
		return -1;
	rio_column_spec *specs = NULL;
	size_t ncols = 0;
	/* the loader's names (loader.h), its message: "shuffle='x': want none, ..." */
	rio_error err;
	const char *bad = NULL;
	if (rio_shuffle_parse(shuffle, &o.shuffle, &err) < 0)
		bad = "shuffle";
	else if (rio_sharding_parse(sharding, &o.sharding, &err) < 0)
		bad = "sharding";
	else if (rio_io_parse(io, &o.io, &err) < 0)
		bad = "io";
	if (bad)
		PyErr_Format(PyExc_ValueError, "%s=%s", bad, err.message);
	if (bad || parse_columns(columns, &specs, &ncols) < 0) {
		Py_DECREF(shardsobj);
		Py_XDECREF(shard_cache);
		return -1;
	}
	if (batch < 1 || shuffle_buffer < 1 || interleave < 1 || prefetch < 0 || hold < 1 ||
	    chunk < 1) {
		Py_DECREF(shardsobj);
		Py_XDECREF(shard_cache);
		PyMem_Free(specs);
		PyErr_SetString(PyExc_ValueError,
		                "batch_size, shuffle_buffer, interleave, hold and chunk_bytes: 1 or "
		                "more; prefetch: 0 (automatic) or more");
		return -1;
	}
	o.batch_size = (size_t)batch;
	o.columns = specs;
	o.ncolumns = ncols;
	o.seed = seed;
	o.workers = workers;
	o.rank = rank;
	o.world = world;
	o.drop_remainder = drop;
	o.on_damage = skip ? RIO_DAMAGE_SKIP : RIO_DAMAGE_FAIL;
	o.shuffle_buffer = (size_t)shuffle_buffer;
	o.interleave = (size_t)interleave;
	o.prefetch = (size_t)prefetch;
	o.hold = (size_t)hold;
	o.verify_crc = verify;
	o.pinned = pinned;
	o.device = device;
	o.chunk_bytes = (size_t)chunk;
	o.direct = direct;
	o.cache = cache;
	o.shard_cache = shard_cache ? PyBytes_AS_STRING(shard_cache) : NULL; /* copied at open */
	o.shard_cache_limit = shard_cache_limit;
	if (max_record)
		o.max_record_size = max_record;
	self->hold = o.hold;
	self->pid = getpid();
	int rc;
	rio_loader *l = NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_loader_open(&l, PyBytes_AS_STRING(shardsobj), &o);
	Py_END_ALLOW_THREADS
	self->specs = specs;
	Py_DECREF(shardsobj);
	Py_XDECREF(shard_cache);
	self->l = l;
	if (rc < 0) {
		if (!l)
			return PyErr_NoMemory(), -1;
		rio_error e = *rio_loader_error(l);
		const rio_shardset *set = rio_loader_shards(l);
		rio_py_raise(rc, &e, NULL, set ? set->paths : NULL, set ? set->count : 0);
		loader_free_now(self);
		return -1;
	}
	const rio_shardset *set = rio_loader_shards(l);
	self->paths = set->paths; /* owned by the loader, which outlives its uses */
	self->npaths = set->count;
	return 0;
}

static void loader_dealloc(LoaderObject *self)
{
	loader_free_now(self);
	PyMem_Free(self->specs);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int loader_check(LoaderObject *self)
{
	if (self->l && !loader_ours(self)) {
		PyErr_Format(PyExc_RuntimeError,
		             "the loader was opened in process %ld, and this process (%ld) is a "
		             "fork() of it, without its threads: open a new Loader here",
		             (long)self->pid, (long)getpid());
		return -1;
	}
	if (!self->l || self->closed) {
		PyErr_SetString(PyExc_ValueError, "the loader is closed");
		return -1;
	}
	if (self->in_next) {
		PyErr_SetString(PyExc_RuntimeError,
		                "the loader is in use by another thread (one consumer thread only)");
		return -1;
	}
	return 0;
}

/* The Loader is freed when closed and its last Batch is gone. */
static void loader_maybe_free(LoaderObject *self)
{
	if (self->closed && self->live == 0 && !self->in_next)
		loader_free_now(self);
}

/* next() -> Batch, or None when the epoch has ended (the next call begins
 * the next epoch). */
static PyObject *loader_next(LoaderObject *self, PyObject *unused)
{
	(void)unused;
	if (loader_check(self) < 0)
		return NULL;
	rio_batch *b = NULL;
	int rc;
	self->in_next = 1;
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		rc = rio_loader_next_timeout(self->l, &b, WAIT_SLICE_MS);
		Py_END_ALLOW_THREADS
		if (rc != -ETIMEDOUT)
			break;
		if (PyErr_CheckSignals() < 0) {
			self->in_next = 0;
			loader_maybe_free(self);
			return NULL;
		}
	}
	self->in_next = 0;
	if (rc == 1 && self->closed) { /* closed by another thread meanwhile */
		rio_loader_release(self->l, b);
		rc = 0;
	}
	if (rc != 1) {
		PyObject *r = rc == 0 ? Py_NewRef(Py_None) : loader_fail(self, rc);
		loader_maybe_free(self);
		return r;
	}
	BatchObject *bo = PyObject_New(BatchObject, &RioPy_BatchType);
	if (!bo) {
		rio_loader_release(self->l, b);
		return NULL;
	}
	Py_INCREF(self);
	bo->loader = self;
	bo->b = b;
	self->live++;
	return (PyObject *)bo;
}

static PyObject *loader_close(LoaderObject *self, PyObject *unused)
{
	(void)unused;
	self->closed = 1;
	loader_maybe_free(self);
	Py_RETURN_NONE;
}

static PyObject *loader_state_save(LoaderObject *self, PyObject *unused)
{
	(void)unused;
	if (loader_check(self) < 0)
		return NULL;
	int n = rio_loader_state_save(self->l, NULL, 0);
	if (n < 0)
		return loader_fail(self, n);
	PyObject *out = PyBytes_FromStringAndSize(NULL, n);
	if (!out)
		return NULL;
	int m = rio_loader_state_save(self->l, PyBytes_AS_STRING(out), (size_t)n);
	if (m < 0 || m > n) {
		Py_DECREF(out);
		return m < 0 ? loader_fail(self, m) : rio_py_raise(-EIO, NULL, NULL, NULL, 0);
	}
	if (m < n && _PyBytes_Resize(&out, m) < 0)
		return NULL;
	return out;
}

static PyObject *loader_state_restore(LoaderObject *self, PyObject *args)
{
	Py_buffer b;
	if (!PyArg_ParseTuple(args, "y*", &b))
		return NULL;
	if (loader_check(self) < 0) {
		PyBuffer_Release(&b);
		return NULL;
	}
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_loader_state_restore(self->l, b.buf, (size_t)b.len);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&b);
	if (rc < 0)
		return loader_fail(self, rc);
	Py_RETURN_NONE;
}

static PyObject *loader_set_epoch(LoaderObject *self, PyObject *arg)
{
	unsigned long long e = PyLong_AsUnsignedLongLong(arg);
	if (e == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	if (loader_check(self) < 0)
		return NULL;
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = rio_loader_set_epoch(self->l, e);
	Py_END_ALLOW_THREADS
	if (rc < 0)
		return loader_fail(self, rc);
	Py_RETURN_NONE;
}

static PyObject *loader_stats(LoaderObject *self, PyObject *unused)
{
	(void)unused;
	if (loader_check(self) < 0)
		return NULL;
	rio_loader_stats s;
	rio_loader_stats_get(self->l, &s);
	char warning[512];
	size_t wn = rio_loader_warning(self->l, warning, sizeof warning);
	return Py_BuildValue("{sKsKsKsKsKsKsdsisKss#}", "records", (unsigned long long)s.records,
	                     "bytes", (unsigned long long)s.bytes, "batches",
	                     (unsigned long long)s.batches, "skipped", (unsigned long long)s.skipped,
	                     "file_bytes", (unsigned long long)s.file_bytes, "index_mismatches",
	                     (unsigned long long)s.index_mismatches, "wait_seconds",
	                     s.wait_seconds, "io_uring", s.io_uring, "cache_bytes",
	                     (unsigned long long)s.cache_bytes, "warning",
	                     wn ? warning : NULL, (Py_ssize_t)wn);
}

#define LOADER_U64(fn)                                                                            \
	static PyObject *loader_get_##fn(LoaderObject *self, void *closure)                        \
	{                                                                                          \
		(void)closure;                                                                     \
		if (loader_check(self) < 0)                                                        \
			return NULL;                                                               \
		return PyLong_FromUnsignedLongLong(rio_loader_##fn(self->l));                      \
	}
LOADER_U64(epoch)
LOADER_U64(position)
LOADER_U64(batches)
LOADER_U64(full_batches)
LOADER_U64(records)
#undef LOADER_U64

static PyObject *loader_get_rank(LoaderObject *self, void *closure)
{
	(void)closure;
	if (loader_check(self) < 0)
		return NULL;
	return PyLong_FromLong(rio_loader_rank(self->l));
}

static PyObject *loader_get_world(LoaderObject *self, void *closure)
{
	(void)closure;
	if (loader_check(self) < 0)
		return NULL;
	return PyLong_FromLong(rio_loader_world(self->l));
}

static PyObject *loader_get_shards(LoaderObject *self, void *closure)
{
	(void)closure;
	if (loader_check(self) < 0)
		return NULL;
	return rio_py_paths_list(self->paths, self->npaths);
}

static PyObject *loader_get_closed(LoaderObject *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(self->closed || !self->l);
}

static PyObject *loader_get_live(LoaderObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromSsize_t(self->live);
}

static PyMethodDef loader_methods[] = {
	{"next", (PyCFunction)loader_next, METH_NOARGS,
	 "next() -> Batch, or None at the end of the epoch."},
	{"close", (PyCFunction)loader_close, METH_NOARGS, "close()"},
	{"state_save", (PyCFunction)loader_state_save, METH_NOARGS, "state_save() -> bytes"},
	{"state_restore", (PyCFunction)loader_state_restore, METH_VARARGS,
	 "state_restore(blob)"},
	{"set_epoch", (PyCFunction)loader_set_epoch, METH_O, "set_epoch(epoch)"},
	{"stats", (PyCFunction)loader_stats, METH_NOARGS, "stats() -> dict"},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef loader_getset[] = {
	{"epoch", (getter)loader_get_epoch, NULL, "the epoch the next batch comes from", NULL},
	{"position", (getter)loader_get_position, NULL, "records delivered in this epoch", NULL},
	{"batches", (getter)loader_get_batches, NULL, "batches per epoch", NULL},
	{"full_batches", (getter)loader_get_full_batches, NULL, "full batches per epoch", NULL},
	{"records", (getter)loader_get_records, NULL, "records this rank reads per epoch", NULL},
	{"rank", (getter)loader_get_rank, NULL, "this loader's rank", NULL},
	{"world", (getter)loader_get_world, NULL, "the world size", NULL},
	{"shards", (getter)loader_get_shards, NULL, "the sorted shard list", NULL},
	{"closed", (getter)loader_get_closed, NULL, "closed", NULL},
	{"live_batches", (getter)loader_get_live, NULL, "Batch objects alive", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RioPy_LoaderType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recordio._core.Loader",
	.tp_basicsize = sizeof(LoaderObject),
	.tp_dealloc = (destructor)loader_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The C loader; use recordio.Loader.",
	.tp_methods = loader_methods,
	.tp_getset = loader_getset,
	.tp_init = (initproc)loader_init,
	.tp_new = PyType_GenericNew,
};

/* ---- Batch ------------------------------------------------------------ */

static void batch_dealloc(BatchObject *self)
{
	LoaderObject *lo = self->loader;
	if (lo) {
		if (lo->l && loader_ours(lo))
			rio_loader_release(lo->l, self->b);
		lo->live--;
		loader_maybe_free(lo);
		Py_DECREF(lo);
	}
	PyObject_Free(self);
}

/* columns(shapes=None) -> tuple of Column, in spec order; shapes: one
 * tuple per column, a record's shape (its product the column's length). */
static PyObject *batch_columns(BatchObject *self, PyObject *args)
{
	PyObject *shapes = Py_None;
	if (!PyArg_ParseTuple(args, "|O", &shapes))
		return NULL;
	if (shapes != Py_None &&
	    (!PyTuple_Check(shapes) || PyTuple_GET_SIZE(shapes) != (Py_ssize_t)self->b->ncolumns))
		return PyErr_Format(PyExc_ValueError, "shapes: a tuple of %zu shapes",
		                    self->b->ncolumns);
	PyObject *t = PyTuple_New((Py_ssize_t)self->b->ncolumns);
	for (size_t i = 0; t && i < self->b->ncolumns; i++) {
		ColumnObject *c = PyObject_New(ColumnObject, &RioPy_ColumnType);
		if (!c) {
			Py_CLEAR(t);
			break;
		}
		Py_INCREF(self);
		c->batch = self;
		c->i = i;
		c->shape = NULL;
		if (shapes != Py_None) {
			PyObject *sh = PyTuple_GET_ITEM(shapes, (Py_ssize_t)i);
			Py_ssize_t prod = 1, d = 1;
			for (Py_ssize_t k = 0; PyTuple_Check(sh) && k < PyTuple_GET_SIZE(sh) && d > 0 &&
			                       prod > 0; k++) /* each dimension 1 or more, no wrap */
				if ((d = PyLong_AsSsize_t(PyTuple_GET_ITEM(sh, k))) < 1 ||
				    __builtin_mul_overflow(prod, d, &prod))
					prod = -1;
			if (!PyTuple_Check(sh) || PyErr_Occurred() ||
			    prod != (Py_ssize_t)self->b->columns[i].length) {
				Py_DECREF(c);
				Py_DECREF(t);
				if (!PyErr_Occurred())
					PyErr_Format(PyExc_ValueError,
					             "column %s: a shape of %zu elements",
					             self->b->columns[i].name,
					             self->b->columns[i].length);
				return NULL;
			}
			c->shape = Py_NewRef(sh);
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, (PyObject *)c);
	}
	return t;
}

static PyObject *record_bytes(const void *records, size_t i)
{
	const rio_batch_record *r = &((const rio_batch_record *)records)[i];
	return r->data ? PyBytes_FromStringAndSize((const char *)r->data, (Py_ssize_t)r->size)
	               : Py_NewRef(Py_None);
}

static PyObject *record_source(const void *records, size_t i)
{
	const rio_batch_record *r = &((const rio_batch_record *)records)[i];
	return Py_BuildValue("(IK)", r->shard, (unsigned long long)r->index);
}

/* records() -> list of bytes (raw batches), copied out of the batch. */
static PyObject *batch_records(BatchObject *self, PyObject *unused)
{
	(void)unused;
	return rio_py_list(self->b->count, record_bytes, self->b->records);
}

/* sources() -> list of (shard, index): where each record came from. */
static PyObject *batch_sources(BatchObject *self, PyObject *unused)
{
	(void)unused;
	return rio_py_list(self->b->count, record_source, self->b->records);
}

static PyObject *batch_get_count(BatchObject *self, void *c)
{
	(void)c;
	return PyLong_FromSize_t(self->b->count);
}

static PyObject *batch_get_epoch(BatchObject *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->b->epoch);
}

static PyObject *batch_get_number(BatchObject *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->b->number);
}

static PyMethodDef batch_methods[] = {
	{"columns", (PyCFunction)batch_columns, METH_VARARGS,
	 "columns(shapes=None) -> tuple of Column"},
	{"records", (PyCFunction)batch_records, METH_NOARGS, "records() -> list of bytes"},
	{"sources", (PyCFunction)batch_sources, METH_NOARGS,
	 "sources() -> list of (shard number, record number in the shard)"},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef batch_getset[] = {
	{"count", (getter)batch_get_count, NULL, "records in the batch", NULL},
	{"epoch", (getter)batch_get_epoch, NULL, "the batch's epoch", NULL},
	{"number", (getter)batch_get_number, NULL, "batch number in the epoch", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RioPy_BatchType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recordio._core.Batch",
	.tp_basicsize = sizeof(BatchObject),
	.tp_dealloc = (destructor)batch_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "One batch slot of a loader, held until this object and its columns are gone.",
	.tp_methods = batch_methods,
	.tp_getset = batch_getset,
};

/* ---- Column ----------------------------------------------------------- */

static void column_dealloc(ColumnObject *self)
{
	Py_XDECREF(self->shape);
	Py_XDECREF(self->batch);
	PyObject_Free(self);
}

static const char *typestr(rio_dtype t)
{
	switch (t) {
	case RIO_DTYPE_U8:
		return "|u1";
	case RIO_DTYPE_F32:
		return "<f4";
	case RIO_DTYPE_I64:
		return "<i8";
	case RIO_DTYPE_BF16: /* NumPy has no bfloat16: its bits (see _loader.py) */
		return "<u2";
	}
	return "|V1";
}

static const rio_batch_column *column_of(ColumnObject *self)
{
	return &self->batch->b->columns[self->i];
}

/* NumPy's array interface: shape (count, length), the batch's memory,
 * writable (the slot is the caller's until released). */
static PyObject *column_array_interface(ColumnObject *self, void *c)
{
	(void)c;
	const rio_batch_column *col = column_of(self);
	PyObject *shape = self->shape ? PySequence_Tuple(self->shape)
	                              : Py_BuildValue("(n)", (Py_ssize_t)col->length);
	if (!shape)
		return NULL;
	PyObject *lead = Py_BuildValue("(n)", (Py_ssize_t)self->batch->b->count);
	PyObject *full = lead ? PySequence_Concat(lead, shape) : NULL;
	Py_XDECREF(lead);
	Py_DECREF(shape);
	if (!full)
		return NULL;
	return Py_BuildValue("{sNsss(NO)si}", "shape", full, "typestr", typestr(col->type), "data",
	                     PyLong_FromVoidPtr(col->host), Py_False, "version", 3);
}

/* DLPack: the column as a tensor of shape (count, *record shape), its
 * dtype DLPack's own (bf16 as kDLBfloat, 16 bits), in host memory. The
 * stream and version arguments are accepted and have nothing to do: the
 * memory is the host's and ready. */
static PyObject *column_dlpack(ColumnObject *self, PyObject *args, PyObject *kw)
{
	(void)args;
	(void)kw;
	const rio_batch_column *col = column_of(self);
	PyObject *shape = self->shape ? PySequence_Tuple(self->shape) : NULL;
	if (self->shape && !shape)
		return NULL;
	Py_ssize_t rest = shape ? PyTuple_GET_SIZE(shape) : 1;
	int64_t dims[33];
	if (rest > 32) {
		Py_XDECREF(shape);
		return PyErr_Format(PyExc_BufferError, "a record shape of %zd dimensions", rest);
	}
	dims[0] = (int64_t)self->batch->b->count;
	for (Py_ssize_t i = 0; i < rest; i++)
		dims[1 + i] = shape ? PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i))
		                    : (int64_t)col->length;
	Py_XDECREF(shape);
	if (PyErr_Occurred())
		return NULL;
	return rio_py_dlpack((PyObject *)self, col->host, col->type, dims, (int)(1 + rest));
}

static PyObject *column_dlpack_device(ColumnObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return Py_BuildValue("(ii)", 1, 0); /* kDLCPU, device 0 */
}

static PyMethodDef column_methods[] = {
	{"__dlpack__", (PyCFunction)(void (*)(void))column_dlpack, METH_VARARGS | METH_KEYWORDS,
	 "__dlpack__(stream=None, ...) -> a DLPack capsule of the column (bf16: kDLBfloat)"},
	{"__dlpack_device__", (PyCFunction)column_dlpack_device, METH_NOARGS,
	 "__dlpack_device__() -> (1, 0): host memory"},
	{NULL, NULL, 0, NULL},
};

static PyObject *column_get_name(ColumnObject *self, void *c)
{
	(void)c;
	return PyUnicode_FromString(column_of(self)->name);
}

static PyObject *column_get_address(ColumnObject *self, void *c)
{
	(void)c;
	return PyLong_FromVoidPtr(column_of(self)->host);
}

static PyObject *column_get_device_address(ColumnObject *self, void *c)
{
	(void)c;
	const rio_batch_column *col = column_of(self);
	return col->device ? PyLong_FromVoidPtr(col->device) : Py_NewRef(Py_None);
}

static PyObject *column_get_batch(ColumnObject *self, void *c)
{
	(void)c;
	return Py_NewRef((PyObject *)self->batch);
}

static PyGetSetDef column_getset[] = {
	{"__array_interface__", (getter)column_array_interface, NULL, "NumPy's array interface",
	 NULL},
	{"name", (getter)column_get_name, NULL, "the column's name", NULL},
	{"address", (getter)column_get_address, NULL, "the address of its host memory", NULL},
	{"device_address", (getter)column_get_device_address, NULL,
	 "the address of its device copy (device_copy), or None", NULL},
	{"batch", (getter)column_get_batch, NULL, "the Batch it belongs to", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RioPy_ColumnType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recordio._core.Column",
	.tp_basicsize = sizeof(ColumnObject),
	.tp_dealloc = (destructor)column_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "One column of a Batch; numpy.asarray(column) views it without a copy.",
	.tp_getset = column_getset,
	.tp_methods = column_methods,
};
