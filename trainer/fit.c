/*
 * fit.c — the check that a host's ranks fit its memory (fit.h).
 */
#include "config.h"
#include "fit.h"
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

void tr_fit_check(const tr_config *c, const tr_need *n)
{
	char msg[2048] = "";
	/* in KiB, so that the sum cannot wrap */
	uint64_t mine = n->total / 1024 < (double)(UINT64_MAX >> 12) ? (uint64_t)(n->total / 1024)
	                                                             : UINT64_MAX >> 12;
	uint64_t host = tr_world_node_sum_u64(&c->w, mine);
	tr_memory_limit m;
	tr_memory_limit_get("", &m);
	int over = m.bytes != UINT64_MAX && (double)host * 1024 > (double)m.bytes;
	if (over) {
		char a[32], b[32], d[32];
		snprintf(msg, sizeof msg, "%s needs %s on rank %d; this host's %d rank%s would hold "
		         "%s in all, more than the %s they may use (%s)",
		         n->what, rio__format_bytes(a, sizeof a, (uint64_t)n->part), c->w.rank,
		         c->w.local_size, c->w.local_size > 1 ? "s" : "",
		         rio__format_bytes(b, sizeof b, host > UINT64_MAX >> 10 ? UINT64_MAX : host << 10),
		         rio__format_bytes(d, sizeof d, m.bytes), m.source);
	}
	tr_world_agree(&c->w, over, msg, EXIT_DATA);
}
