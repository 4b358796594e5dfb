/*
 * dlpack.c — a column's memory as a DLPack capsule (Column.__dlpack__),
 * so that torch.from_dlpack(column) shares it, bf16 columns as
 * torch.bfloat16: NumPy has no bfloat16 type to carry that through
 * __array_interface__ (a bf16 column is uint16 there).
 *
 * The structs are DLPack's (dlpack.h, ABI of version 0.8, unversioned
 * "dltensor" capsules), written out here: the header is not packaged on
 * Debian. The tensor holds a reference to its owner (the Column, which
 * holds the batch slot) until the consumer calls the deleter, from any
 * thread, with or without the GIL.
 */
#include "core.h"

#include <stdint.h>
#include <stdlib.h>

enum { DL_CPU = 1 };
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4 };

typedef struct {
	int32_t device_type;
	int32_t device_id;
} dl_device;

typedef struct {
	uint8_t code;
	uint8_t bits;
	uint16_t lanes;
} dl_dtype;

typedef struct {
	void *data;
	dl_device device;
	int32_t ndim;
	dl_dtype dtype;
	int64_t *shape;
	int64_t *strides;
	uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
	dl_tensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct dl_managed *self);
} dl_managed;

/* One allocation: the managed tensor, then its shape and strides. */
typedef struct {
	dl_managed m;
	PyObject *owner;
	int64_t dims[]; /* shape[ndim], then strides[ndim] */
} dl_block;

static void dl_delete(dl_managed *m)
{
	dl_block *b = (dl_block *)(void *)m;
	PyGILState_STATE g = PyGILState_Ensure();
	Py_XDECREF(b->owner);
	PyGILState_Release(g);
	free(b);
}

/* A capsule never consumed frees its tensor; a consumed one was renamed
 * "used_dltensor" and is the consumer's. */
static void capsule_free(PyObject *cap)
{
	if (!PyCapsule_IsValid(cap, "dltensor"))
		return;
	dl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
	if (m && m->deleter)
		m->deleter(m);
}

static int dl_type_of(rio_dtype t, dl_dtype *d)
{
	d->lanes = 1;
	d->bits = (uint8_t)(8 * rio_dtype_size(t));
	switch (t) {
	case RIO_DTYPE_U8:
		d->code = DL_UINT;
		return 0;
	case RIO_DTYPE_F32:
		d->code = DL_FLOAT;
		return 0;
	case RIO_DTYPE_I64:
		d->code = DL_INT;
		return 0;
	case RIO_DTYPE_BF16:
		d->code = DL_BFLOAT;
		return 0;
	}
	return -1;
}

PyObject *rio_py_dlpack(PyObject *owner, void *data, rio_dtype type, const int64_t *shape,
                        int ndim)
{
	dl_dtype dt;
	if (dl_type_of(type, &dt) < 0)
		return PyErr_Format(PyExc_BufferError, "dtype %d has no DLPack type", (int)type);
	dl_block *b = malloc(sizeof *b + 2 * (size_t)ndim * sizeof(int64_t));
	if (!b)
		return PyErr_NoMemory();
	int64_t *strides = b->dims + ndim, step = 1;
	for (int i = ndim - 1; i >= 0; i--) {
		b->dims[i] = shape[i];
		strides[i] = step;
		step *= shape[i];
	}
	b->m.dl_tensor = (dl_tensor){.data = data,
	                             .device = {DL_CPU, 0},
	                             .ndim = ndim,
	                             .dtype = dt,
	                             .shape = b->dims,
	                             .strides = strides,
	                             .byte_offset = 0};
	b->m.manager_ctx = b;
	b->m.deleter = dl_delete;
	b->owner = Py_NewRef(owner);
	PyObject *cap = PyCapsule_New(&b->m, "dltensor", capsule_free);
	if (!cap) {
		Py_DECREF(owner);
		free(b);
	}
	return cap;
}
