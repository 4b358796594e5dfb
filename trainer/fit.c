/*
 * fit.c — the check that a host's ranks fit its memory (fit.h).
 */
#include "config.h"
#include "fit.h"
#include "fit_plan.h"
#include "exit_status.h"
#include "memory.h"
#include "size.h"

#include <stdio.h>
#include <string.h>

void tr_need_add(tr_need *n, double bytes, const char *what)
{
	n->total += bytes;
	if (bytes > n->part) {
		n->part = bytes;
		snprintf(n->what, sizeof n->what, "%s", what);
	}
}

void tr_need_tables(tr_need *n, const tr_options *o)
{
	double states = tr_optim_states(o->optim.kind), f = sizeof(float);
	char what[320];
	for (int i = 0; i < o->nembed; i++) {
		const tr_embed_option *e = &o->embed[i];
		snprintf(what, sizeof what, "--embed %s:%lld:%d (the whole table, its gradient and "
		         "optimizer state)", e->feature, (long long)e->vocab, e->dim);
		tr_need_add(n, (double)e->vocab * e->dim * f * (2 + states), what);
	}
}

/* --memory-limit: this rank's need against it. */
static int over_own(const tr_parts *p, const tr_need *n, char *msg, size_t len)
{
	const tr_config *c = p->cfg;
	double allowed = (double)c->o.memory_limit;
	if (n->total <= allowed)
		return 0;
	char a[32], b[32], d[32], hint[512];
	tr_plan_hint(p, allowed, hint, sizeof hint);
	snprintf(msg, len, "--memory-limit %s: rank %d would hold %s (the most: %s, %s), more "
	         "than the %s allowed%s%s",
	         rio__format_bytes(a, sizeof a, (uint64_t)allowed), c->w.rank,
	         rio__format_bytes(b, sizeof b, (uint64_t)n->total), n->what,
	         rio__format_bytes(d, sizeof d, (uint64_t)n->part),
	         rio__format_bytes(a, sizeof a, (uint64_t)allowed), *hint ? "; " : "", hint);
	return 1;
}

void tr_fit_check(const tr_parts *p, const tr_need *n)
{
	const tr_config *c = p->cfg;
	char msg[4096] = "";
	if (c->o.memory_limit) {
		tr_world_agree(&c->w, over_own(p, n, msg, sizeof msg), msg, EXIT_DATA);
		return;
	}
	/* in KiB, so that the sum cannot wrap */
	uint64_t mine = n->total / 1024 < (double)(UINT64_MAX >> 12) ? (uint64_t)(n->total / 1024)
	                                                             : UINT64_MAX >> 12;
	uint64_t host = tr_world_node_sum_u64(&c->w, mine);
	tr_memory_limit m;
	tr_memory_limit_get("", &m);
	int over = m.bytes != UINT64_MAX && (double)host * 1024 > (double)m.bytes;
	if (over) {
		char a[32], b[32], d[32], hint[512];
		tr_plan_hint(p, (double)m.bytes / c->w.local_size, hint, sizeof hint);
		snprintf(msg, sizeof msg, "%s needs %s on rank %d; this host's %d rank%s would hold "
		         "%s in all, more than the %s they may use (%s)%s%s",
		         n->what, rio__format_bytes(a, sizeof a, (uint64_t)n->part), c->w.rank,
		         c->w.local_size, c->w.local_size > 1 ? "s" : "",
		         rio__format_bytes(b, sizeof b, host > UINT64_MAX >> 10 ? UINT64_MAX : host << 10),
		         rio__format_bytes(d, sizeof d, m.bytes), m.source, *hint ? "; " : "", hint);
	}
	tr_world_agree(&c->w, over, msg, EXIT_DATA);
}
