/*
 * train.c — the run loop (train.h): epochs of segments, reports and
 * checkpoints, through the strategy's operations alone.
 */
#include "config.h"
#include "exit_status.h"
#include "train.h"
#include "clock.h"
#include "progress.h"
#include "report.h"
#include "save.h"
#include "tensorboard.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG = 2048 };

/* What the loop carries from epoch to epoch. */
typedef struct run_loop {
	const tr_parts *p;
	tr_strategy_state *s;
	FILE *metrics;        /* rank 0, --metrics                      */
	tr_tboard tb;         /* rank 0, --tensorboard                  */
	tr_progress prog;     /* rank 0, a terminal                     */
	char msg[MSG];
} run_loop;

/* After a step (where the strategy tells): the progress line, and
 * TensorBoard's step loss every --tensorboard-every steps. */
static void stepped(void *ctx, double loss, double count)
{
	run_loop *x = ctx;
	const tr_config *c = x->p->cfg;
	const tr_cursor *k = x->p->cursor;
	tr_progress_update(&x->prog, k->epoch + 1, c->o.epochs, k->step_in_epoch, k->epoch_steps,
	                   (uint64_t)c->batch * (uint64_t)c->roles.data_world);
	if (x->tb.w && k->global_step % c->o.tensorboard_every == 0 && count > 0) {
		rio_scalar v = {"train/step_loss", (float)(loss / count)};
		tr_tb_scalars(&x->tb, (int64_t)k->global_step, &v, 1);
	}
}

static void eval_copies(run_loop *x);

/* Collective: a checkpoint between two segments. The --eval-every copies
 * taken up to it are evaluated and written first, off the clock: a run
 * that fails after it and is resumed from it takes only the later copies,
 * so the earlier ones, kept in memory until the epoch's end, were lost. */
static void checkpoint_in_epoch(run_loop *x)
{
	tr_cursor *k = x->p->cursor;
	double t0 = rio__now();
	eval_copies(x);
	k->t_epoch0 += rio__now() - t0;
	tr_save(x->p, x->s);
}

/* Collective: the epoch's segments, from where it is to its end, or to
 * --max-steps (returns 1: stopped with steps of the epoch left), with a
 * checkpoint between two segments. */
static int run_epoch(run_loop *x)
{
	const tr_config *c = x->p->cfg;
	for (;;) {
		tr_segment seg = {.stepped = stepped, .ctx = x};
		int rc = c->ops->segment(x->s, &seg, x->msg, sizeof x->msg);
		tr_world_agree(&c->w, rc != 0, x->msg, EXIT_DATA);
		if (!seg.mid_epoch) /* at the epoch's end: it is whole, --max-steps
		                     * reached with it or not */
			return 0;
		if (seg.stopped)
			return 1;
		checkpoint_in_epoch(x);
	}
}

/* Rank 0: the epoch's report from the strategy's figures f. `partial`:
 * the run stopped in the epoch (--max-steps), whose line is the epoch so
 * far. gemm0 and gemm1: the GEMM counters at the epoch's first step and
 * after its last (the evaluation's forward passes are not the step's). Its
 * rates count what this process did, in the seconds it took: a resumed
 * epoch's samples before the resume are in its sums, not in its rates. */
static tr_epoch_report epoch_report(const run_loop *x, const tr_epoch_figures *f, int partial,
                                    double seconds, const double test[3],
                                    const tr_math_stats *gemm0, const tr_math_stats *gemm1)
{
	const tr_parts *p = x->p;
	const tr_cursor *k = p->cursor;
	double count = f->count;
	tr_epoch_report e = {
		.epoch = k->epoch + 1,
		.partial = partial,
		.steps = f->steps,
		.samples = (uint64_t)count,
		.skipped_steps = f->skipped,
		.grad_overflows = f->grad_overflows,
		.train_loss = count > 0 ? f->loss / count : NAN,
		.train_accuracy = count > 0 ? f->correct / count : NAN,
		.has_test = p->cfg->o.test != NULL,
		.test_loss = test[2] > 0 ? test[0] / test[2] : NAN,
		.test_accuracy = test[2] > 0 ? test[1] / test[2] : NAN,
		.test_records = (uint64_t)test[2],
		.seconds = seconds,
		.samples_per_s = seconds > 0 ? (count - f->count_before) / seconds : 0,
		.data_wait_seconds = f->data_wait,
		.gemm_seconds = gemm1->gemm_seconds - gemm0->gemm_seconds,
		.allreduce_seconds = f->exchange,
		.optimizer_seconds = f->optimizer,
		.lr = tr_optim_lr(&p->model->opt.cfg, f->last_step ? f->last_step - 1 : 0),
		.world = p->cfg->w.size,
		.wall_seconds = k->train_seconds,
		.bytes_per_step = f->bytes_per_step,
		.servers = f->servers,
		.server_bytes_per_step = f->server_bytes_per_step,
		.updates = f->updates,
		.gradients = f->gradients,
		.dropped_gradients = f->dropped,
		.staleness_max = f->staleness_max,
		.staleness_mean = f->staleness_mean,
		.workers = f->workers,
		.worker_steps = f->worker_steps,
	};
	double flops = gemm1->gemm_flops - gemm0->gemm_flops;
	e.gemm_gflops = e.gemm_seconds > 0 ? flops / e.gemm_seconds * 1e-9 : 0;
	return e;
}

/* Collective: the epoch's figures; rank 0 prints its line and writes its
 * metrics and TensorBoard scalars: -1 (message in x->msg) when they cannot
 * be written. */
static int report_epoch(run_loop *x, int partial, double seconds, const double test[3],
                        const tr_math_stats *gemm0, const tr_math_stats *gemm1)
{
	const tr_config *c = x->p->cfg;
	tr_epoch_figures f;
	c->ops->figures(x->s, &f);
	if (c->w.rank != 0)
		return 0;
	tr_epoch_report e = epoch_report(x, &f, partial, seconds, test, gemm0, gemm1);
	if (!c->o.quiet)
		tr_report_line(stdout, &e);
	int unwritten = x->metrics && tr_report_json(x->metrics, &e) < 0, werr = errno;
	free(f.worker_steps);
	if (unwritten) {
		snprintf(x->msg, sizeof x->msg, "--metrics %s: write failed: %s", c->o.metrics,
		         strerror(werr));
		return -1;
	}
	tr_tb_epoch(&x->tb, (int64_t)f.last_step, &e);
	if (x->tb.failed) { /* this write or a step's since the last epoch */
		snprintf(x->msg, sizeof x->msg, "%s", x->tb.err);
		return -1;
	}
	return 0;
}

/* An --eval-every copy, placed by the strategy: evaluated (collective),
 * and rank 0 writes its line of metrics. */
static int report_copy(void *ctx, const tr_copy *copy, int failed, char *err, size_t errlen)
{
	run_loop *x = ctx;
	const tr_config *c = x->p->cfg;
	double test[3] = {0, 0, 0};
	if (c->ops->evaluate(x->s, test, err, errlen) < 0)
		return -1;
	if (failed || c->w.rank != 0 || !x->metrics)
		return 0;
	tr_snapshot_report s = {
		.epoch = x->p->cursor->epoch + 1,
		.updates = copy->updates,
		.gradients = copy->gradients,
		.samples = copy->samples,
		.wall_seconds = copy->seconds,
		.test_loss = test[2] > 0 ? test[0] / test[2] : NAN,
		.test_accuracy = test[2] > 0 ? test[1] / test[2] : NAN,
	};
	if (tr_report_snapshot_json(x->metrics, &s) < 0) {
		snprintf(err, errlen, "--metrics %s: write failed: %s", c->o.metrics, strerror(errno));
		return -1;
	}
	return 0;
}

/* Collective: the --eval-every copies taken and not yet evaluated,
 * evaluated and written to the metrics (the strategy puts its own
 * parameters back after them). */
static void eval_copies(run_loop *x)
{
	const tr_config *c = x->p->cfg;
	if (!c->o.eval_every)
		return;
	int rc = c->ops->eval_copies(x->s, report_copy, x, x->msg, sizeof x->msg);
	tr_world_agree(&c->w, rc < 0, x->msg, EXIT_DATA);
}

/* Collective, at an epoch's end or where the run stopped in it
 * (`partial`): the test set evaluated, the epoch reported, and its
 * --eval-every copies evaluated, off the clock. */
static void report(run_loop *x, int partial, double seconds, const tr_math_stats *gemm0,
                   const tr_math_stats *gemm1)
{
	const tr_config *c = x->p->cfg;
	double test[3] = {0, 0, 0};
	int rc;
	if (c->o.test) {
		rc = c->ops->evaluate(x->s, test, x->msg, sizeof x->msg);
		tr_world_agree(&c->w, rc < 0, x->msg, EXIT_DATA);
	}
	rc = report_epoch(x, partial, seconds, test, gemm0, gemm1);
	tr_world_agree(&c->w, rc < 0, x->msg, EXIT_DATA);
	eval_copies(x);
}

/* Rank 0's outputs: --metrics (appended on resume, so that one file tells
 * the whole run), --tensorboard, the progress line. */
static void open_outputs(run_loop *x)
{
	const tr_config *c = x->p->cfg;
	const tr_options *o = &c->o;
	int root = c->w.rank == 0;
	if (root && o->metrics) {
		x->metrics = fopen(o->metrics, o->resume ? "a" : "w");
		if (!x->metrics)
			snprintf(x->msg, sizeof x->msg, "--metrics %s: %s", o->metrics, strerror(errno));
	}
	tr_world_agree(&c->w, root && o->metrics && !x->metrics, x->msg, EXIT_DATA);
	int rc = root && o->tensorboard ? tr_tb_open(&x->tb, o->tensorboard, x->msg, sizeof x->msg)
	                                : 0;
	tr_world_agree(&c->w, rc < 0, x->msg, EXIT_DATA);
	tr_progress_init(&x->prog, root && !o->quiet);
}

/* One epoch, from where the cursor is: 1 when the run stops in it (or
 * where a resumed run had stopped: nothing new to say, 2). */
static int epoch(run_loop *x)
{
	const tr_parts *p = x->p;
	const tr_config *c = p->cfg;
	tr_cursor *k = p->cursor;
	tr_math_stats gemm0, gemm1;
	tr_math_stats_get(p->model->math, &gemm0);
	c->ops->epoch_begin(x->s);
	/* this process's part of the epoch begins (all of it, but after a
	 * resume) */
	k->t_epoch0 = rio__now();
	k->ep_count0 = k->ep_count;
	k->step0 = k->step_in_epoch;
	uint64_t step0 = k->global_step;
	tr_progress_begin(&x->prog, k->step_in_epoch);
	int stopped = run_epoch(x);
	tr_progress_clear(&x->prog);
	double seconds = rio__now() - k->t_epoch0;
	/* the training steps' GEMMs, not the evaluation's that follow */
	tr_math_stats_get(p->model->math, &gemm1);
	k->t_epoch0 = 0;
	/* stopped where a resumed run had stopped: nothing new to say */
	if (stopped && tr_world_max_u64(&c->w, k->global_step - step0) == 0)
		return 2;
	k->train_seconds += seconds;
	/* the ranks agreed on fewer steps than some have batches */
	if (!stopped)
		tr_data_set_epoch(p->data, c, k->epoch + 1);
	report(x, stopped, seconds, &gemm0, &gemm1);
	return stopped;
}

void tr_train(const tr_parts *p, tr_strategy_state *s)
{
	const tr_config *c = p->cfg;
	const tr_options *o = &c->o;
	tr_cursor *k = p->cursor;
	run_loop x = {.p = p, .s = s};
	open_outputs(&x);
	int stopped = 0;
	while (k->epoch < o->epochs && !stopped) {
		stopped = epoch(&x);
		if (stopped)
			break;
		tr_cursor_next_epoch(k, c->ops->next_epoch_steps(s));
		if (o->checkpoint)
			tr_save(p, s);
	}
	if (stopped) {
		if (o->checkpoint)
			tr_save(p, s);
		if (c->w.rank == 0 && !o->quiet)
			printf("stopped after %llu steps (--max-steps)%s\n",
			       (unsigned long long)k->global_step, o->checkpoint ? "; --resume continues" : "");
	}
	if (x.metrics)
		fclose(x.metrics);
	int rc = tr_tb_close(&x.tb);
	tr_world_agree(&c->w, rc < 0, x.tb.err, EXIT_DATA);
}
