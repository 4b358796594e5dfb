/*
 * ps_run.c — what --strategy ps adds to a run (ps.h has the protocol):
 * making this rank's server or worker, placing the parameters and the
 * optimizer's state (whole on the workers, a slice on each server), a
 * segment of training (a server serves it, a worker steps through it),
 * and what rank 0 reports and checkpoints: the workers' sums, the
 * servers' counts, every server's slice.
 */
#include "config.h"
#include "ps_run.h"
#include "clock.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tr_ps_open(tr_run *r)
{
	int S = r->o.servers;
	/* hybrid: the dense layers stay with the workers */
	size_t dense = r->o.strategy == TR_STRATEGY_HYBRID ? 0 : r->net.nparams;
	if (r->w.rank < S) {
		r->ps_server = calloc(1, sizeof *r->ps_server);
		if (!r->ps_server)
			return -ENOMEM;
		return tr_ps_server_init(r->ps_server, r->w.comm, S, r->data_world, r->math, dense,
		                         &r->opt.cfg, r->o.staleness,
		                         r->o.staleness_lr, r->o.backup_workers, r->o.eval_every);
	}
	r->ps_worker = calloc(1, sizeof *r->ps_worker);
	if (!r->ps_worker)
		return -ENOMEM;
	/* the replies land in the host copy: on the CPU, the parameters */
	float *host = tr_math_device(r->math) == TR_DEVICE_CPU
	                      ? r->net.params
	                      : tr_math_host_alloc(r->math, r->net.nparams);
	if (!host)
		return -ENOMEM;
	return tr_ps_worker_init(r->ps_worker, r->w.comm, S, dense, host);
}

void tr_ps_close(tr_run *r)
{
	if (r->ps_server) {
		tr_ps_server_free(r->ps_server);
		free(r->ps_server);
	}
	if (r->ps_worker) {
		if (r->ps_worker->params && r->ps_worker->params != r->net.params)
			tr_math_host_free(r->math, r->ps_worker->params);
		tr_ps_worker_free(r->ps_worker);
		free(r->ps_worker);
	}
	r->ps_server = NULL;
	r->ps_worker = NULL;
}

void tr_ps_place(tr_run *r, int which, const float *host)
{
	tr_ps_server *s = r->ps_server;
	if (s) {
		float *dst = tr_optim_buffer(&s->opt, s->params, which);
		if (dst)
			tr_math_from_host(s->math, dst, host + s->lo, s->n);
	} else if (which == 0) {
		tr_math_from_host(r->math, r->net.params, host, r->net.nparams);
	} else if (r->o.strategy == TR_STRATEGY_HYBRID) { /* the workers' optimizer */
		float *dst = tr_optim_buffer(&r->opt, r->net.params, which);
		if (dst)
			tr_math_from_host(r->math, dst, host, r->net.nparams);
	}
}

void tr_ps_place_table(tr_run *r, int t, int which, const float *host)
{
	tr_ps_server *s = r->ps_server;
	if (!s)
		return;
	tr_ps_table *tb = &s->tab[t];
	float *dst = tr_optim_buffer(&tb->opt, tb->params, which);
	if (dst)
		memcpy(dst, host + (size_t)tb->lo * (size_t)tb->dim,
		       (size_t)(tb->hi - tb->lo) * (size_t)tb->dim * sizeof(float));
}

void tr_ps_collect_table(tr_run *r, int t, int which, float *host)
{
	tr_ps_server *s = r->ps_server;
	int S = r->o.servers, tag = TR_PS_TAG_ROWS + 50 + 3 * t + which;
	int64_t vocab = r->o.embed[t].vocab;
	size_t dim = (size_t)r->o.embed[t].dim;
	if (r->w.rank == 0) {
		tr_ps_table *tb = &s->tab[t];
		memcpy(host + (size_t)tb->lo * dim, tr_optim_buffer(&tb->opt, tb->params, which),
		       (size_t)(tb->hi - tb->lo) * dim * sizeof(float));
		for (int k = 1; k < S; k++) {
			int64_t lo, hi;
			tr_embed_rows_of(vocab, S, k, &lo, &hi);
			MPI_Recv(host + (size_t)lo * dim, (int)((size_t)(hi - lo) * dim), MPI_FLOAT, k, tag,
			         r->w.comm, MPI_STATUS_IGNORE);
		}
	} else if (s) {
		tr_ps_table *tb = &s->tab[t];
		MPI_Send(tr_optim_buffer(&tb->opt, tb->params, which), (int)((size_t)(tb->hi - tb->lo) * dim), MPI_FLOAT, 0,
		         tag, r->w.comm);
	}
}

void tr_ps_collect(tr_run *r, int which, float *host)
{
	tr_ps_server *s = r->ps_server;
	int S = r->o.servers;
	if (r->o.strategy == TR_STRATEGY_HYBRID) {
		/* the dense layers are the workers': worker 0's copy */
		const float *mine = tr_optim_buffer(&r->opt, r->net.params, which);
		if (r->w.rank == 0)
			MPI_Recv(host, (int)r->net.nparams, MPI_FLOAT, S, TR_PS_TAG_PARAMS + 10 + which,
			         r->w.comm, MPI_STATUS_IGNORE);
		else if (r->w.rank == S)
			MPI_Send(mine, (int)r->net.nparams, MPI_FLOAT, 0, TR_PS_TAG_PARAMS + 10 + which,
			         r->w.comm);
		return;
	}
	/* each server's slice to rank 0 (server 0) */
	if (r->w.rank == 0) {
		const float *mine = tr_optim_buffer(&s->opt, s->params, which);
		tr_math_to_host(s->math, host + s->lo, mine, s->n);
		for (int k = 1; k < S; k++) {
			size_t lo, hi;
			tr_ps_slice(r->net.nparams, S, k, &lo, &hi);
			MPI_Recv(host + lo, (int)(hi - lo), MPI_FLOAT, k, TR_PS_TAG_PARAMS + 10 + which,
			         r->w.comm, MPI_STATUS_IGNORE);
		}
	} else if (s) {
		const float *mine = tr_optim_buffer(&s->opt, s->params, which);
		MPI_Send(mine, (int)s->n, MPI_FLOAT, 0, TR_PS_TAG_PARAMS + 10 + which, r->w.comm);
	}
}

/* A worker's segment: from its first pull to the reply to its last
 * message. -1 when its data failed (message in err). */
static int worker_segment(tr_run *r, char *err, size_t errlen)
{
	tr_ps_worker *pw = r->ps_worker;
	uint64_t max = r->o.max_steps, every = r->o.checkpoint_every;
	int over = r->step_in_epoch >= r->epoch_steps || (max && r->global_step >= max);
	tr_ps_send(pw, TR_PS_PULL | (over ? TR_PS_LAST : 0), NULL, 0, 0);
	int stop = tr_ps_wait(pw);
	if (!stop)
		tr_math_from_host(r->math, r->net.params, pw->params, r->net.nparams);
	if (over)
		return 0;
	while (!stop) {
		int last = r->step_in_epoch + 1 >= r->epoch_steps ||
		           (max && r->global_step + 1 >= max) ||
		           (every && (r->global_step + 1) % every == 0);
		int rc = tr_ps_step(r, last, err, errlen);
		if (rc < 0)
			return -1;
		if (last)
			return 0;
		stop = rc == 1;
	}
	/* another worker failed: end the segment here */
	tr_ps_send(pw, TR_PS_PULL | TR_PS_LAST, NULL, 0, 0);
	tr_ps_wait(pw);
	return 0;
}

int tr_ps_segment(tr_run *r, int *stopped, int *mid_epoch, char *err, size_t errlen)
{
	int failed = 0;
	if (r->ps_server) {
		int rc = tr_ps_serve(r->ps_server, 1);
		if (rc == -ENOMEM) {
			snprintf(err, errlen, "server %d: out of memory (a copy of the parameters for "
			         "--eval-every, or the rows pushed)", r->w.rank);
			failed = 1;
		}
		tr_ps_stats *e = &r->ps_epoch, *g = &r->ps_server->st;
		e->updates += g->updates;
		e->gradients += g->gradients;
		e->dropped += g->dropped;
		e->skipped += g->skipped;
		e->staleness_sum += g->staleness_sum;
		e->samples += g->samples;
		if (g->staleness_max > e->staleness_max)
			e->staleness_max = g->staleness_max;
	} else {
		failed = worker_segment(r, err, errlen) < 0;
	}
	/* every rank learns how the segment ended */
	int local[2] = {r->ps_worker && r->o.max_steps && r->global_step >= r->o.max_steps,
	                r->ps_worker && r->step_in_epoch < r->epoch_steps};
	int all[2];
	MPI_Allreduce(local, all, 2, MPI_INT, MPI_MAX, r->w.comm);
	*stopped = all[0];
	*mid_epoch = all[1];
	return failed;
}

void tr_ps_epoch_figures(tr_run *r, tr_ps_figures *f)
{
	memset(f, 0, sizeof *f);
	/* the workers' sums */
	double bytes = r->ps_worker ? r->ps_worker->bytes - r->ps_bytes0 : 0;
	/* the bytes are this process's: per step it took (not a resumed
	 * epoch's steps before) */
	double v[10] = {r->ep_loss, r->ep_correct, r->ep_count, (double)r->ep_skipped, r->t_wait,
	                r->red.seconds, r->ps_worker ? 1 : 0, bytes,
	                r->ps_worker ? (double)(r->step_in_epoch - r->step0) : 0, r->ep_count0};
	double sum[10];
	MPI_Reduce(v, sum, 10, MPI_DOUBLE, MPI_SUM, 0, r->w.comm);
	if (r->ps_worker)
		r->ps_bytes0 = r->ps_worker->bytes;
	/* the servers' counts: server 0's updates, the staleness over all */
	tr_ps_stats *e = &r->ps_epoch;
	double sv[3] = {e->staleness_sum, (double)e->gradients, (double)e->dropped};
	double ssum[3];
	MPI_Reduce(sv, ssum, 3, MPI_DOUBLE, MPI_SUM, 0, r->w.comm);
	uint64_t smax = e->staleness_max, gmax = 0;
	MPI_Reduce(&smax, &gmax, 1, MPI_UINT64_T, MPI_MAX, 0, r->w.comm);
	/* each worker's steps */
	uint64_t steps = r->ps_worker ? r->step_in_epoch : 0;
	uint64_t *all = r->w.rank == 0 ? calloc((size_t)r->w.size, sizeof *all) : NULL;
	uint64_t dummy[1];
	MPI_Gather(&steps, 1, MPI_UINT64_T, all ? all : dummy, 1, MPI_UINT64_T, 0, r->w.comm);
	if (r->w.rank != 0)
		return;
	f->loss = sum[0];
	f->correct = sum[1];
	f->count = sum[2];
	f->count_before = sum[9];
	f->skipped_steps = (uint64_t)sum[3];
	f->data_wait = sum[6] > 0 ? sum[4] / sum[6] : 0;
	f->bytes_per_step = sum[8] > 0 ? sum[7] / sum[8] : 0;
	f->exchange = sum[6] > 0 ? sum[5] / sum[6] : 0;
	f->updates = e->updates;
	f->gradients = e->gradients;
	f->dropped = e->dropped;
	f->skipped_server = e->skipped;
	f->staleness_max = gmax;
	f->staleness_mean = ssum[1] > 0 ? ssum[0] / ssum[1] : 0;
	f->nworkers = r->data_world;
	f->worker_steps = all ? all + r->o.servers : NULL;
	f->worker_steps_block = all;
}

int tr_snapshot_take(tr_run *r, double seconds)
{
	tr_ps_snapshot *p = tr_ps_snapshot_add(&r->snap, &r->nsnap, &r->capsnap, r->net.nparams);
	if (!p)
		return -ENOMEM;
	tr_math_to_host(r->math, p->params, r->net.params, r->net.nparams);
	p->updates = r->global_step;
	p->gradients = r->total_gradients;
	p->samples = r->total_samples;
	p->seconds = seconds;
	return 0;
}

/* ps: copy i of every server's slice into the workers' parameters (a
 * server receives the others' into scratch), and server 0's figures. */
static void gather_ps_snapshot(tr_run *r, int i, float *scratch, double meta[4])
{
	tr_ps_server *s = r->ps_server;
	int S = r->o.servers;
	if (r->w.rank == 0) {
		const tr_ps_snapshot *p = &s->snap[i];
		meta[0] = (double)p->updates;
		meta[1] = (double)p->gradients;
		meta[2] = p->samples;
		meta[3] = p->seconds;
	}
	MPI_Bcast(meta, 4, MPI_DOUBLE, 0, r->w.comm);
	for (int k = 0; k < S; k++) {
		size_t lo, hi;
		tr_ps_slice(r->net.nparams, S, k, &lo, &hi);
		float *buf = r->ps_worker ? r->ps_worker->params + lo
		             : r->w.rank == k ? s->snap[i].params : scratch;
		MPI_Bcast(buf, (int)(hi - lo), MPI_FLOAT, k, r->w.comm);
	}
	if (r->ps_worker)
		tr_math_from_host(r->math, r->net.params, r->ps_worker->params, r->net.nparams);
}

int tr_snapshots_eval(tr_run *r, FILE *metrics, char *err, size_t errlen)
{
	int ps = r->o.strategy != TR_STRATEGY_ALLREDUCE, failed = 0;
	/* how many: the fewest any server kept (each counts its own) */
	int mine = ps ? (r->ps_server ? r->ps_server->nsnap : 1 << 30) : r->nsnap, n = 0;
	MPI_Allreduce(&mine, &n, 1, MPI_INT, MPI_MIN, r->w.comm);
	float *scratch = NULL;
	if (ps && r->ps_server && n > 0) {
		size_t per = (r->net.nparams + (size_t)r->o.servers - 1) / (size_t)r->o.servers + 16;
		scratch = malloc(per * sizeof *scratch);
		if (!scratch) /* in the middle of the broadcasts: the whole job goes */
			tr_world_abort(&r->w, "out of memory evaluating --eval-every's copies", 1);
	}
	for (int i = 0; i < n; i++) {
		double meta[4];
		if (ps) {
			gather_ps_snapshot(r, i, scratch, meta);
		} else {
			const tr_ps_snapshot *p = &r->snap[i];
			meta[0] = (double)p->updates;
			meta[1] = (double)p->gradients;
			meta[2] = p->samples;
			meta[3] = p->seconds;
			tr_math_from_host(r->math, r->net.params, p->params, r->net.nparams);
		}
		/* collective: every rank evaluates every copy, failed or not (the
		 * first message kept), so that none waits on another */
		double test[3] = {0, 0, 0};
		char later[256];
		if (tr_run_eval(r, test, failed ? later : err, failed ? sizeof later : errlen) < 0)
			failed = 1;
		if (r->w.rank == 0 && metrics && !failed) {
			tr_snapshot_report s = {
				.epoch = r->epoch + 1,
				.updates = (uint64_t)meta[0],
				.gradients = (uint64_t)meta[1],
				.samples = meta[2],
				.wall_seconds = meta[3],
				.test_loss = test[2] > 0 ? test[0] / test[2] : NAN,
				.test_accuracy = test[2] > 0 ? test[1] / test[2] : NAN,
			};
			if (tr_report_snapshot_json(metrics, &s) < 0) {
				snprintf(err, errlen, "--metrics %s: write failed: %s", r->o.metrics,
				         strerror(errno));
				failed = 1;
			}
		}
	}
	free(scratch);
	if (r->ps_server)
		tr_ps_snapshots_clear(r->ps_server);
	for (int i = 0; i < r->nsnap; i++)
		free(r->snap[i].params);
	r->nsnap = 0;
	return failed ? -1 : 0;
}
