/*
 * pipe_trace.c — a pipeline stage's timeline into a file (pipe_trace.h).
 */
#include "config.h"
#include "pipe_trace.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct event {
	char kind[3];
	int m;
	double start, end;
} event;

struct tr_pipe_trace {
	FILE *f;
	long step;
	event *ev;
	size_t n, cap;
};

tr_pipe_trace *tr_pipe_trace_open(int rank, char *err, size_t errlen)
{
	const char *prefix = getenv("RIO_PIPE_TRACE");
	*err = '\0';
	if (!prefix || !*prefix)
		return NULL;
	char path[4096];
	snprintf(path, sizeof path, "%s.%d.tsv", prefix, rank);
	tr_pipe_trace *t = calloc(1, sizeof *t);
	if (t && !(t->f = fopen(path, "w"))) {
		snprintf(err, errlen, "RIO_PIPE_TRACE: cannot write %s: %s", path, strerror(errno));
		free(t);
		return NULL;
	}
	if (!t)
		snprintf(err, errlen, "RIO_PIPE_TRACE: out of memory");
	else
		fprintf(t->f, "# rank %d, pid %ld\nstep\tkind\tm\tstart\tend\n", rank, (long)getpid());
	return t;
}

void tr_pipe_trace_add(tr_pipe_trace *t, const char *kind, int m, double start, double end)
{
	if (!t)
		return;
	if (rio__grow(&t->ev, &t->cap, t->n + 1, sizeof *t->ev, 256))
		return; /* a diagnostic: the event is left out */
	event *e = &t->ev[t->n++];
	snprintf(e->kind, sizeof e->kind, "%s", kind);
	e->m = m;
	e->start = start;
	e->end = end;
}

void tr_pipe_trace_step(tr_pipe_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		fprintf(t->f, "%ld\t%s\t%d\t%.6f\t%.6f\n", t->step, t->ev[i].kind, t->ev[i].m,
		        t->ev[i].start, t->ev[i].end);
	t->n = 0;
	t->step++;
}

void tr_pipe_trace_close(tr_pipe_trace *t)
{
	if (!t)
		return;
	tr_pipe_trace_step(t);
	fclose(t->f);
	free(t->ev);
	free(t);
}
