/*
 * main.c — recordio-train: wires one rank's parts together and runs them.
 * The configuration (options, world, the resume plan), the data, the
 * model, the parameter store and the cursor each have one owner, here;
 * the strategy (--strategy) trains with them; the run loop (train.c)
 * drives the epochs. The command line is parsed and checked before MPI
 * starts (tr_config_parse): a refused one costs no MPI start-up. Every
 * later failure is agreed on where all ranks pass
 * (tr_world_agree): one line from one rank, every rank exits; only a
 * failure inside a collective ends the job with MPI_Abort (world.c): no
 * rank is left waiting in a collective.
 */
#include "config.h"
#include "exit_status.h"
#include "checkpoint.h"
#include "cpus.h"
#include "cursor.h"
#include "data.h"
#include "fit.h"
#include "model.h"
#include "run_config.h"
#include "start.h"
#include "store.h"
#include "strategy_ops.h"
#include "train.h"

#include <cblas.h>
#include <stdio.h>

enum { MSG = 2048 };

/* The parts' order of birth: the columns, then (the checkpoint directory
 * writable) the backend, the loaders, the model's shape, what the hosts
 * can hold. */
static void open_parts(const tr_parts *p)
{
	const tr_config *c = p->cfg;
	char msg[MSG] = "";
	tr_data_columns(p->data, c);
	/* where the checkpoints go must be writable now, not after an epoch */
	int rc = 0;
	if (c->o.checkpoint && c->w.rank == 0)
		rc = tr_ckpt_probe(c->o.checkpoint, msg, sizeof msg);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	/* ... and the metrics go elsewhere (the checkpoint's rename replaced
	 * them; appended on resume, they went into the checkpoint) */
	rc = c->o.checkpoint && c->o.metrics && c->w.rank == 0 &&
	     tr_ckpt_owns(c->o.checkpoint, c->o.metrics);
	if (rc)
		snprintf(msg, sizeof msg, "--metrics %s: a file of --checkpoint %s, which writes "
		         "it: give the metrics another name", c->o.metrics, c->o.checkpoint);
	tr_world_agree(&c->w, rc, msg, EXIT_USAGE);
	rc = tr_model_open_math(p->model, c, msg, sizeof msg);
	tr_world_agree(&c->w, rc < 0, msg, EXIT_DATA);
	tr_store_init(p->store, p->model->math);
	tr_data_open(p->data, c);
	tr_model_shape(p->model, c, p->data);
	tr_need need = {0};
	c->ops->memory_need(p, &need);
	p->model->planned_bytes = need.total;
	tr_fit_check(p, &need);
}

/* Rank 0's first line: the world, the model, the strategy's words, the
 * device. */
static void banner(const tr_parts *p, tr_strategy_state *s)
{
	const tr_config *c = p->cfg;
	const tr_model *m = p->model;
	if (c->w.rank != 0 || c->o.quiet)
		return;
	char line[512] = "", tail[256] = "";
	c->ops->describe(s, line, sizeof line, tail, sizeof tail);
	printf("recordio-train: %d rank%s, %zu parameters (%d", c->w.size, c->w.size > 1 ? "s" : "",
	       m->nparams, m->sizes[0]);
	for (int l = 1; l <= m->nlayers; l++)
		printf("-%d", m->sizes[l]);
	printf("), %s, %s", line, c->o.device == TR_DEVICE_CUDA ? "cuda" : "cpu");
	if (c->o.device == TR_DEVICE_CPU)
		printf(" (OpenBLAS %s kernels, %d thread%s)", openblas_get_corename(),
		       openblas_get_num_threads(), openblas_get_num_threads() > 1 ? "s" : "");
	if (c->o.precision == TR_PRECISION_BF16)
		printf(", bf16 GEMMs (%s)", tr_math_bf16_kernels(m->math));
	printf("%s\n", tail);
	if (p->data->cache_bytes)
		printf("recordio-train: the training shards held in memory, decoded once "
		       "(%.1f MiB on rank 0, --cache)\n",
		       (double)p->data->cache_bytes / (1 << 20));
	fflush(stdout);
}

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer's defaults in sanitizer builds (LSAN_OPTIONS adds to them):
 * no scan of threads' TLS. With Open MPI's libraries and libcurl's (GSSAPI,
 * GnuTLS, OpenSSL: librecordio reads S3) in one process, GCC 12's leak
 * checker crashes in that scan at exit ("Tracer caught signal 11"), which
 * aborts every run; heap blocks are still checked from stacks, globals and
 * registers. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "use_tls=0";
}
#endif

int main(int argc, char **argv)
{
	tr_config cfg = {0};
	tr_data data = {0};
	tr_model model = {0};
	tr_store store = {0};
	tr_cursor cursor = {0};
	tr_ckpt ck = {0}; /* --resume: rank 0's, until placed */
	tr_parts parts = {&cfg, &data, &model, &store, &cursor};

	tr_choose_blas_kernels(argv);
	/* the command line first: a refused one ends every rank before MPI
	 * starts (run_config.h) */
	tr_config_parse(&cfg, argc, argv);
	if (tr_world_init(&cfg.w, &argc, &argv) < 0) {
		fprintf(stderr, "recordio-train: MPI_Init failed\n");
		tr_options_free(&cfg.o);
		return EXIT_DATA;
	}
	tr_config_init(&cfg);
	if (cfg.o.resume) {
		tr_resume_plan plan;
		tr_start_read(&cfg, &ck, &plan);
		tr_config_apply_plan(&cfg, &plan);
	}
	open_parts(&parts);

	if (cfg.o.layout_only) { /* --layout: where each rank is, and no run */
		tr_layout_stages(&cfg.layout, &cfg.o, model.sizes, model.nlayers);
		tr_layout_print(&cfg.layout, &cfg.w, model.sizes, model.nlayers, cfg.o.nembed, stdout);
	} else {
		tr_strategy_state *s = NULL;
		cfg.ops->open(&s, &parts);
		tr_start(&parts, s, &ck);
		banner(&parts, s);
		tr_train(&parts, s);
		/* the strategy, then what the parts lent it, the backend last */
		cfg.ops->close(s);
	}
	if (cfg.w.rank == 0)
		tr_ckpt_free(&ck); /* --layout: the checkpoint --resume read, unplaced */
	tr_store_close(&store);
	tr_data_close(&data);
	tr_model_close(&model);
	tr_config_free(&cfg);
	tr_world_finish(&cfg.w);
	return 0;
}
