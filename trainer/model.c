/*
 * model.c — a rank's model (model.h): its backend, shape and schedule,
 * its buffers asked of the parameter store and computed in.
 */
#include "config.h"
#include "model.h"
#include "cpus.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

int tr_model_open_math(tr_model *m, const tr_config *c, char *err, size_t errlen)
{
	const tr_options *o = &c->o;
	memset(m, 0, sizeof *m);
	m->r_params = m->r_grads = m->r_staging = m->r_state[0] = m->r_state[1] = -1;
	m->r_params16 = -1;
	m->r_tables = m->r_table_grads = m->r_table_state[0] = m->r_table_state[1] = -1;
	/* math: the local rank's GPU, or the node's cores shared among its ranks */
	int threads = o->threads;
	/* bf16 on the CPU: one thread unless --threads says more. oneDNN runs
	 * on libgomp, whose idle threads spin between GEMMs (OMP_WAIT_POLICY,
	 * read when the library loads, before main: too late to set here), so
	 * a second thread took a core from the rank's own elementwise passes
	 * and from the other ranks: 3x slower than fp32 under load, 1.27x
	 * faster on one thread */
	if (!threads && o->precision == TR_PRECISION_BF16 && o->device == TR_DEVICE_CPU)
		threads = 1;
	if (!threads) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		threads = (int)(cores / c->w.local_size);
		/* no more than the CPUs the rank is bound to (mpirun binds a
		 * rank to one core when there are few): two threads on one
		 * core only take turns */
		int own = tr_own_cpus();
		if (own > 0 && threads > own)
			threads = own;
		if (threads < 1)
			threads = 1;
	}
	/* a parameter server updates its slice on the CPU, with one thread */
	int server = c->roles.server;
	int rc = tr_math_open(&m->math, server ? TR_DEVICE_CPU : o->device, c->w.local_rank,
	                      server ? 1 : threads, err, errlen);
	/* a server only updates: it multiplies nothing */
	if (rc == 0 && o->precision == TR_PRECISION_BF16 && !server)
		rc = tr_math_bf16_check(m->math, err, errlen);
	return rc;
}

void tr_model_shape(tr_model *m, const tr_config *c, const tr_data *d)
{
	const tr_options *o = &c->o;
	m->nlayers = o->nhidden + 1;
	m->sizes[0] = tr_data_inputs(d, c);
	for (int i = 0; i < o->nembed; i++)
		m->sizes[0] += o->embed[i].dim; /* the pooled rows, after the inputs */
	for (int i = 0; i < o->nhidden; i++)
		m->sizes[i + 1] = o->hidden[i];
	m->sizes[m->nlayers] = o->classes;
	m->nparams = tr_mlp_param_count(m->sizes, m->nlayers);
	m->rows = c->batch > o->eval_batch ? c->batch : o->eval_batch;
}

void tr_model_schedule(tr_model *m, const tr_config *c, uint64_t steps_per_epoch)
{
	const tr_options *o = &c->o;
	tr_optim_config *s = &m->opt.cfg;
	*s = o->optim;
	s->scale = o->lr_scaling && !o->global_batch ? (float)c->roles.data_world : 1.0f;
	if (c->plan.keep_scale)
		s->scale = c->plan.scale; /* the global batch is kept: so is its rate */
	s->warmup_steps = (uint64_t)llround(o->warmup_epochs * (double)steps_per_epoch);
	s->total_steps = o->epochs * steps_per_epoch;
}

void tr_model_plan(tr_model *m, const tr_config *c, const tr_data *d, tr_store *s,
                   const tr_model_places *at)
{
	const tr_options *o = &c->o;
	size_t n = m->nparams;
	int states = tr_optim_states(o->optim.kind);
	m->r_params = tr_store_add(s, "the parameters", n, sizeof(float), (tr_place)at->params);
	m->r_grads = tr_store_add(s, "the gradients", n + TR_MLP_EXTRA, sizeof(float),
	                          (tr_place)at->grads);
	if (o->precision == TR_PRECISION_BF16 && at->params >= 0) {
		m->r_params16 = tr_store_add(s, "the parameters' bf16 copy", n, sizeof(tr_bf16),
		                             at->params16_shared ? TR_PLACE_HOST_SHARED
		                                                 : TR_PLACE_BACKEND);
		m->update16 = at->update16;
	}
	if (at->staging >= 0)
		m->r_staging = tr_store_add(s, "the gradients' host copy", n + TR_MLP_EXTRA,
		                            sizeof(float), (tr_place)at->staging);
	for (int i = 0; i < states && at->state >= 0; i++)
		m->r_state[i] = tr_store_add(s, "the optimizer's state", n, sizeof(float),
		                             (tr_place)at->state);
	if (o->nembed && at->tables >= 0)
		tr_model_plan_tables(m, c, d, s, (tr_place)at->tables, (tr_place)at->table_grads);
}

void tr_model_plan_tables(tr_model *m, const tr_config *c, const tr_data *d, tr_store *s,
                          tr_place tables, tr_place grads)
{
	const tr_options *o = &c->o;
	int states = tr_optim_states(o->optim.kind);
	tr_embed_table t[TR_MAX_EMBED];
	size_t floats = tr_embed_run_tables(t, o->embed, o->nembed, d->specs + o->nx);
	m->table_floats = floats;
	m->r_tables = tr_store_add(s, "the --embed tables", floats, sizeof(float), tables);
	m->r_table_grads = tr_store_add(s, "the --embed tables' gradient", floats, sizeof(float),
	                                grads);
	for (int i = 0; i < states; i++)
		m->r_table_state[i] = tr_store_add(s, "the --embed tables' optimizer state", floats,
		                                   sizeof(float), tables);
}

/* The optimizer over the whole model, in the store's state: each layer's
 * W and b its blocks (LARS). */
static int build_optimizer(tr_model *m, const tr_store *s)
{
	tr_optim_config cfg = m->opt.cfg;
	int rc = tr_optim_init(&m->opt, m->math, m->nparams, &cfg, tr_store_floats(s, m->r_state[0]),
	                       tr_store_floats(s, m->r_state[1]));
	tr_param_block blocks[2 * TR_MLP_MAX_LAYERS];
	for (int l = 0; rc == 0 && l < m->nlayers; l++) {
		blocks[2 * l] = (tr_param_block){m->net.w_off[l],
		                                 (size_t)m->sizes[l] * (size_t)m->sizes[l + 1], 1};
		blocks[2 * l + 1] = (tr_param_block){m->net.b_off[l], (size_t)m->sizes[l + 1], 0};
	}
	if (rc == 0)
		rc = tr_optim_set_blocks(&m->opt, blocks, 2 * m->nlayers);
	return rc;
}

int tr_model_build_tables(tr_model *m, const tr_config *c, const tr_data *d, const tr_store *s)
{
	const tr_options *o = &c->o;
	int whole = m->r_tables >= 0;
	int rc = tr_embed_run_init(&m->embed, o->embed, o->nembed, d->specs + o->nx, m->rows, whole);
	if (rc == 0 && whole)
		rc = tr_embed_run_lend(&m->embed, m->math, &m->opt.cfg, o->seed,
		                       tr_store_floats(s, m->r_tables),
		                       tr_store_floats(s, m->r_table_grads),
		                       tr_store_floats(s, m->r_table_state[0]),
		                       tr_store_floats(s, m->r_table_state[1]));
	if (rc == 0)
		rc = tr_mlp_want_dinput(&m->net, m->sizes[0] - m->embed.width, m->embed.width);
	return rc;
}

int tr_model_build(tr_model *m, const tr_config *c, const tr_data *d, const tr_store *s)
{
	if (m->r_params < 0)
		return 0; /* a parameter server: the shape alone */
	int rc = tr_mlp_init(&m->net, m->math, m->sizes, m->nlayers, m->rows,
	                     tr_store_floats(s, m->r_params), tr_store_floats(s, m->r_grads));
	if (rc == 0 && m->r_state[0] >= 0)
		rc = build_optimizer(m, s);
	if (rc == 0 && m->r_params16 >= 0) {
		tr_bf16 *p16 = tr_store_get(s, m->r_params16);
		int by_update = m->update16 && m->r_state[0] >= 0;
		rc = tr_mlp_use_bf16(&m->net, p16, by_update);
		if (by_update)
			tr_optim_write16(&m->opt, p16);
	}
	m->staging = m->r_staging >= 0 ? tr_store_floats(s, m->r_staging) : m->net.grads;
	m->eval_stats = tr_math_alloc(m->math, 2);
	if (rc == 0 && !m->eval_stats)
		rc = -ENOMEM;
	if (rc == 0 && c->o.nembed)
		rc = tr_model_build_tables(m, c, d, s);
	return rc;
}

void tr_model_close(tr_model *m)
{
	tr_embed_run_free(&m->embed);
	if (m->math)
		tr_math_free(m->math, m->eval_stats);
	tr_mlp_free(&m->net);
	tr_math_close(m->math);
	memset(m, 0, sizeof *m);
}
