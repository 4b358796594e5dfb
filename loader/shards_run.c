/*
 * shards_run.c — work on every shard of a dataset, on a few threads: the
 * loader counts its shards (reading thousands of .idx sidecars, or
 * scanning shards that have none, is the slow part of opening) and fills
 * opts.cache (decompressing them) this way. The first failing shard in
 * order is the one reported, whatever the threads' timing.
 */
#include "config.h"
#include "dataset.h"
#include "internal.h"

#include <pthread.h>

/* rio__shards_run's shared state: the next shard, the first failure. */
typedef struct shards_job {
	size_t nshards;
	rio__shard_fn fn;
	void *arg;
	pthread_mutex_t mu;
	size_t next;
	size_t fail_shard;
	int fail_rc;
	rio_error fail_err;
} shards_job;

static void *shards_worker(void *arg)
{
	shards_job *j = arg;
	rio_error e;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t s = j->next++;
		int give_up = j->fail_rc < 0 && s > j->fail_shard;
		pthread_mutex_unlock(&j->mu);
		if (s >= j->nshards || give_up)
			return NULL;
		rio__error_clear(&e);
		int rc = j->fn(j->arg, s, &e);
		if (rc < 0) {
			pthread_mutex_lock(&j->mu);
			if (j->fail_rc == 0 || s < j->fail_shard) {
				j->fail_rc = rc;
				j->fail_shard = s;
				j->fail_err = e;
			}
			pthread_mutex_unlock(&j->mu);
		}
	}
}

int rio__shards_run(size_t nshards, int threads, int caller_works, rio__shard_fn fn, void *arg,
                    rio_error *err)
{
	shards_job j = {.nshards = nshards, .fn = fn, .arg = arg};
	pthread_mutex_init(&j.mu, NULL);
	pthread_t th[64];
	int want = threads < 64 ? threads : 64, started = 0;
	if (caller_works)
		want--;
	while (started < want && (size_t)(started + caller_works) < nshards &&
	       pthread_create(&th[started], NULL, shards_worker, &j) == 0)
		started++;
	if (caller_works || started == 0)
		shards_worker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.mu);
	if (j.fail_rc < 0 && err)
		*err = j.fail_err;
	return j.fail_rc;
}
