/*
 * layout.c — the world as D x P x T ranks (layout.h): coordinates,
 * communicators, each stage's layers, and the placement as rank 0 prints
 * it.
 */
#include "config.h"
#include "layout.h"

#include <stdlib.h>
#include <string.h>

int tr_layout_shape(tr_layout *l, const tr_options *o, int rank, int size, char *err,
                    size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->data = l->pipe = l->tensor = l->replica = MPI_COMM_NULL;
	l->P = o->pipeline;
	l->T = o->tensor;
	if (size % (l->P * l->T)) {
		snprintf(err, errlen, "--pipeline %d x --tensor %d = %d ranks a model copy: does not "
		         "divide the world of %d ranks", l->P, l->T, l->P * l->T, size);
		return -1;
	}
	l->D = size / (l->P * l->T);
	l->t = rank % l->T;
	l->p = rank / l->T % l->P;
	l->d = rank / (l->T * l->P);
	return 0;
}

/* Collective over `group` (every rank calls it with its own group): how
 * many hosts the group spans, the most over the world. */
static int hosts_spanned(MPI_Comm group, MPI_Comm world)
{
	MPI_Comm node;
	int me, rank, hosts = 0, most = 0;
	MPI_Comm_rank(group, &rank);
	MPI_Comm_split_type(group, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &me);
	int leader = me == 0;
	MPI_Allreduce(&leader, &hosts, 1, MPI_INT, MPI_SUM, group);
	MPI_Allreduce(&hosts, &most, 1, MPI_INT, MPI_MAX, world);
	MPI_Comm_free(&node);
	return most;
}

void tr_layout_open(tr_layout *l, const tr_world *w)
{
	MPI_Comm_split(w->comm, l->p * l->T + l->t, l->d, &l->data);
	MPI_Comm_split(w->comm, l->d * l->T + l->t, l->p, &l->pipe);
	MPI_Comm_split(w->comm, l->d * l->P + l->p, l->t, &l->tensor);
	MPI_Comm_split(w->comm, l->d, l->p * l->T + l->t, &l->replica);
	l->tensor_hosts = hosts_spanned(l->tensor, w->comm);
	l->pipe_hosts = hosts_spanned(l->pipe, w->comm);
	l->hosts = hosts_spanned(w->comm, w->comm);
}

void tr_layout_close(tr_layout *l)
{
	MPI_Comm *c[4] = {&l->data, &l->pipe, &l->tensor, &l->replica};
	for (int i = 0; i < 4; i++)
		if (*c[i] != MPI_COMM_NULL)
			MPI_Comm_free(c[i]);
}

/* The split of layers [0, n) into k contiguous stages whose costliest
 * costs least (cost[i]: layer i's), as first[0..k]; ties go to the
 * earlier cut. Small: n <= TR_MLP_MAX_LAYERS. */
static void balance(const double *cost, int n, int k, int *first)
{
	enum { N = TR_MLP_MAX_LAYERS + 1 };
	double best[N][N]; /* best[j][i]: layers [0, i) in j stages          */
	int cut[N][N];
	double pre[N] = {0};
	for (int i = 0; i < n; i++)
		pre[i + 1] = pre[i] + cost[i];
	for (int i = 0; i <= n; i++)
		best[1][i] = pre[i];
	for (int j = 2; j <= k; j++)
		for (int i = j; i <= n; i++) {
			best[j][i] = -1;
			for (int c = j - 1; c < i; c++) {
				double last = pre[i] - pre[c];
				double v = best[j - 1][c] > last ? best[j - 1][c] : last;
				if (best[j][i] < 0 || v < best[j][i]) {
					best[j][i] = v;
					cut[j][i] = c;
				}
			}
		}
	first[k] = n;
	for (int j = k, i = n; j >= 2; j--) {
		i = cut[j][i];
		first[j - 1] = i;
	}
	first[0] = 0;
}

void tr_layout_stages(tr_layout *l, const tr_options *o, const int *sizes, int nlayers)
{
	if (o->nstages) {
		memcpy(l->first, o->stage_first, (size_t)(o->nstages + 1) * sizeof *l->first);
		return;
	}
	double cost[TR_MLP_MAX_LAYERS];
	for (int i = 0; i < nlayers; i++)
		cost[i] = (double)sizes[i] * sizes[i + 1];
	balance(cost, nlayers, l->P, l->first);
}

int tr_layout_split(const tr_layout *l, int p, int layer, int nlayers)
{
	if (l->T == 1)
		return TR_SPLIT_NONE;
	/* pairs from the stage's first layer: a layer with a hidden output and
	 * a partner in the stage is the first of a pair */
	for (int i = l->first[p]; i < l->first[p + 1];) {
		int paired = i + 1 < l->first[p + 1] && i + 1 < nlayers;
		if (i == layer)
			return paired ? TR_SPLIT_COLUMNS : TR_SPLIT_NONE;
		if (paired && i + 1 == layer)
			return TR_SPLIT_ROWS;
		i += paired ? 2 : 1;
	}
	return TR_SPLIT_NONE;
}

void tr_layout_name(const tr_layout *l, char *buf, size_t len)
{
	snprintf(buf, len, "D%dxP%dxT%d", l->D, l->P, l->T);
}

/* Rank r's part of the model: "layers 0-1 (784-256-256)", and slices. */
static void holds(const tr_layout *l, int r, const int *sizes, int nlayers, char *buf,
                  size_t len)
{
	int p = r / l->T % l->P, t = r % l->T, a = l->first[p], b = l->first[p + 1];
	size_t n = (size_t)snprintf(buf, len, "layer%s %d", b - a > 1 ? "s" : "", a);
	if (b - a > 1 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "-%d", b - 1);
	for (int i = a; i < b && n < len; i++) {
		int k = tr_layout_split(l, p, i, nlayers);
		int whole = k == TR_SPLIT_COLUMNS ? sizes[i + 1] : sizes[i];
		int per = whole / l->T;
		if (k == TR_SPLIT_NONE)
			n += (size_t)snprintf(buf + n, len - n, "%s%d: %dx%d", i == a ? " (" : ", ", i,
			                      sizes[i + 1], sizes[i]);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d: %s %d-%d of %d", i == a ? " (" : ", ",
			                      i, k == TR_SPLIT_COLUMNS ? "outputs" : "inputs", t * per,
			                      (t + 1) * per - 1, whole);
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

void tr_layout_print(const tr_layout *l, const tr_world *w, const int *sizes, int nlayers,
                     int tables, FILE *f)
{
	char host[MPI_MAX_PROCESSOR_NAME] = "";
	int hl = 0;
	MPI_Get_processor_name(host, &hl);
	char *all = w->rank == 0 ? calloc((size_t)w->size, sizeof host) : NULL;
	int ok = w->rank != 0 || all;
	MPI_Bcast(&ok, 1, MPI_INT, 0, w->comm);
	if (!ok) { /* rank 0 without memory: the placement without host names */
		MPI_Barrier(w->comm);
	} else {
		MPI_Gather(host, (int)sizeof host, MPI_CHAR, all, (int)sizeof host, MPI_CHAR, 0,
		           w->comm);
	}
	if (w->rank != 0)
		return;
	char name[64];
	tr_layout_name(l, name, sizeof name);
	fprintf(f, "layout %s: %d rank%s on %d host%s; tensor groups innermost, pipeline stages "
	        "next, data parallelism outermost\n", name, w->size, w->size > 1 ? "s" : "",
	        l->hosts, l->hosts > 1 ? "s" : "");
	if (l->T > 1 && l->tensor_hosts > 1)
		fprintf(f, "layout: a tensor group spans %d hosts (fewer than %d slots a host): its "
		        "allreduces cross the network\n", l->tensor_hosts, l->T);
	if (l->P > 1 && l->pipe_hosts > 1)
		fprintf(f, "layout: a pipeline spans %d hosts: activations cross the network\n",
		        l->pipe_hosts);
	for (int r = 0; r < w->size; r++) {
		char what[512];
		holds(l, r, sizes, nlayers, what, sizeof what);
		int stage = r / l->T % l->P;
		fprintf(f, "rank %d  host %s  data %d  stage %d  tensor %d  %s%s\n", r,
		        all ? all + (size_t)r * sizeof host : "?", r / (l->T * l->P), stage, r % l->T,
		        what, tables && stage == 0 ? ", the --embed tables" : "");
	}
	fflush(f);
	free(all);
}
