/*
 * example.c — tf.train.Example and SequenceExample to and from Python: each
 * feature is (name, kind, value) with kind "bytes" (a list of bytes),
 * "float" / "int64" (a bytearray of native float32 / int64 values, which
 * the Python layer views as a NumPy array without a copy) or "none" (a
 * Feature with no kind set). recordio/_example.py turns these into dicts.
 */
#include "core.h"

#include <string.h>

static const char *kind_name(rio_feature_kind k)
{
	return rio_feature_kind_name(k);
}

/* A new list of what next(it, &item) gives: it returns 1 with an item (a
 * new reference, or NULL with an exception set), 0 at the end, or a
 * negative recordio error code, raised. NULL with an exception on failure. */
static PyObject *list_from(int (*next)(void *it, PyObject **item), void *it)
{
	PyObject *list = PyList_New(0);
	PyObject *o;
	int rc;
	while (list && (rc = next(it, &o)) == 1) {
		if (!o || PyList_Append(list, o) < 0)
			Py_CLEAR(list);
		Py_XDECREF(o);
	}
	if (list && rc < 0) {
		Py_DECREF(list);
		return rio_py_raise(rc, NULL, NULL, NULL, 0);
	}
	return list;
}

struct bytes_cursor {
	const rio_feature *f;
	size_t cursor;
};

static int next_bytes(void *it, PyObject **item)
{
	struct bytes_cursor *c = it;
	const uint8_t *v;
	size_t len;
	int rc = rio_feature_bytes_next(c->f, &c->cursor, &v, &len);
	if (rc == 1)
		*item = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)len);
	return rc;
}

/* One feature's value; NULL with an exception on damage. */
static PyObject *feature_value(const rio_feature *f)
{
	if (f->kind == RIO_FEATURE_BYTES) {
		struct bytes_cursor c = {f, 0};
		return list_from(next_bytes, &c);
	}
	if (f->kind == RIO_FEATURE_NONE)
		return Py_NewRef(Py_None);
	int64_t n = f->kind == RIO_FEATURE_FLOAT ? rio_feature_floats(f, NULL, 0)
	                                         : rio_feature_int64s(f, NULL, 0);
	if (n < 0)
		return rio_py_raise((int)n, NULL, NULL, NULL, 0);
	size_t width = f->kind == RIO_FEATURE_FLOAT ? sizeof(float) : sizeof(int64_t);
	PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * width));
	if (!out)
		return NULL;
	int64_t got = f->kind == RIO_FEATURE_FLOAT
	                      ? rio_feature_floats(f, (float *)PyByteArray_AS_STRING(out), (size_t)n)
	                      : rio_feature_int64s(f, (int64_t *)PyByteArray_AS_STRING(out),
	                                           (size_t)n);
	if (got < 0) {
		Py_DECREF(out);
		return rio_py_raise((int)got, NULL, NULL, NULL, 0);
	}
	return out;
}

/* The next feature of an Example as (name, kind, value). */
static int next_feature(void *it, PyObject **item)
{
	rio_feature f;
	int rc = rio_example_iter_next(it, &f);
	if (rc == 1) {
		PyObject *v = feature_value(&f);
		*item = v ? Py_BuildValue("(s#sN)", f.name, (Py_ssize_t)f.name_len,
		                          kind_name(f.kind), v)
		          : NULL;
	}
	return rc;
}

/* The next step of a FeatureList as (kind, value). */
static int next_step(void *it, PyObject **item)
{
	rio_feature f;
	int rc = rio_feature_list_iter_next(it, &f);
	if (rc == 1) {
		PyObject *v = feature_value(&f);
		*item = v ? Py_BuildValue("(sN)", kind_name(f.kind), v) : NULL;
	}
	return rc;
}

/* The next FeatureList of a SequenceExample as (name, [steps]). */
static int next_feature_list(void *it, PyObject **item)
{
	rio_feature_list fl;
	int rc = rio_feature_lists_iter_next(it, &fl);
	if (rc == 1) {
		rio_feature_list_iter li;
		rio_feature_list_iter_init(&li, &fl);
		PyObject *steps = list_from(next_step, &li);
		*item = steps ? Py_BuildValue("(s#N)", fl.name, (Py_ssize_t)fl.name_len, steps)
		              : NULL;
	}
	return rc;
}

/* The Example API's features of `data` (an Example, or a SequenceExample's
 * context), as a list of tuples. */
static PyObject *features_list(const void *data, size_t size)
{
	rio_example_iter it;
	rio_example_iter_init(&it, data, size);
	return list_from(next_feature, &it);
}

PyObject *rio_py_example_parse(PyObject *self, PyObject *args)
{
	(void)self;
	Py_buffer b;
	if (!PyArg_ParseTuple(args, "y*", &b))
		return NULL;
	PyObject *r = NULL;
	int rc = rio_example_validate(b.buf, (size_t)b.len);
	if (rc < 0)
		rio_py_raise(rc, NULL, NULL, NULL, 0);
	else
		r = features_list(b.buf, (size_t)b.len);
	PyBuffer_Release(&b);
	return r;
}

PyObject *rio_py_sequence_example_parse(PyObject *self, PyObject *args)
{
	(void)self;
	Py_buffer b;
	if (!PyArg_ParseTuple(args, "y*", &b))
		return NULL;
	PyObject *ctx = NULL, *lists = NULL;
	int rc = rio_sequence_example_validate(b.buf, (size_t)b.len);
	if (rc < 0) {
		rio_py_raise(rc, NULL, NULL, NULL, 0);
	} else if ((ctx = features_list(b.buf, (size_t)b.len))) {
		rio_feature_lists_iter it;
		rio_feature_lists_iter_init(&it, b.buf, (size_t)b.len);
		lists = list_from(next_feature_list, &it);
	}
	PyBuffer_Release(&b);
	if (!lists) {
		Py_XDECREF(ctx);
		return NULL;
	}
	return Py_BuildValue("(NN)", ctx, lists);
}

/* Adds one (name, kind, value) to the builder; -1 with an exception. */
static int add_feature(rio_example_builder *bld, PyObject *item)
{
	const char *name, *kind;
	Py_ssize_t name_len;
	PyObject *value;
	if (!PyArg_ParseTuple(item, "s#sO", &name, &name_len, &kind, &value))
		return -1;
	if ((size_t)name_len != strlen(name)) {
		PyErr_SetString(PyExc_ValueError, "a feature name holds a NUL character");
		return -1;
	}
	int rc;
	if (strcmp(kind, "bytes") == 0) {
		PyObject *seq = PySequence_Fast(value, "a bytes feature's value: a list of bytes");
		if (!seq)
			return -1;
		Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
		Py_buffer *bufs = PyMem_Calloc((size_t)n + 1, sizeof *bufs);
		const void **ptrs = PyMem_Calloc((size_t)n + 1, sizeof *ptrs);
		size_t *lens = PyMem_Calloc((size_t)n + 1, sizeof *lens);
		Py_ssize_t got = 0;
		rc = 0;
		if (!bufs || !ptrs || !lens) {
			PyErr_NoMemory();
			rc = -1;
		}
		for (; rc == 0 && got < n; got++) {
			if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &bufs[got],
			                       PyBUF_SIMPLE) < 0) {
				rc = -1;
				break;
			}
			ptrs[got] = bufs[got].buf;
			lens[got] = (size_t)bufs[got].len;
		}
		if (rc == 0 && rio_example_add_bytes_list(bld, name, ptrs, lens, (size_t)n) < 0) {
			PyErr_NoMemory();
			rc = -1;
		}
		for (Py_ssize_t i = 0; bufs && i < got; i++)
			PyBuffer_Release(&bufs[i]);
		PyMem_Free(bufs);
		PyMem_Free(ptrs);
		PyMem_Free(lens);
		Py_DECREF(seq);
		return rc;
	}
	if (strcmp(kind, "none") == 0)
		rc = rio_example_add_empty(bld, name);
	else if (strcmp(kind, "float") == 0 || strcmp(kind, "int64") == 0) {
		Py_buffer b;
		if (PyObject_GetBuffer(value, &b, PyBUF_C_CONTIGUOUS) < 0)
			return -1;
		size_t width = kind[0] == 'f' ? sizeof(float) : sizeof(int64_t);
		if ((size_t)b.len % width) {
			PyBuffer_Release(&b);
			PyErr_Format(PyExc_ValueError, "feature %s: %zd bytes are not %s values", name,
			             b.len, kind);
			return -1;
		}
		rc = kind[0] == 'f'
		             ? rio_example_add_floats(bld, name, b.buf, (size_t)b.len / width)
		             : rio_example_add_int64s(bld, name, b.buf, (size_t)b.len / width);
		PyBuffer_Release(&b);
	} else {
		PyErr_Format(PyExc_ValueError, "feature %s: kind %s: want bytes, float, int64 or none",
		             name, kind);
		return -1;
	}
	if (rc < 0) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

PyObject *rio_py_example_build(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *features;
	if (!PyArg_ParseTuple(args, "O", &features))
		return NULL;
	PyObject *seq = PySequence_Fast(features, "features: a list of (name, kind, value)");
	if (!seq)
		return NULL;
	rio_example_builder bld;
	rio_example_builder_init(&bld);
	PyObject *r = NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	for (Py_ssize_t i = 0; i < n; i++)
		if (add_feature(&bld, PySequence_Fast_GET_ITEM(seq, i)) < 0)
			goto out;
	const uint8_t *data;
	size_t size;
	if (rio_example_finish(&bld, &data, &size) < 0) {
		PyErr_NoMemory();
		goto out;
	}
	r = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)size);
out:
	rio_example_builder_free(&bld);
	Py_DECREF(seq);
	return r;
}
