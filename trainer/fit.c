/*
 * fit.c — what a rank of a run holds of the model and the --embed tables,
 * and the check that a host's ranks fit its memory (fit.h).
 */
#include "config.h"
#include "fit.h"
#include "common.h"
#include "memory.h"
#include "ps.h"

#include <stdio.h>
#include <string.h>

/* What a rank holds of the model and the --embed tables, in bytes: in
 * all, and the largest part, named. */
typedef struct rank_need {
	double total, part;
	char what[320];
} rank_need;

static void need_part(rank_need *n, double bytes, const char *what)
{
	n->total += bytes;
	if (bytes > n->part) {
		n->part = bytes;
		snprintf(n->what, sizeof n->what, "%s", what);
	}
}

/* This rank's need, before anything is allocated: an allreduce rank
 * holds the model and every table whole, each with its gradient and
 * optimizer state; a parameter server its slice of them, with their
 * optimizer state (and, at --staleness 0, a gradient per worker for the
 * dense slice and a sum for the rows); a worker the model with its
 * gradient (hybrid: and its optimizer state) and the rows of a batch. */
static void rank_need_of(const tr_run *r, const int *sizes, int nlayers, int rows, rank_need *n)
{
	const tr_options *o = &r->o;
	double states = o->optim.kind == TR_OPT_ADAM ? 2 : 1, f = sizeof(float);
	double P = (double)tr_mlp_param_count(sizes, nlayers);
	int ps = o->strategy != TR_STRATEGY_ALLREDUCE, server = ps && r->data_rank < 0;
	int S = o->servers, W = r->data_world, sync = o->staleness == 0;
	char what[320];
	memset(n, 0, sizeof *n);
	if (server && o->strategy == TR_STRATEGY_PS) {
		size_t lo, hi;
		tr_ps_slice((size_t)P, S, r->w.rank, &lo, &hi);
		double slice = (double)(hi - lo);
		snprintf(what, sizeof what, "the model's slice of %.0f parameters (its values, "
		         "gradient%s and optimizer state on a server)", slice, sync ? "s" : "");
		need_part(n, slice * f * (2 + states + (sync ? W : 0)), what);
	} else if (!server) {
		double copies = 2 + (!ps || o->strategy == TR_STRATEGY_HYBRID ? states : 0);
		snprintf(what, sizeof what, "the model of %.0f parameters (its values, gradient%s)",
		         P, copies > 2 ? " and optimizer state" : "");
		need_part(n, P * f * copies, what);
	}
	for (int i = 0; i < o->nembed; i++) {
		const tr_embed_option *e = &o->embed[i];
		double dim = e->dim, bytes;
		if (server) {
			int64_t lo, hi;
			tr_embed_rows_of(e->vocab, S, r->w.rank, &lo, &hi);
			double rws = (double)(hi - lo);
			bytes = rws * dim * f * (1 + states + sync) + (sync ? rws * 12 : 0);
		} else if (ps) {
			double ids = (double)rows * (double)r->specs[o->nx + i].length;
			bytes = ids * (16 + 2 * dim * f);
		} else {
			bytes = (double)e->vocab * dim * f * (2 + states);
		}
		snprintf(what, sizeof what, "--embed %s:%lld:%d (%s)", e->feature, (long long)e->vocab,
		         e->dim, server ? "a server's rows, with their optimizer state"
		                 : ps   ? "a batch's rows on a worker"
		                        : "the whole table, its gradient and optimizer state");
		need_part(n, bytes, what);
	}
}

void tr_run_check_memory(tr_run *r, const int *sizes, int nlayers, int rows)
{
	char msg[2048];
	rank_need n;
	rank_need_of(r, sizes, nlayers, rows, &n);
	/* in KiB, so that the sum cannot wrap */
	uint64_t mine = n.total / 1024 < (double)(UINT64_MAX >> 12) ? (uint64_t)(n.total / 1024)
	                                                            : UINT64_MAX >> 12;
	uint64_t host = tr_world_node_sum_u64(&r->w, mine);
	tr_memory_limit m;
	tr_memory_limit_get("", &m);
	int over = m.bytes != UINT64_MAX && (double)host * 1024 > (double)m.bytes;
	if (over) {
		char a[32], b[32], c[32];
		snprintf(msg, sizeof msg, "%s needs %s on rank %d; this host's %d rank%s would hold "
		         "%s in all, more than the %s they may use (%s)",
		         n.what, tool_format_bytes(a, sizeof a, (uint64_t)n.part), r->w.rank,
		         r->w.local_size, r->w.local_size > 1 ? "s" : "",
		         tool_format_bytes(b, sizeof b, host > UINT64_MAX >> 10 ? UINT64_MAX : host << 10),
		         tool_format_bytes(c, sizeof c, m.bytes), m.source);
	}
	tr_world_agree(&r->w, over, msg, EXIT_DATA);
}
