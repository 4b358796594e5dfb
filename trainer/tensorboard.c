/*
 * tensorboard.c — the event file of --tensorboard DIR (see tensorboard.h):
 * its name, its header, scalar events, each flushed when written.
 */
#include "config.h"
#include "tensorboard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double wall_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Encodes into tb->buf, growing it; the Event's size, or 0. */
static size_t encode(tr_tboard *tb, int64_t step, const char *version, const rio_scalar *v,
                     size_t n)
{
	double t = wall_time();
	size_t need = rio_event_encode(tb->buf, tb->cap, t, step, version, v, n);
	if (need > tb->cap) {
		uint8_t *b = realloc(tb->buf, need);
		if (!b)
			return 0;
		tb->buf = b;
		tb->cap = need;
		need = rio_event_encode(tb->buf, tb->cap, t, step, version, v, n);
	}
	return need;
}

static int failure(tr_tboard *tb, int rc, const char *what)
{
	const rio_error *e = tb->w ? rio_writer_error(tb->w) : NULL;
	if (e && e->message[0]) /* it names the file and the offset */
		snprintf(tb->err, sizeof tb->err, "--tensorboard: %.400s", e->message);
	else
		snprintf(tb->err, sizeof tb->err, "--tensorboard %.300s: %s: %s", tb->path, what,
		         rio_strerror(rc));
	tb->failed = 1;
	return rc < 0 ? rc : -EIO;
}

static int write_event(tr_tboard *tb, int64_t step, const char *version, const rio_scalar *v,
                       size_t n)
{
	if (tb->failed)
		return -EIO;
	size_t size = encode(tb, step, version, v, n);
	if (!size)
		return failure(tb, -ENOMEM, "cannot encode an event");
	int rc = rio_writer_write(tb->w, tb->buf, size, NULL);
	if (rc == 0)
		rc = rio_writer_flush(tb->w);
	return rc ? failure(tb, rc, "write failed") : 0;
}

int tr_tb_open(tr_tboard *tb, const char *dir, char *err, size_t errlen)
{
	memset(tb, 0, sizeof *tb);
	struct stat st;
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "--tensorboard %s: cannot create the directory: %s", dir,
		         strerror(e));
		return -e;
	}
	int e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e) {
		snprintf(err, errlen, "--tensorboard %s: %s", dir, strerror(e));
		return -e;
	}
	char host[256] = "localhost";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	size_t n = strlen(dir) + strlen(host) + 80;
	if (!(tb->path = malloc(n))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rio_writer_opts o;
	rio_writer_opts_init(&o);
	o.live = 1;
	o.overwrite = 0;
	long now = (long)time(NULL);
	snprintf(tb->path, n, "%s/events.out.tfevents.%ld.%s", dir, now, host);
	int rc = rio_writer_open(&tb->w, tb->path, &o);
	if (rc == -EEXIST) { /* another run in the same second */
		snprintf(tb->path, n, "%s/events.out.tfevents.%ld.%s.%ld", dir, now, host,
		         (long)getpid());
		rc = rio_writer_open(&tb->w, tb->path, &o);
	}
	if (rc == 0)
		rc = write_event(tb, 0, "brain.Event:2", NULL, 0);
	if (rc < 0) {
		if (tb->failed)
			snprintf(err, errlen, "%s", tb->err);
		else
			snprintf(err, errlen, "--tensorboard %s: %s", tb->path, strerror(-rc));
		rio_writer_abort(tb->w);
		tb->w = NULL;
		free(tb->path);
		free(tb->buf);
		memset(tb, 0, sizeof *tb);
		return rc;
	}
	return 0;
}

int tr_tb_scalars(tr_tboard *tb, int64_t step, const rio_scalar *v, size_t n)
{
	return tb->w ? write_event(tb, step, NULL, v, n) : 0;
}

int tr_tb_epoch(tr_tboard *tb, int64_t step, const tr_epoch_report *e)
{
	rio_scalar v[7];
	size_t n = 0;
	v[n++] = (rio_scalar){"train/loss", (float)e->train_loss};
	v[n++] = (rio_scalar){"train/accuracy", (float)e->train_accuracy};
	if (e->has_test) {
		v[n++] = (rio_scalar){"test/loss", (float)e->test_loss};
		v[n++] = (rio_scalar){"test/accuracy", (float)e->test_accuracy};
	}
	v[n++] = (rio_scalar){"train/learning_rate", (float)e->lr};
	v[n++] = (rio_scalar){"perf/samples_per_s", (float)e->samples_per_s};
	v[n++] = (rio_scalar){"perf/data_wait_fraction",
	                      (float)(e->seconds > 0 ? e->data_wait_seconds / e->seconds : 0)};
	return tr_tb_scalars(tb, step, v, n);
}

int tr_tb_close(tr_tboard *tb)
{
	int rc = 0;
	if (tb->w) {
		int c = rio_writer_close(tb->w);
		tb->w = NULL;
		if (c && !tb->failed)
			failure(tb, c, "close failed");
		rc = tb->failed ? -1 : 0;
	}
	free(tb->path);
	free(tb->buf);
	tb->path = NULL;
	tb->buf = NULL;
	return rc;
}
