/*
 * step.c — one training step and one evaluation pass of a rank.
 *
 * A step: take the next batch from the loader (timing the wait), forward,
 * loss; the step's loss, correct count, record count and flags (a NaN or
 * an infinity in the rank's input or loss, a data error) are summed over
 * the ranks ahead of the gradients (the reducer's head), while backward
 * runs. As each layer's gradients are final they are staged to host
 * memory (on a GPU) and handed to the reducer, whose buckets are summed
 * over the ranks while backward goes on; each bucket is updated by the
 * optimizer as soon as its sum is in (on one rank: at once, while it is
 * in cache), in one pass. When any rank saw a non-finite value, all skip
 * the update; a bucket whose sum is not finite (backward overflowed) is
 * not applied, and the step counts as skipped.
 * A rank whose data fails (damage, a label outside --classes) still takes
 * part in the step's collectives, with nothing to add and a flag set, so
 * that every rank learns of it at the same moment and none is left waiting.
 */
#include "config.h"
#include "run.h"
#include "clock.h"
#include "rng.h"
#include "embed_run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int on_gpu(const tr_run *r) { return tr_math_device(r->math) == TR_DEVICE_CUDA; }

/* The loader's message (shard, offset, record, what). A feature whose
 * length differs from the column spec is said in the trainer's terms: the
 * specs are the lengths of the first record of --train (feature_spec.c),
 * "SHARD: offset O (record R): feature 'image' has 780 bytes, the first
 * record of --train had 784". */
static void loader_error(rio_loader *l, int rc, char *err, size_t errlen)
{
	const rio_error *e = rio_loader_error(l);
	const char *m = e->message[0] ? e->message : rio_strerror(rc);
	char what[128];
	snprintf(what, sizeof what, ": %s: ", rio_strerror(RIO_EFEATURELEN));
	const char *cut = rc == RIO_EFEATURELEN ? strstr(m, what) : NULL;
	const char *wants = cut ? strstr(cut, ", the spec wants ") : NULL;
	if (!wants) {
		snprintf(err, errlen, "%s", m);
		return;
	}
	snprintf(err, errlen, "%.*s: %.*s, the first record of --train had %s", (int)(cut - m), m,
	         (int)(wants - cut - strlen(what)), cut + strlen(what),
	         wants + strlen(", the spec wants "));
}

/* The batch as the model's input; checks every label against --classes. */
static int batch_input(tr_run *r, rio_loader *l, const rio_batch *b, tr_input *in,
                       char *err, size_t errlen)
{
	int nx = r->o.nx, gpu = on_gpu(r);
	memset(in, 0, sizeof *in);
	in->nparts = nx;
	in->rows = (int)b->count;
	for (int i = 0; i < nx; i++) {
		in->part[i] = gpu ? b->columns[i].device : b->columns[i].host;
		in->width[i] = (int)r->specs[i].length;
	}
	int label = nx + r->embed.n; /* after the inputs and the --embed ids */
	const int64_t *y = b->columns[label].host;
	for (size_t i = 0; i < b->count; i++)
		if (y[i] < 0 || y[i] >= r->o.classes) {
			const rio_batch_record *rec = &b->records[i];
			snprintf(err, errlen, "%s: record %llu: label %lld is outside [0, %d) (--classes)",
			         rio_loader_shards(l)->paths[rec->shard], (unsigned long long)rec->index,
			         (long long)y[i], r->o.classes);
			return -1;
		}
	in->labels = gpu ? b->columns[label].device : y;
	/* --embed: the ids, checked and made unique; the pooled block is
	 * filled by embed_input once the rows are at hand */
	if (r->embed.n &&
	    tr_embed_run_ids(&r->embed, b, nx, rio_loader_shards(l), err, errlen) < 0)
		return -1;
	return 0;
}

/* --embed: the rows of the batch's ids (pulled from the servers under ps
 * and hybrid), pooled into the model's last input block. */
static void embed_input(tr_run *r, tr_input *in)
{
	if (!r->embed.n)
		return;
	if (!r->embed.whole)
		tr_ps_pull_rows(r->ps_worker);
	tr_embed_run_pool(&r->embed, in->rows);
	in->part[in->nparts] = r->embed.block;
	in->width[in->nparts] = r->embed.width;
	in->nparts++;
}

/* 1 when an input block that can hold NaN or infinities (a float or int64
 * list: bytes become 0..1) holds one; read on the host. */
static int input_nonfinite(const tr_run *r, const rio_batch *b)
{
	for (int i = 0; i < r->o.nx; i++)
		if (r->specs[i].scale == 0.0f &&
		    tr_nonfinite(b->columns[i].host, b->count * r->specs[i].length))
			return 1;
	return 0;
}

/* The step's batch, from the loader (or --synthetic) as the model's input,
 * its wait timed: 1, or 0 when the rank's epoch ended early (damaged
 * records were skipped; under ps, `must` 1, that is a failure), with
 * *failed set and a message in err when the data failed. */
static int next_batch(tr_run *r, rio_batch **b, tr_input *in, int must, int *failed,
                      char *err, size_t errlen)
{
	double t0 = tr_now();
	int rc = 1;
	if (r->synth) /* made finite, with labels in range */
		tr_synthetic_batch(r->synth, r->global_step, in);
	else
		rc = rio_loader_next(r->train, b);
	r->t_wait += tr_now() - t0;
	if (r->synth) {
	} else if (rc < 0) {
		loader_error(r->train, rc, err, errlen);
		*failed = 1;
	} else if (rc == 0 && must) {
		snprintf(err, errlen, "--train %s: the epoch ended before its %llu steps", r->o.train,
		         (unsigned long long)r->epoch_steps);
		*failed = 1;
	} else if (rc == 1 && batch_input(r, r->train, *b, in, err, errlen) < 0) {
		*failed = 1;
	}
	return rc;
}

typedef struct step_ctx {
	tr_run *run;
	size_t staged;      /* GPU: grads [0, staged) copied to the host      */
	int decided;        /* the head's sums are in and were read           */
	int apply;          /* ... and say the step is to be applied          */
	int partial;        /* a bucket's sum was not finite: not applied     */
} step_ctx;

/* Once the head's sums are in: whether the step is applied, and how. */
static int decide(step_ctx *s, int wait)
{
	tr_run *r = s->run;
	if (s->decided)
		return 1;
	if (!tr_reducer_head_in(&r->red, wait))
		return 0;
	const float *sum = r->red.head_out;
	s->decided = 1;
	s->apply = sum[TR_EXTRA_FAILED] == 0 && sum[TR_EXTRA_NONFINITE] == 0 &&
	           sum[TR_EXTRA_COUNT] >= 1;
	if (s->apply)
		tr_optim_begin(&r->opt, 1.0f / sum[TR_EXTRA_COUNT], r->global_step);
	return 1;
}

/* A sharded update (reducer.h, shm): the reducer hands this rank its
 * slice of a bucket, the parameters and state being the node's one copy. */
static void update_slice(void *ctx, size_t begin, size_t end, int finite)
{
	step_ctx *s = ctx;
	tr_run *r = s->run;
	decide(s, 1); /* the reducer calls once the head is in */
	if (!s->apply || !finite || begin == end)
		return;
	double t0 = tr_now();
	tr_optim_update(&r->opt, r->net.params, r->red.sum, begin, end);
	r->t_optimizer += tr_now() - t0;
}

/* Updates every bucket whose sum is in (with wait: every bucket, waiting
 * for them), once the head says whether and how: a bucket is updated when
 * the step is applied and its own sum is finite, whatever the order the
 * buckets come in, so the result is the same on every rank and run. (A
 * sharded reducer has updated this rank's slices itself.) */
static void update_buckets(step_ctx *s, int wait)
{
	tr_run *r = s->run;
	size_t np = r->net.nparams;
	if (!decide(s, wait))
		return;
	int whole = !tr_optim_bucketwise(&r->opt);
	size_t begin, end;
	int finite;
	while (tr_reducer_take(&r->red, wait, &begin, &end, &finite)) {
		if (!finite)
			s->partial = 1;
		if (!s->apply || !finite || whole || r->red.sharded)
			continue;
		double t0 = tr_now();
		/* on a GPU, the sum goes back (on one rank the device has it) */
		if (on_gpu(r) && r->w.size > 1)
			tr_math_from_host(r->math, r->net.grads + begin, r->red.sum + begin,
			                  end - begin);
		tr_optim_update(&r->opt, r->net.params, on_gpu(r) ? r->net.grads : r->red.sum,
		                begin, end);
		r->t_optimizer += tr_now() - t0;
	}
	/* an optimizer that needs whole layers: one pass once all are in */
	if (wait && whole && s->apply && !s->partial) {
		double t0 = tr_now();
		if (on_gpu(r) && r->w.size > 1)
			tr_math_from_host(r->math, r->net.grads, r->red.sum, np);
		tr_optim_update(&r->opt, r->net.params, on_gpu(r) ? r->net.grads : r->red.sum, 0,
		                np);
		r->t_optimizer += tr_now() - t0;
	}
}

/* Called by backward after each layer: grads [0, end) are final, and
 * params [0, end) are read no more by this step. */
static void grads_ready(void *ctx, size_t end)
{
	step_ctx *s = ctx;
	tr_run *r = s->run;
	if (on_gpu(r) && end > s->staged) {
		tr_math_to_host(r->math, r->staging + s->staged, r->net.grads + s->staged,
		                end - s->staged);
		s->staged = end;
	}
	tr_reducer_ready(&r->red, end);
	update_buckets(s, 0);
}

int tr_run_step(tr_run *r, char *err, size_t errlen)
{
	size_t np = r->net.nparams;
	float *extras = r->net.grads + np, *head = r->staging + np;
	double t0 = tr_now();
	rio_batch *b = NULL;
	tr_input in;
	int failed = 0, nonfinite = 0;
	int rc = next_batch(r, &b, &in, 0, &failed, err, errlen);
	double t1 = tr_now();
	tr_math_zero(r->math, extras, TR_MLP_EXTRA);
	tr_reducer_begin(&r->red);
	step_ctx s = {.run = r};
	r->red.update = update_slice;
	r->red.update_ctx = &s;
	int rows = 0;
	int go = rc == 1 && !failed;
	for (int t = 0; t < r->embed.n && !go; t++)
		r->embed.nuniq[t] = 0; /* no rows of this rank's in the tables' sum */
	if (go) {
		rows = in.rows;
		nonfinite = b && input_nonfinite(r, b);
		embed_input(r, &in);
		tr_mlp_forward(&r->net, &in);
		tr_mlp_loss(&r->net, &in, extras, 1);
		/* the loss and correct count (on a GPU, the wait for forward); a
		 * GPU that failed is this rank's failure, told in the head */
		if (tr_math_to_host(r->math, head, extras, TR_MLP_EXTRA) < 0) {
			snprintf(err, errlen, "the GPU failed during a training step");
			failed = 1;
			go = 0;
			rows = 0;
		}
		nonfinite |= !isfinite(head[TR_EXTRA_LOSS]);
	}
	if (!go)
		memset(head, 0, TR_MLP_EXTRA * sizeof *head);
	/* the head goes ahead of the gradients: by the time the first bucket is
	 * in, every rank knows the global batch and whether to apply the step */
	head[TR_EXTRA_COUNT] = (float)rows;
	head[TR_EXTRA_NONFINITE] = (float)nonfinite;
	head[TR_EXTRA_FAILED] = (float)failed;
	tr_reducer_head(&r->red);
	if (go) {
		tr_mlp_backward(&r->net, &in, grads_ready, &s);
		if (r->embed.n)
			tr_embed_run_backward(&r->embed, r->net.dinput, rows);
		/* --straggler: this rank's gradients come late */
		double f = tr_run_slowdown(r);
		if (f > 1) {
			tr_math_sync(r->math);
			tr_run_straggle(f, tr_now() - t1);
		}
		/* on the CPU the batch is read no more: back to the loader now,
		 * so that its worker fills the next one while this rank waits
		 * for the others' gradients rather than after (on a core per
		 * rank, that fill had cost real data 3% against --synthetic) */
		if (b && !on_gpu(r)) {
			rio_loader_release(r->train, b);
			b = NULL;
		}
	} else {
		/* this rank failed, or its epoch ended early (damaged records
		 * were skipped): it still takes part, adding nothing */
		memset(r->staging, 0, np * sizeof *r->staging);
		tr_reducer_ready(&r->red, np);
	}
	tr_reducer_flush(&r->red);
	update_buckets(&s, 1);
	if (r->embed.n) { /* the tables, densely: every rank, failed or not */
		const float *sum = r->red.head_out;
		double te = tr_now();
		tr_embed_run_allreduce(&r->embed, r->w.comm, s.apply && !s.partial,
		                       s.apply ? 1.0f / sum[TR_EXTRA_COUNT] : 0, r->global_step);
		r->red.seconds += tr_now() - te;
	}
	if (tr_math_sync(r->math) < 0 && !failed) {
		snprintf(err, errlen, "the GPU failed during a training step");
		failed = 1;
	}
	if (b)
		rio_loader_release(r->train, b);
	if (failed)
		return -1;

	const float *sum = r->red.head_out;
	if (sum[TR_EXTRA_FAILED] > 0)
		return failed ? -1 : 1;
	if (!s.apply || s.partial) {
		r->skipped_steps++;
		r->ep_skipped++;
	} else {
		r->ep_loss += sum[TR_EXTRA_LOSS];
		r->ep_correct += sum[TR_EXTRA_CORRECT];
		r->ep_count += sum[TR_EXTRA_COUNT];
	}
	r->global_step++;
	r->step_in_epoch++;
	r->t_step += tr_now() - t0;
	return 0;
}

int tr_run_eval(tr_run *r, double sums[3], char *err, size_t errlen)
{
	double records = 0;
	int failed = 0;
	/* a parameter server has no test data: it adds nothing, but serves the
	 * rows of --embed tables the workers evaluate with */
	if (r->ps_server && r->ps_server->ntables && tr_ps_serve(r->ps_server, 0) == -ENOMEM) {
		snprintf(err, errlen, "server %d: out of memory", r->w.rank);
		failed = 1;
	}
	if (r->test)
		tr_math_zero(r->math, r->eval_stats, 2);
	for (; r->test;) {
		rio_batch *b;
		int rc = rio_loader_next(r->test, &b);
		if (rc == 0)
			break;
		if (rc < 0) {
			loader_error(r->test, rc, err, errlen);
			failed = 1;
			break;
		}
		tr_input in;
		if (batch_input(r, r->test, b, &in, err, errlen) < 0) {
			rio_loader_release(r->test, b);
			failed = 1;
			break;
		}
		embed_input(r, &in);
		tr_mlp_forward(&r->net, &in);
		tr_mlp_loss(&r->net, &in, r->eval_stats, 0);
		records += in.rows;
		/* the batch's memory goes back to the loader: the GPU must be done */
		tr_math_sync(r->math);
		rio_loader_release(r->test, b);
	}
	if (r->ps_worker && r->embed.n) { /* the servers stop serving rows */
		tr_ps_send(r->ps_worker, TR_PS_PULL | TR_PS_LAST, NULL, 0, 0);
		tr_ps_wait(r->ps_worker);
	}
	float st[2] = {0, 0};
	if (!failed && r->test && tr_math_to_host(r->math, st, r->eval_stats, 2) < 0) {
		snprintf(err, errlen, "the GPU failed during evaluation");
		failed = 1;
	}
	sums[0] = st[0];
	sums[1] = st[1];
	sums[2] = records;
	tr_world_sum_to_root(&r->w, sums, 3);
	return failed ? -1 : 0;
}

/* --straggler, --straggler-random: how many times its compute time this
 * rank takes at this step (1: not slowed). Deterministic: the random draw
 * depends only on the seed, the rank and the step. */
double tr_run_slowdown(const tr_run *r)
{
	double f = 1;
	for (int i = 0; i < r->o.nstraggler; i++)
		if (r->o.straggler[i].rank == r->w.rank)
			f = r->o.straggler[i].factor;
	if (r->o.straggler_p > 0) {
		rio__rng g;
		rio__rng_seed(&g, r->o.straggler_seed, (uint64_t)r->w.rank, r->global_step,
		              0x736c6f77 /* "slow" */);
		double u = (double)(rio__rng_next(&g) >> 11) * (1.0 / 9007199254740992.0);
		if (u < r->o.straggler_p && r->o.straggler_f > f)
			f = r->o.straggler_f;
	}
	return f;
}

/* Sleeps (f - 1) x `compute` seconds. */
void tr_run_straggle(double f, double compute)
{
	if (f <= 1 || compute <= 0)
		return;
	double s = (f - 1) * compute;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

/* hybrid: the dense layers' gradients and the step's head summed over
 * the workers, and the dense update made here. Returns what the head
 * says: 1 when some worker failed, else 0, with *apply. */
static int hybrid_dense(tr_run *r, int rows, int nonfinite, int failed, int *apply)
{
	size_t np = r->net.nparams;
	float *head = r->staging + np;
	if (failed)
		memset(r->staging, 0, (np + TR_MLP_EXTRA) * sizeof *r->staging);
	head[TR_EXTRA_COUNT] = (float)rows;
	head[TR_EXTRA_NONFINITE] = (float)nonfinite;
	head[TR_EXTRA_FAILED] = (float)failed;
	MPI_Allreduce(MPI_IN_PLACE, r->staging, (int)(np + TR_MLP_EXTRA), MPI_FLOAT, MPI_SUM,
	              r->wcomm);
	if (head[TR_EXTRA_FAILED] > 0)
		return 1;
	*apply = head[TR_EXTRA_NONFINITE] == 0 && head[TR_EXTRA_COUNT] >= 1 &&
	         !tr_nonfinite(r->staging, np);
	if (*apply) {
		double t0 = tr_now();
		tr_optim_step(&r->opt, r->net.params, r->staging, 1.0f / head[TR_EXTRA_COUNT],
		              r->global_step);
		r->t_optimizer += tr_now() - t0;
	}
	return 0;
}

int tr_ps_step(tr_run *r, int last, char *err, size_t errlen)
{
	tr_ps_worker *pw = r->ps_worker;
	size_t np = r->net.nparams;
	int hybrid = r->o.strategy == TR_STRATEGY_HYBRID;
	float *extras = r->net.grads + np, *head = r->staging + np;
	double t0 = tr_now();
	rio_batch *b = NULL;
	tr_input in;
	int failed = 0, nonfinite = 0;
	next_batch(r, &b, &in, 1, &failed, err, errlen);
	double t1 = tr_now();
	double rows = 0, exchange = 0;
	if (!failed) {
		rows = in.rows;
		nonfinite = b && input_nonfinite(r, b);
		double tp = tr_now();
		embed_input(r, &in); /* the batch's rows pulled */
		exchange += tr_now() - tp;
		tr_math_zero(r->math, extras, TR_MLP_EXTRA);
		tr_mlp_forward(&r->net, &in);
		tr_mlp_loss(&r->net, &in, extras, 1);
		tr_mlp_backward(&r->net, &in, NULL, NULL);
		if (r->embed.n)
			tr_embed_run_backward(&r->embed, r->net.dinput, in.rows);
		/* the gradients and the step's loss to the host (the CPU's are
		 * there already) */
		if (tr_math_to_host(r->math, r->staging, r->net.grads, np + TR_MLP_EXTRA) < 0) {
			snprintf(err, errlen, "the GPU failed during a training step");
			failed = 1;
		}
		nonfinite |= !isfinite(head[TR_EXTRA_LOSS]);
	}
	if (b)
		rio_loader_release(r->train, b);
	double compute = tr_now() - t1;
	tr_run_straggle(tr_run_slowdown(r), compute);
	double t2 = tr_now();
	double loss = failed ? 0 : head[TR_EXTRA_LOSS], correct = failed ? 0 : head[TR_EXTRA_CORRECT];
	if (hybrid) {
		int apply = 0;
		if (hybrid_dense(r, (int)rows, nonfinite, failed, &apply) && !failed) {
			r->red.seconds += tr_now() - t2 + exchange;
			return 1; /* another worker failed: it tells the servers */
		}
		nonfinite = !apply; /* one verdict for the servers' rows too */
	}
	uint32_t flags = failed ? TR_PS_PULL | TR_PS_LAST | TR_PS_FAILED
	                        : TR_PS_PUSH | (last ? TR_PS_LAST : 0) |
	                                  (nonfinite ? TR_PS_NONFINITE : 0) |
	                                  (r->embed.n ? TR_PS_SPARSE : 0);
	tr_ps_send(pw, flags, r->staging, r->global_step, rows);
	int stop = tr_ps_wait(pw);
	if (!failed && !hybrid && tr_math_from_host(r->math, r->net.params, pw->params, np) < 0) {
		snprintf(err, errlen, "the GPU failed during a training step");
		failed = 1; /* told to the others at the segment's end */
	}
	r->red.seconds += tr_now() - t2 + exchange; /* the exchange, exposed */
	if (failed)
		return -1;
	if (!nonfinite) {
		r->ep_loss += loss;
		r->ep_correct += correct;
		r->ep_count += rows;
	} else {
		r->ep_skipped++;
		r->skipped_steps++;
	}
	r->global_step++;
	r->step_in_epoch++;
	r->t_step += tr_now() - t0;
	return stop ? 1 : 0;
}
