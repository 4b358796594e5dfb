/*
 * engine.h — ranged GETs run in parallel on a thread of their own: a
 * client's (rio__remote's) engine takes requests from any thread, keeps up
 * to `inflight` of them in flight on one curl multi handle (reused
 * connections), retries a broken one after its backoff from the byte where
 * it broke, and wakes the thread that waits for it. Threads that ask never
 * block each other beyond a short lock; nothing runs while nothing is
 * asked for.
 */
#ifndef RIO_REMOTE_ENGINE_H
#define RIO_REMOTE_ENGINE_H

#include "http.h"

typedef struct rio__engine rio__engine;

/* The engine thread's name (pthread_setname_np): "rio-remote", one per
 * client, in /proc/PID/task/TID/comm. */
#define RIO__ENGINE_THREAD_NAME "rio-remote"

/* One ranged GET into the caller's memory. The caller sets `http` up with
 * rio__http_init() and its range, If-Match, size and dst; the engine owns
 * the rest from rio__engine_submit() until the request is done (waited
 * for) or taken back (cancelled). */
typedef struct rio__get {
	rio__http http;
	int rc;          /* once done: 0, or the error (message in err) */
	rio_error err;
	/* the engine's */
	unsigned attempt;
	double not_before;
	int state;
	int cancel;
	CURL *h;
	struct rio__get *next;
} rio__get;

int rio__engine_open(rio__engine **out, rio__remote *r, rio_error *err);
/* Stops the thread; requests still in flight are dropped (their waiters
 * must be gone: close only what nothing uses). NULL is a no-op. */
void rio__engine_close(rio__engine *e);
/* Queues n requests, to run in the order given as slots free up. */
void rio__engine_submit(rio__engine *e, rio__get *const *gets, size_t n);
/* Waits until g is done: g->rc. */
int rio__engine_wait(rio__engine *e, rio__get *g);
/* Since the engine started: the seconds a GET or more ran (*busy), and
 * the sum over GETs of the seconds each ran (*gets: *gets / *busy is the
 * mean number in flight while any was). */
void rio__engine_time(rio__engine *e, double *busy, double *gets);
/* 1 when g is done (never blocks). */
int rio__engine_done(rio__engine *e, rio__get *g);
/* Takes g back whether it ran or not: when this returns, the engine no
 * longer touches g or its memory. A request never submitted, or done, is
 * left as it is. */
void rio__engine_cancel(rio__engine *e, rio__get *g);

#endif /* RIO_REMOTE_ENGINE_H */
