/*
 * ps_worker.c — a worker's side of the parameter-server protocol (ps.h):
 * one message and one gradient slice to every server, non-blocking, and
 * the replies' parameter slices received straight into the worker's host
 * copy of the parameters.
 */
#include "config.h"
#include "ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	w->req = calloc(4 * S, sizeof *w->req);
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
	memset(w, 0, sizeof *w);
}

void tr_ps_send(tr_ps_worker *w, uint32_t flags, const float *grads_host, uint64_t step,
                double rows)
{
	for (int s = 0; s < w->servers; s++) {
		MPI_Request *q = w->req + 4 * s;
		int n = (int)(w->hi[s] - w->lo[s]);
		/* the replies' receives first: a server may answer at once */
		MPI_Irecv(&w->in[s], sizeof w->in[s], MPI_BYTE, s, TR_PS_TAG_REPLY, w->comm, &q[0]);
		MPI_Irecv(w->params + w->lo[s], n, MPI_FLOAT, s, TR_PS_TAG_PARAMS, w->comm, &q[1]);
		w->out[s] = (tr_ps_msg){.flags = flags, .clock = w->version[s], .step = step, .rows = rows};
		MPI_Isend(&w->out[s], sizeof w->out[s], MPI_BYTE, s, TR_PS_TAG_MSG, w->comm, &q[2]);
		if (flags & TR_PS_PUSH)
			MPI_Isend(grads_host + w->lo[s], n, MPI_FLOAT, s, TR_PS_TAG_GRAD, w->comm, &q[3]);
		else
			q[3] = MPI_REQUEST_NULL;
	}
	w->in_flight = 1;
}

int tr_ps_wait(tr_ps_worker *w)
{
	if (!w->in_flight)
		return 0;
	MPI_Waitall(4 * w->servers, w->req, MPI_STATUSES_IGNORE);
	w->in_flight = 0;
	int stop = 0;
	for (int s = 0; s < w->servers; s++) {
		stop |= (w->in[s].flags & TR_PS_STOP) != 0;
		w->version[s] = w->in[s].clock;
	}
	return stop;
}
