/*
 * engine.c — the thread that runs a client's ranged GETs (engine.h).
 *
 * Requests wait in one queue in the order they came, each with the time it
 * may start (a retry's backoff). The thread starts the due ones while
 * fewer than `inflight` run, lets curl move the bytes (curl_multi_poll,
 * woken early by a new request or a cancel), and settles each finished
 * transfer: done, failed for good, or queued again for its next attempt
 * from the byte where it broke. Only this thread touches the multi handle
 * and the transfers' curl handles; the lock guards the queue and the
 * requests' states.
 */
#include "config.h"
#include "engine.h"

#include "client.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define UNK RIO__UNKNOWN

enum { IDLE = 0, QUEUED, RUNNING, DONE };

struct rio__engine {
	rio__remote *r;
	CURLM *multi;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* a request is done                      */
	rio__get *head, *tail;    /* queued, in order                       */
	rio__get **running;       /* inflight slots (NULL: free)            */
	unsigned nrunning;
	int stop;
	CURL **idle;              /* handles between transfers              */
	unsigned nidle;
	double since;             /* when nrunning last changed             */
	double busy_s, gets_s;    /* time with a GET running, and GETs x time */
};

/* Counts the time since nrunning last changed (under mu, before it
 * changes). */
static void account(rio__engine *e)
{
	double now = rio__now();
	if (e->nrunning) {
		e->busy_s += now - e->since;
		e->gets_s += (now - e->since) * e->nrunning;
	}
	e->since = now;
}

static void finish(rio__engine *e, rio__get *g, int rc)
{
	g->rc = rc;
	g->state = DONE;
	pthread_cond_broadcast(&e->cv);
}

static void unqueue(rio__engine *e, rio__get *g)
{
	rio__get **p = &e->head, *prev = NULL;
	while (*p && *p != g) {
		prev = *p;
		p = &(*p)->next;
	}
	if (!*p)
		return;
	*p = g->next;
	if (e->tail == g)
		e->tail = prev;
	g->next = NULL;
}

static void enqueue(rio__engine *e, rio__get *g)
{
	g->next = NULL;
	g->state = QUEUED;
	if (e->tail)
		e->tail->next = g;
	else
		e->head = g;
	e->tail = g;
}

/* ---- on the engine's thread ------------------------------------------------ */

static CURL *handle_take(rio__engine *e)
{
	return e->nidle ? e->idle[--e->nidle] : rio__client_easy_new(e->r);
}

static void handle_give(rio__engine *e, CURL *h)
{
	if (e->nidle < e->r->opts.inflight)
		e->idle[e->nidle++] = h;
	else
		curl_easy_cleanup(h);
}

/* Starts g on a free slot (the lock not held: only this thread reads
 * g->http while it runs). 0, or an error that ends g. */
static int start(rio__engine *e, rio__get *g, unsigned slot)
{
	CURL *h = handle_take(e);
	if (!h)
		return rio__error_set(&g->err, -ENOMEM, g->http.name, UNK, UNK, "no curl handle");
	int rc = rio__http_prepare(&g->http, h, e->r, &g->err);
	if (rc == 0) {
		curl_easy_setopt(h, CURLOPT_PRIVATE, (char *)g);
		if (curl_multi_add_handle(e->multi, h) != CURLM_OK)
			rc = rio__error_set(&g->err, -ENOMEM, g->http.name, UNK, UNK,
			                    "cannot add a transfer");
	}
	if (rc < 0) {
		handle_give(e, h);
		return rc;
	}
	g->h = h;
	e->running[slot] = g;
	g->attempt++;
	return 0;
}

/* Moves the due requests of the queue onto free slots; returns the
 * seconds until the next one is due (1e9: none waits). */
static double start_due(rio__engine *e)
{
	double now = rio__now(), next = 1e9;
	pthread_mutex_lock(&e->mu);
	for (rio__get *g = e->head, *after; g && e->nrunning < e->r->opts.inflight; g = after) {
		after = g->next;
		if (g->not_before > now) {
			if (g->not_before - now < next)
				next = g->not_before - now;
			continue;
		}
		unsigned slot = 0;
		while (e->running[slot])
			slot++;
		unqueue(e, g);
		g->state = RUNNING;
		account(e);
		e->nrunning++;
		pthread_mutex_unlock(&e->mu);
		int rc = start(e, g, slot);
		pthread_mutex_lock(&e->mu);
		if (rc < 0) {
			account(e);
			e->nrunning--;
			finish(e, g, rc);
		}
	}
	pthread_mutex_unlock(&e->mu);
	return next;
}

static void take_off(rio__engine *e, rio__get *g)
{
	curl_multi_remove_handle(e->multi, g->h);
	handle_give(e, g->h);
	g->h = NULL;
	for (unsigned i = 0; i < e->r->opts.inflight; i++)
		if (e->running[i] == g)
			e->running[i] = NULL;
}

/* A transfer ended: done, failed, or queued again after its backoff. */
static void settle(rio__engine *e, rio__get *g, CURLcode cc)
{
	take_off(e, g);
	rio__http_finish(&g->http, cc);
	int code;
	rio__verdict v = rio__http_verdict(&g->http, &code);
	double pause = 0;
	if (v == RIO__HTTP_RETRY && g->attempt < e->r->opts.attempts) {
		rio__http_advance(&g->http);
		pause = rio__client_backoff(e->r, g->attempt);
	} else if (v != RIO__HTTP_DONE) {
		rio__http_error(&g->http, code, g->attempt, &g->err);
	}
	rio__http_release(&g->http);
	pthread_mutex_lock(&e->mu);
	account(e);
	e->nrunning--;
	if (g->cancel)
		finish(e, g, -ECANCELED);
	else if (v == RIO__HTTP_RETRY && g->attempt < e->r->opts.attempts) {
		g->not_before = rio__now() + pause;
		enqueue(e, g);
	} else
		finish(e, g, v == RIO__HTTP_DONE ? 0 : code);
	pthread_mutex_unlock(&e->mu);
}

/* Requests cancelled while they ran. */
static void drop_cancelled(rio__engine *e)
{
	for (unsigned i = 0; i < e->r->opts.inflight; i++) {
		pthread_mutex_lock(&e->mu);
		rio__get *g = e->running[i];
		int cancel = g && g->cancel;
		pthread_mutex_unlock(&e->mu);
		if (!cancel)
			continue;
		take_off(e, g);
		rio__http_release(&g->http);
		pthread_mutex_lock(&e->mu);
		account(e);
		e->nrunning--;
		finish(e, g, -ECANCELED);
		pthread_mutex_unlock(&e->mu);
	}
}

static void *engine_main(void *arg)
{
	rio__engine *e = arg;
	for (;;) {
		pthread_mutex_lock(&e->mu);
		int stop = e->stop;
		pthread_mutex_unlock(&e->mu);
		if (stop)
			break;
		drop_cancelled(e);
		double next = start_due(e);
		int still = 0;
		curl_multi_perform(e->multi, &still);
		CURLMsg *m;
		int left, settled = 0;
		while ((m = curl_multi_info_read(e->multi, &left))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			char *p = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
			settle(e, (rio__get *)(void *)p, m->data.result);
			settled = 1;
		}
		/* a settled transfer may have been queued again (a retry after its
		 * backoff), which `next` does not know yet: look again before
		 * waiting */
		if (settled)
			continue;
		pthread_mutex_lock(&e->mu);
		int busy = e->nrunning > 0, queued = e->head != NULL;
		pthread_mutex_unlock(&e->mu);
		if (busy && !still)
			continue; /* a transfer just ended: settle it before waiting */
		int ms = queued && next < 1e9 ? (int)(next * 1000) + 1 : 10000;
		if (ms > 10000)
			ms = 10000;
		if (queued && next <= 0)
			ms = 0;
		curl_multi_poll(e->multi, NULL, 0, ms, NULL);
	}
	return NULL;
}

/* ---- from the asking threads ------------------------------------------------ */

int rio__engine_open(rio__engine **out, rio__remote *r, rio_error *err)
{
	*out = NULL;
	rio__engine *e = calloc(1, sizeof *e);
	if (!e)
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	e->r = r;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	e->running = calloc(r->opts.inflight, sizeof *e->running);
	e->idle = calloc(r->opts.inflight, sizeof *e->idle);
	e->multi = curl_multi_init();
	if (!e->running || !e->idle || !e->multi) {
		rio__engine_close(e);
		return rio__error_set(err, -ENOMEM, NULL, UNK, UNK, NULL);
	}
	curl_multi_setopt(e->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)r->opts.inflight);
	int rc = pthread_create(&e->thread, NULL, engine_main, e);
	if (rc) {
		rio__engine_close(e);
		return rio__error_set(err, -rc, NULL, UNK, UNK, "cannot start the remote reads' thread");
	}
	/* named, for top -H and for the tests that count clients'
	 * engines (tests/s3_coalesce.sh) */
	pthread_setname_np(e->thread, RIO__ENGINE_THREAD_NAME);
	e->started = 1;
	*out = e;
	return 0;
}

void rio__engine_close(rio__engine *e)
{
	if (!e)
		return;
	if (e->started) {
		pthread_mutex_lock(&e->mu);
		e->stop = 1;
		pthread_mutex_unlock(&e->mu);
		curl_multi_wakeup(e->multi);
		pthread_join(e->thread, NULL);
	}
	for (unsigned i = 0; e->running && i < e->r->opts.inflight; i++)
		if (e->running[i]) {
			curl_multi_remove_handle(e->multi, e->running[i]->h);
			curl_easy_cleanup(e->running[i]->h);
			rio__http_release(&e->running[i]->http);
		}
	for (unsigned i = 0; i < e->nidle; i++)
		curl_easy_cleanup(e->idle[i]);
	if (e->multi)
		curl_multi_cleanup(e->multi);
	free(e->running);
	free(e->idle);
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

void rio__engine_submit(rio__engine *e, rio__get *const *gets, size_t n)
{
	pthread_mutex_lock(&e->mu);
	for (size_t i = 0; i < n; i++) {
		rio__get *g = gets[i];
		g->rc = 0;
		g->attempt = 0;
		g->cancel = 0;
		g->not_before = 0;
		g->h = NULL;
		rio__error_clear(&g->err);
		enqueue(e, g);
	}
	pthread_mutex_unlock(&e->mu);
	curl_multi_wakeup(e->multi);
}

int rio__engine_wait(rio__engine *e, rio__get *g)
{
	pthread_mutex_lock(&e->mu);
	while (g->state == QUEUED || g->state == RUNNING)
		pthread_cond_wait(&e->cv, &e->mu);
	int rc = g->rc;
	pthread_mutex_unlock(&e->mu);
	return rc;
}

void rio__engine_time(rio__engine *e, double *busy, double *gets)
{
	pthread_mutex_lock(&e->mu);
	account(e);
	*busy = e->busy_s;
	*gets = e->gets_s;
	pthread_mutex_unlock(&e->mu);
}

int rio__engine_done(rio__engine *e, rio__get *g)
{
	pthread_mutex_lock(&e->mu);
	int done = g->state != QUEUED && g->state != RUNNING;
	pthread_mutex_unlock(&e->mu);
	return done;
}

void rio__engine_cancel(rio__engine *e, rio__get *g)
{
	pthread_mutex_lock(&e->mu);
	if (g->state == QUEUED) {
		unqueue(e, g);
		g->state = DONE;
		g->rc = -ECANCELED;
	} else if (g->state == RUNNING) {
		g->cancel = 1;
		pthread_mutex_unlock(&e->mu);
		curl_multi_wakeup(e->multi);
		pthread_mutex_lock(&e->mu);
		while (g->state == RUNNING)
			pthread_cond_wait(&e->cv, &e->mu);
	}
	pthread_mutex_unlock(&e->mu);
}
