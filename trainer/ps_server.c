/*
 * ps_server.c — a parameter server's loop (ps.h): receives the workers'
 * messages in arrival order, applies their gradients to its slice as the
 * consistency model says (one summed update per version at K = 0, each
 * gradient alone at K >= 1), and answers each worker once the model lets
 * it read. One thread, blocking receives: a server has nothing else to do.
 */
#include "config.h"
#include "ps.h"
#include "clock.h"
#include "grow.h"
#include "part.h"
#include "reducer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_ps_slice(size_t n, int servers, int s, size_t *lo, size_t *hi)
{
	uint64_t a, b;
	tr_part(n, servers, s, 16, &a, &b);
	*lo = (size_t)a;
	*hi = (size_t)b;
}

int tr_ps_server_init(tr_ps_server *s, MPI_Comm comm, int servers, int workers,
                      tr_math *math, size_t nparams, const tr_optim_config *cfg,
                      int64_t staleness, int staleness_lr, int backups, uint64_t eval_every)
{
	int rank;
	memset(s, 0, sizeof *s);
	MPI_Comm_rank(comm, &rank);
	s->comm = comm;
	s->servers = servers;
	s->workers = workers;
	s->math = math;
	s->staleness = staleness;
	s->staleness_lr = staleness_lr;
	s->backups = backups;
	s->eval_every = eval_every;
	tr_ps_slice(nparams, servers, rank, &s->lo, &s->hi);
	s->n = s->hi - s->lo;
	size_t n = s->n ? s->n : 1, W = (size_t)workers;
	tr_optim_config c = *cfg;
	if (staleness) /* a gradient applied alone is one worker's share */
		c.weight_decay /= (float)workers;
	for (int i = 0; i < tr_optim_states(c.kind); i++)
		s->opt_state[i] = tr_math_alloc(math, n);
	int rc = tr_optim_init(&s->opt, math, n, &c, s->opt_state[0], s->opt_state[1]);
	s->params = tr_math_alloc(math, n);
	s->grad = tr_math_alloc(math, n);
	s->clock = calloc(W, sizeof *s->clock);
	s->label = calloc(W, sizeof *s->label);
	s->read_gap = calloc(W, sizeof *s->read_gap);
	s->waiting = calloc(W, sizeof *s->waiting);
	s->done = calloc(W, sizeof *s->done);
	s->have = calloc(W, sizeof *s->have);
	s->have_bad = calloc(W, sizeof *s->have_bad);
	s->have_rows = calloc(W, sizeof *s->have_rows);
	if (!staleness)
		s->slots = tr_math_alloc(math, n * W);
	if (rc < 0 || !s->params || !s->grad || !s->clock || !s->label || !s->read_gap ||
	    !s->waiting || !s->done || !s->have || !s->have_bad || !s->have_rows ||
	    (!staleness && !s->slots)) {
		tr_ps_server_free(s);
		return -ENOMEM;
	}
	return 0;
}

int tr_ps_server_add_table(tr_ps_server *s, const tr_embed_table *t, int index, uint64_t seed,
                           const tr_optim_config *cfg)
{
	int rank, W = s->workers;
	MPI_Comm_rank(s->comm, &rank);
	tr_ps_table *tb = &s->tab[index];
	s->ntables = index + 1;
	tr_embed_rows_of(t->vocab, s->servers, rank, &tb->lo, &tb->hi);
	tb->dim = t->dim;
	size_t rows = (size_t)(tb->hi - tb->lo), n = rows * (size_t)t->dim;
	tr_optim_config c = *cfg;
	if (s->staleness)
		c.weight_decay /= (float)W;
	tb->params = malloc((n ? n : 1) * sizeof(float));
	tb->ids = calloc((size_t)W, sizeof *tb->ids);
	tb->grads = calloc((size_t)W, sizeof *tb->grads);
	tb->count = calloc((size_t)W, sizeof *tb->count);
	tb->cap = calloc((size_t)W, sizeof *tb->cap);
	if (!s->staleness) {
		tb->acc = malloc((n ? n : 1) * sizeof(float));
		tb->touched = calloc(rows ? rows : 1, sizeof *tb->touched);
		tb->list = malloc((rows ? rows : 1) * sizeof *tb->list);
	}
	for (int i = 0; i < tr_optim_states(c.kind); i++)
		tb->opt_state[i] = tr_math_alloc(s->math, n ? n : 1);
	if (!tb->params || !tb->ids || !tb->grads || !tb->count || !tb->cap ||
	    tr_optim_init(&tb->opt, s->math, n ? n : 1, &c, tb->opt_state[0], tb->opt_state[1]) < 0 ||
	    (!s->staleness && (!tb->acc || !tb->touched || !tb->list)))
		return -ENOMEM;
	tr_embed_init_rows(t, seed, (uint64_t)index, tb->lo, tb->hi, tb->params);
	return 0;
}

static void free_tables(tr_ps_server *s)
{
	for (int i = 0; i < s->ntables; i++) {
		tr_ps_table *tb = &s->tab[i];
		for (int w = 0; tb->ids && w < s->workers; w++) {
			free(tb->ids[w]);
			free(tb->grads[w]);
		}
		free(tb->ids);
		free(tb->grads);
		free(tb->count);
		free(tb->cap);
		free(tb->params);
		free(tb->acc);
		free(tb->touched);
		free(tb->list);
		tr_math_free(s->math, tb->opt_state[0]);
		tr_math_free(s->math, tb->opt_state[1]);
		free(s->rx_ids[i]);
		free(s->rx_rows[i]);
	}
}

/* Room for n ids and rows of dim floats in *ids and *rows. */
static int reserve(int64_t **ids, float **rows, size_t *cap, size_t n, int dim)
{
	if (n <= *cap)
		return 0;
	size_t c = n > 2 * *cap ? n : 2 * *cap;
	if (rio__resize(ids, c, sizeof **ids) || rio__resize(rows, c * (size_t)dim, sizeof **rows))
		return -ENOMEM;
	*cap = c;
	return 0;
}

/* Receives, from src, a table's ids and then its rows (pushed gradients)
 * or sends back the rows of those ids (a pull). Out of memory for them, it
 * ends the job (the worker's messages are in flight). */
static void table_message(tr_ps_server *s, int t, int src, int pull)
{
	tr_ps_table *tb = &s->tab[t];
	MPI_Status st;
	int n;
	MPI_Probe(src, TR_PS_TAG_IDS + t, s->comm, &st);
	MPI_Get_count(&st, MPI_INT64_T, &n);
	if (reserve(&s->rx_ids[t], &s->rx_rows[t], &s->rx_cap[t], (size_t)n, tb->dim) < 0) {
		/* the worker's rows are on their way: no answer can be agreed on */
		int rank;
		MPI_Comm_rank(s->comm, &rank);
		fprintf(stderr, "recordio-train: server %d: out of memory for %d rows of --embed "
		        "table %d\n", rank, n, t);
		MPI_Abort(s->comm, 1);
	}
	MPI_Recv(s->rx_ids[t], n, MPI_INT64_T, src, TR_PS_TAG_IDS + t, s->comm, MPI_STATUS_IGNORE);
	s->rx_n[t] = (size_t)n;
	size_t dim = (size_t)tb->dim;
	if (pull) {
		for (int i = 0; i < n; i++)
			memcpy(s->rx_rows[t] + (size_t)i * dim,
			       tb->params + (size_t)(s->rx_ids[t][i] - tb->lo) * dim, dim * sizeof(float));
		MPI_Send(s->rx_rows[t], (int)(n * dim), MPI_FLOAT, src, TR_PS_TAG_ROWS + t, s->comm);
	} else {
		MPI_Recv(s->rx_rows[t], (int)(n * dim), MPI_FLOAT, src, TR_PS_TAG_ROWS + t, s->comm,
		         MPI_STATUS_IGNORE);
	}
}

/* Updates rows ids[0, n) of a table, global ids made local here (ids is
 * the server's own copy), with their compact gradients g (n x dim), in one
 * optimizer call; tr_optim_begin having been called. */
static void update_rows(tr_ps_table *tb, int64_t *ids, size_t n, const float *g)
{
	for (size_t i = 0; i < n; i++)
		ids[i] -= tb->lo;
	tr_optim_update_rows(&tb->opt, tb->params, 0, (size_t)tb->dim, ids, n, g);
}

void tr_ps_server_free(tr_ps_server *s)
{
	if (!s->math)
		return;
	tr_math_free(s->math, s->opt_state[0]);
	tr_math_free(s->math, s->opt_state[1]);
	tr_math_free(s->math, s->params);
	tr_math_free(s->math, s->grad);
	tr_math_free(s->math, s->slots);
	free(s->clock);
	free(s->label);
	free(s->read_gap);
	free(s->waiting);
	free(s->done);
	free(s->have);
	free(s->have_bad);
	free(s->have_rows);
	tr_copies_free(&s->copies);
	free_tables(s);
	free(s->crx);
	free(s->ptx);
	memset(s, 0, sizeof *s);
}

/* The slowest clock among the workers still in the segment (UINT64_MAX
 * when none is). */
static uint64_t slowest(const tr_ps_server *s)
{
	uint64_t m = UINT64_MAX;
	for (int w = 0; w < s->workers; w++)
		if (!s->done[w] && s->clock[w] < m)
			m = s->clock[w];
	return m;
}

static int snapshot(tr_ps_server *s, double seconds)
{
	tr_copy *p = tr_copies_add(&s->copies, s->n);
	if (!p)
		return -ENOMEM;
	tr_math_to_host(s->math, p->params, s->params, s->n);
	p->gradients = s->total_gradients;
	p->updates = s->total_updates;
	p->samples = s->total_samples;
	p->seconds = seconds;
	return 0;
}

/* Counts k gradients of `rows` records applied with staleness `gap`, and
 * keeps a snapshot when they crossed a multiple of eval_every x W. */
static int applied(tr_ps_server *s, int k, double rows, uint64_t gap, double t0)
{
	uint64_t every = s->eval_every * (uint64_t)s->workers;
	uint64_t before = s->total_gradients;
	s->st.gradients += (uint64_t)k;
	s->st.samples += rows;
	s->st.staleness_sum += (double)gap * k;
	if (gap > s->st.staleness_max)
		s->st.staleness_max = gap;
	s->total_gradients += (uint64_t)k;
	s->total_samples += rows;
	if (every && s->total_gradients / every > before / every)
		return snapshot(s, s->seconds_before + (rio__now() - t0));
	return 0;
}

/* K = 0: a table's rows pushed for the version, summed in worker order
 * into acc, compact, in the order first pushed (acc row i is local row
 * tb->list[i]). */
static void sum_rows(tr_ps_server *s, tr_ps_table *tb)
{
	size_t dim = (size_t)tb->dim;
	for (int w = 0; w < s->workers; w++) {
		if (!s->have[w])
			continue;
		for (size_t i = 0; i < tb->count[w]; i++) {
			int64_t local = tb->ids[w][i] - tb->lo;
			const float *g = tb->grads[w] + i * dim;
			if (!tb->touched[local]) {
				tb->touched[local] = (uint32_t)tb->nlist + 1;
				tb->list[tb->nlist] = local;
				memcpy(tb->acc + tb->nlist * dim, g, dim * sizeof(float));
				tb->nlist++;
			} else {
				float *row = tb->acc + (size_t)(tb->touched[local] - 1) * dim;
				for (size_t j = 0; j < dim; j++)
					row[j] += g[j];
			}
		}
	}
}

/* K = 0: the version's update, once enough gradients are in: every
 * worker's (W - B with backup workers), or all that can still come. */
static int complete_version(tr_ps_server *s, double t0)
{
	int can = 0;
	for (int w = 0; w < s->workers; w++)
		can += !s->done[w] && !s->have[w];
	if (s->nhave == 0 || (s->nhave < s->workers - s->backups && can > 0))
		return 0;
	const float *in[s->workers > 0 ? s->workers : 1];
	float rows[s->workers > 0 ? s->workers : 1];
	const float *rows_in[s->workers > 0 ? s->workers : 1];
	int k = 0, bad = 0;
	for (int w = 0; w < s->workers; w++)
		if (s->have[w]) {
			in[k] = s->slots + (size_t)w * s->n;
			rows[k] = (float)s->have_rows[w];
			rows_in[k] = &rows[k];
			bad |= s->have_bad[w];
			k++;
		}
	/* the sums in worker order, as the allreduce strategy's ranks add */
	float total;
	(void)tr_sum_ranked(&total, rows_in, k, 1);
	bad |= tr_sum_ranked(s->grad, in, k, s->n);
	for (int t = 0; t < s->ntables; t++)
		sum_rows(s, &s->tab[t]);
	int rc = 0;
	if (bad || total < 1) {
		s->st.skipped++;
	} else {
		tr_optim_begin(&s->opt, 1.0f / total, s->version);
		tr_optim_update(&s->opt, s->params, s->grad, 0, s->n);
		for (int t = 0; t < s->ntables; t++) {
			tr_ps_table *tb = &s->tab[t];
			tr_optim_begin(&tb->opt, 1.0f / total, s->version);
			tr_optim_update_rows(&tb->opt, tb->params, 0, (size_t)tb->dim, tb->list, tb->nlist,
			                     tb->acc);
		}
		s->st.updates++;
		s->total_updates++;
		rc = applied(s, k, total, 0, t0);
	}
	for (int t = 0; t < s->ntables; t++) { /* ready for the next version */
		tr_ps_table *tb = &s->tab[t];
		for (size_t i = 0; i < tb->nlist; i++)
			tb->touched[tb->list[i]] = 0;
		tb->nlist = 0;
		for (int w = 0; w < s->workers; w++)
			tb->count[w] = 0;
	}
	s->version++;
	memset(s->have, 0, (size_t)s->workers * sizeof *s->have);
	s->nhave = 0;
	return rc;
}

/* K = 0: worker w's pushed rows of table t, kept until the version is made. */
static int keep_rows(tr_ps_server *s, int t, int w)
{
	tr_ps_table *tb = &s->tab[t];
	size_t n = s->rx_n[t], dim = (size_t)tb->dim;
	if (reserve(&tb->ids[w], &tb->grads[w], &tb->cap[w], n, tb->dim) < 0)
		return -ENOMEM;
	memcpy(tb->ids[w], s->rx_ids[t], n * sizeof(int64_t));
	memcpy(tb->grads[w], s->rx_rows[t], n * dim * sizeof(float));
	tb->count[w] = n;
	if (tr_nonfinite(tb->grads[w], n * dim))
		s->have_bad[w] = 1;
	return 0;
}

/* K >= 1: a gradient alone, as one worker's share of the global batch. */
static int apply_alone(tr_ps_server *s, int w, const tr_ps_msg *m, double t0)
{
	uint64_t gap = s->read_gap[w];
	int bad = (m->flags & TR_PS_NONFINITE) || m->rows < 1 || tr_nonfinite(s->grad, s->n);
	for (int t = 0; t < s->ntables && (m->flags & TR_PS_SPARSE); t++)
		bad |= tr_nonfinite(s->rx_rows[t], s->rx_n[t] * (size_t)s->tab[t].dim);
	if (bad) {
		s->st.skipped++;
		return 0;
	}
	float scale = 1.0f / (float)(m->rows * s->workers);
	if (s->staleness_lr && gap > 1)
		scale /= (float)gap;
	tr_optim_begin(&s->opt, scale, m->step);
	tr_optim_update(&s->opt, s->params, s->grad, 0, s->n);
	for (int t = 0; t < s->ntables && (m->flags & TR_PS_SPARSE); t++) {
		tr_optim_begin(&s->tab[t].opt, scale, m->step);
		update_rows(&s->tab[t], s->rx_ids[t], s->rx_n[t], s->rx_rows[t]);
	}
	s->st.updates++;
	s->total_updates++;
	return applied(s, 1, m->rows, gap, t0);
}

/* May worker w read now? */
static int may_read(const tr_ps_server *s, int w)
{
	if (s->stop || s->staleness == TR_STALENESS_INF)
		return 1;
	if (s->staleness == 0)
		return s->version >= s->label[w];
	uint64_t m = slowest(s);
	return m == UINT64_MAX || m + (uint64_t)s->staleness >= s->clock[w];
}

static void reply(tr_ps_server *s, int w)
{
	tr_ps_msg m = {.flags = s->stop ? TR_PS_STOP : 0, .clock = s->version};
	uint64_t m_slow = slowest(s);
	s->read_gap[w] = m_slow == UINT64_MAX || s->staleness == 0 ? 0 : s->clock[w] - m_slow;
	int dst = s->servers + w;
	MPI_Send(&m, sizeof m, MPI_BYTE, dst, TR_PS_TAG_REPLY, s->comm);
	if (s->ptx) {
		tr_comp_narrow(TR_COMP_BF16, s->ptx, s->params, s->n, 1.0f);
		MPI_Send(s->ptx, (int)s->n, MPI_UINT16_T, dst, TR_PS_TAG_PARAMS, s->comm);
	} else {
		MPI_Send(s->params, (int)s->n, MPI_FLOAT, dst, TR_PS_TAG_PARAMS, s->comm);
	}
	s->waiting[w] = 0;
}

int tr_ps_server_compress(tr_ps_server *s, tr_grad_comp comp, int workers)
{
	s->comp = comp;
	s->cscale = comp == TR_COMP_FP16 ? (float)workers : 1.0f;
	if (comp && !(s->crx = malloc((s->n ? s->n : 1) * sizeof *s->crx)))
		return -ENOMEM;
	return 0;
}

int tr_ps_server_pull16(tr_ps_server *s)
{
	s->ptx = malloc((s->n ? s->n : 1) * sizeof *s->ptx);
	return s->ptx ? 0 : -ENOMEM;
}

/* A push's gradient from src into `into`: fp32, or 16 bits widened. */
static void receive_push(tr_ps_server *s, int src, float *into)
{
	if (!s->comp) {
		MPI_Recv(into, (int)s->n, MPI_FLOAT, src, TR_PS_TAG_GRAD, s->comm, MPI_STATUS_IGNORE);
		return;
	}
	MPI_Recv(s->crx, (int)s->n, MPI_UINT16_T, src, TR_PS_TAG_GRAD, s->comm, MPI_STATUS_IGNORE);
	tr_comp_widen(s->comp, into, s->crx, s->n, s->cscale);
}

int tr_ps_serve(tr_ps_server *s, int training)
{
	size_t W = (size_t)s->workers;
	memset(&s->st, 0, sizeof s->st);
	memset(s->clock, 0, W * sizeof *s->clock);
	memset(s->label, 0, W * sizeof *s->label);
	memset(s->read_gap, 0, W * sizeof *s->read_gap);
	memset(s->waiting, 0, W * sizeof *s->waiting);
	memset(s->done, 0, W * sizeof *s->done);
	memset(s->have, 0, W * sizeof *s->have);
	s->ndone = s->nhave = 0;
	int failed = -1, rc = 0;
	double t0 = rio__now();
	while (s->ndone < s->workers) {
		tr_ps_msg m;
		MPI_Status st;
		MPI_Recv(&m, sizeof m, MPI_BYTE, MPI_ANY_SOURCE, TR_PS_TAG_MSG, s->comm, &st);
		int src = st.MPI_SOURCE, w = src - s->servers;
		if (m.flags & TR_PS_ROWS) { /* answered at once */
			for (int t = 0; t < s->ntables; t++)
				table_message(s, t, src, 1);
			continue;
		}
		for (int t = 0; t < s->ntables && (m.flags & TR_PS_SPARSE); t++)
			table_message(s, t, src, 0);
		if (m.flags & TR_PS_PUSH) {
			/* K = 0: into the worker's slot (dropped later if late) */
			float *into = s->staleness ? s->grad : s->slots + (size_t)w * s->n;
			receive_push(s, src, into);
		}
		if ((m.flags & TR_PS_FAILED) && (failed < 0 || src < failed))
			failed = src;
		if (m.flags & TR_PS_FAILED)
			s->stop = 1;
		if ((m.flags & TR_PS_PUSH) && !s->stop) {
			s->clock[w]++;
			if (s->staleness) {
				if (rc == 0)
					rc = apply_alone(s, w, &m, t0);
			} else if (m.clock < s->version) {
				s->st.dropped++; /* late: its version was made without it */
				s->label[w] = m.clock + 1;
			} else {
				s->have[w] = 1;
				s->have_bad[w] = (m.flags & TR_PS_NONFINITE) != 0;
				s->have_rows[w] = m.rows;
				s->nhave++;
				for (int t = 0; t < s->ntables && (m.flags & TR_PS_SPARSE) && rc == 0; t++)
					rc = keep_rows(s, t, w);
				s->label[w] = m.clock + 1;
			}
		}
		if (m.flags & TR_PS_LAST) {
			s->done[w] = 1;
			s->ndone++;
		} else {
			s->waiting[w] = 1;
		}
		if (!s->staleness && !s->stop && rc == 0)
			rc = complete_version(s, t0);
		for (int v = 0; v < s->workers; v++)
			if (s->waiting[v] && may_read(s, v))
				reply(s, v);
	}
	if (!s->staleness && !s->stop && rc == 0)
		rc = complete_version(s, t0); /* what the last ones left */
	if (training)
		s->seconds_before += rio__now() - t0;
	for (int w = 0; w < s->workers; w++)
		reply(s, w); /* the end of the segment */
	s->stop = 0;
	return rc < 0 ? rc : failed;
}
