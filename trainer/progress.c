/*
 * progress.c — the per-epoch progress line on a terminal (progress.h).
 */
#include "config.h"
#include "progress.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is the parent's stdout a terminal? Under Open MPI the rank's own stdout
 * is a pty whatever mpirun writes to; mpirun (the parent of the ranks it
 * starts on its own host) holds the user's real stdout. */
static int parent_stdout_is_terminal(void)
{
	char link[64], target[256];
	snprintf(link, sizeof link, "/proc/%ld/fd/1", (long)getppid());
	ssize_t n = readlink(link, target, sizeof target - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return !strncmp(target, "/dev/pts/", 9) || !strncmp(target, "/dev/tty", 8);
}

void tr_progress_init(tr_progress *p, int want)
{
	memset(p, 0, sizeof *p);
	const char *iv = getenv("RIO_PROGRESS_INTERVAL");
	char *end;
	double d = iv && *iv ? strtod(iv, &end) : -1;
	p->interval = d >= 0 && *end == '\0' ? d : 0.25;
	int open_mpi = getenv("OMPI_COMM_WORLD_SIZE") != NULL;
	if (want && isatty(STDOUT_FILENO) && (!open_mpi || parent_stdout_is_terminal()))
		p->f = stdout;
}

void tr_progress_begin(tr_progress *p, uint64_t step)
{
	p->t0 = p->last = rio__now();
	p->step0 = step;
}

void tr_progress_update(tr_progress *p, uint64_t epoch, uint64_t epochs, uint64_t step,
                        uint64_t steps, uint64_t samples_per_step)
{
	if (!p->f)
		return;
	double now = rio__now();
	if (now - p->last < p->interval || step <= p->step0 || steps == 0)
		return;
	p->last = now;
	double rate = (double)(step - p->step0) / (now - p->t0); /* steps/s */
	double eta = (double)(steps - (step < steps ? step : steps)) / rate;
	unsigned long s = (unsigned long)(eta + 0.5);
	fprintf(p->f, "\r\033[Kepoch %llu/%llu  step %llu/%llu  %3.0f%%  %.0f samples/s  ETA %lu:%02lu",
	        (unsigned long long)epoch, (unsigned long long)epochs, (unsigned long long)step,
	        (unsigned long long)steps, 100.0 * (double)step / (double)steps,
	        rate * (double)samples_per_step, s / 60, s % 60);
	fflush(p->f);
	p->shown = 1;
}

void tr_progress_clear(tr_progress *p)
{
	if (!p->f || !p->shown)
		return;
	fputs("\r\033[K", p->f);
	fflush(p->f);
	p->shown = 0;
}
