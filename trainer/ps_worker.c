/*
 * ps_worker.c — a worker's side of the parameter-server protocol (ps.h):
 * one message and one gradient slice to every server, non-blocking, and
 * the replies' parameter slices received straight into the worker's host
 * copy of the parameters (under --precision bf16, received as bf16 and
 * widened into it).
 */
#include "config.h"
#include "ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* requests per server: reply, parameters, message, gradient; and per table
 * two more (ids, rows) */
enum { REQS = 4 + 2 * TR_MAX_EMBED };

/* The first index in sorted v[0, n) not below x. */
static size_t lower_bound(const int64_t *v, size_t n, int64_t x)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (v[m] < x)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The batch's unique ids of table t that server s holds: uniq[*a, *b). */
static void held_by(const tr_ps_worker *w, int t, int s, size_t *a, size_t *b)
{
	const tr_embed_run *e = w->embed;
	int64_t lo, hi;
	tr_embed_rows_of(e->t[t].vocab, w->servers, s, &lo, &hi);
	*a = lower_bound(e->uniq[t], e->nuniq[t], lo);
	*b = lower_bound(e->uniq[t], e->nuniq[t], hi);
}

/* Posts the sends of a table's ids held by server s (and, with rows, of
 * their rows' gradients), or the receive of their rows; q: 2 requests. */
static void table_part(tr_ps_worker *w, int t, int s, int push, MPI_Request *q)
{
	const tr_embed_run *e = w->embed;
	size_t a, b, dim = (size_t)e->t[t].dim;
	held_by(w, t, s, &a, &b);
	MPI_Isend(e->uniq[t] + a, (int)(b - a), MPI_INT64_T, s, TR_PS_TAG_IDS + t, w->comm, &q[0]);
	w->bytes += (double)(b - a) * (sizeof(int64_t) + dim * sizeof(float));
	if (push)
		MPI_Isend(e->rowgrad[t] + a * dim, (int)((b - a) * dim), MPI_FLOAT, s,
		          TR_PS_TAG_ROWS + t, w->comm, &q[1]);
	else
		MPI_Irecv(e->rows[t] + a * dim, (int)((b - a) * dim), MPI_FLOAT, s, TR_PS_TAG_ROWS + t,
		          w->comm, &q[1]);
}

int tr_ps_worker_init(tr_ps_worker *w, MPI_Comm comm, int servers, size_t nparams,
                      float *params_host)
{
	memset(w, 0, sizeof *w);
	w->comm = comm;
	w->servers = servers;
	w->n = nparams;
	w->params = params_host;
	size_t S = (size_t)servers;
	w->lo = calloc(S, sizeof *w->lo);
	w->hi = calloc(S, sizeof *w->hi);
	w->out = calloc(S, sizeof *w->out);
	w->in = calloc(S, sizeof *w->in);
	w->req = calloc(REQS * S, sizeof *w->req);
	w->version = calloc(S, sizeof *w->version);
	if (!w->lo || !w->hi || !w->out || !w->in || !w->req || !w->version) {
		tr_ps_worker_free(w);
		return -ENOMEM;
	}
	for (int s = 0; s < servers; s++)
		tr_ps_slice(nparams, servers, s, &w->lo[s], &w->hi[s]);
	return 0;
}

void tr_ps_worker_free(tr_ps_worker *w)
{
	free(w->lo);
	free(w->hi);
	free(w->out);
	free(w->in);
	free(w->req);
	free(w->version);
	free(w->cgrad);
	free(w->prx);
	memset(w, 0, sizeof *w);
}

int tr_ps_worker_compress(tr_ps_worker *w, tr_grad_comp comp, int workers)
{
	w->comp = comp;
	w->cscale = comp == TR_COMP_FP16 ? 1.0f / (float)workers : 1.0f;
	if (comp && !(w->cgrad = malloc((w->n ? w->n : 1) * sizeof *w->cgrad)))
		return -ENOMEM;
	return 0;
}

int tr_ps_worker_pull16(tr_ps_worker *w)
{
	w->prx = malloc((w->n ? w->n : 1) * sizeof *w->prx);
	return w->prx ? 0 : -ENOMEM;
}

int tr_ps_narrow(tr_ps_worker *w, const float *grads_host)
{
	tr_comp_narrow(w->comp, w->cgrad, grads_host, w->n, w->cscale);
	uint16_t inf = w->comp == TR_COMP_FP16 ? 0x7c00 : 0x7f80;
	int over = 0;
	for (size_t i = 0; i < w->n; i++)
		over |= (w->cgrad[i] & 0x7fff) == inf;
	return over;
}

void tr_ps_send(tr_ps_worker *w, uint32_t flags, const float *grads_host, uint64_t step,
                double rows)
{
	for (int s = 0; s < w->servers; s++) {
		MPI_Request *q = w->req + REQS * s;
		int n = (int)(w->hi[s] - w->lo[s]);
		/* the replies' receives first: a server may answer at once */
		MPI_Irecv(&w->in[s], sizeof w->in[s], MPI_BYTE, s, TR_PS_TAG_REPLY, w->comm, &q[0]);
		if (w->prx)
			MPI_Irecv(w->prx + w->lo[s], n, MPI_UINT16_T, s, TR_PS_TAG_PARAMS, w->comm, &q[1]);
		else
			MPI_Irecv(w->params + w->lo[s], n, MPI_FLOAT, s, TR_PS_TAG_PARAMS, w->comm, &q[1]);
		w->out[s] = (tr_ps_msg){.flags = flags, .clock = w->version[s], .step = step, .rows = rows};
		/* the message and its reply, the parameters, the gradient */
		size_t push = (flags & TR_PS_PUSH) ? (w->comp ? sizeof(uint16_t) : sizeof(float)) : 0;
		size_t pull = w->prx ? sizeof(uint16_t) : sizeof(float);
		w->bytes += 2.0 * sizeof w->out[s] + (double)n * (pull + push);
		MPI_Isend(&w->out[s], sizeof w->out[s], MPI_BYTE, s, TR_PS_TAG_MSG, w->comm, &q[2]);
		if ((flags & TR_PS_PUSH) && w->comp)
			MPI_Isend(w->cgrad + w->lo[s], n, MPI_UINT16_T, s, TR_PS_TAG_GRAD, w->comm, &q[3]);
		else if (flags & TR_PS_PUSH)
			MPI_Isend(grads_host + w->lo[s], n, MPI_FLOAT, s, TR_PS_TAG_GRAD, w->comm, &q[3]);
		else
			q[3] = MPI_REQUEST_NULL;
		for (int t = 0; t < TR_MAX_EMBED; t++) {
			if (w->embed && t < w->embed->n && (flags & TR_PS_SPARSE)) {
				table_part(w, t, s, 1, q + 4 + 2 * t);
			} else {
				q[4 + 2 * t] = MPI_REQUEST_NULL;
				q[5 + 2 * t] = MPI_REQUEST_NULL;
			}
		}
	}
	w->in_flight = 1;
}

void tr_ps_pull_rows(tr_ps_worker *w)
{
	for (int s = 0; s < w->servers; s++) {
		MPI_Request *q = w->req + REQS * s;
		w->out[s] = (tr_ps_msg){.flags = TR_PS_ROWS};
		MPI_Isend(&w->out[s], sizeof w->out[s], MPI_BYTE, s, TR_PS_TAG_MSG, w->comm, &q[2]);
		q[0] = q[1] = q[3] = MPI_REQUEST_NULL;
		for (int t = 0; t < TR_MAX_EMBED; t++) {
			if (t < w->embed->n) {
				table_part(w, t, s, 0, q + 4 + 2 * t);
			} else {
				q[4 + 2 * t] = MPI_REQUEST_NULL;
				q[5 + 2 * t] = MPI_REQUEST_NULL;
			}
		}
	}
	MPI_Waitall(REQS * w->servers, w->req, MPI_STATUSES_IGNORE);
}

int tr_ps_wait(tr_ps_worker *w)
{
	if (!w->in_flight)
		return 0;
	MPI_Waitall(REQS * w->servers, w->req, MPI_STATUSES_IGNORE);
	w->in_flight = 0;
	if (w->prx)
		tr_comp_widen(TR_COMP_BF16, w->params, w->prx, w->n, 1.0f);
	int stop = 0;
	for (int s = 0; s < w->servers; s++) {
		stop |= (w->in[s].flags & TR_PS_STOP) != 0;
		w->version[s] = w->in[s].clock;
	}
	return stop;
}
