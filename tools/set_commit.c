/*
 * set_commit.c — the commit journal that replaces a shard set as a whole;
 * see set_commit.h for the design and doc/recordio-format.md ("Replacing a
 * set: the commit journal") for the user's view.
 *
 * One journal, two writers of it: set_commit_apply() builds it in memory
 * from the staged shards, puts it in place and rolls it forward; a later
 * set_commit_recover() reads it back (checking that every name is one a
 * commit of this prefix could have written, so a damaged or crafted file
 * cannot rename or remove anything else) and rolls it forward the same way.
 */
#include "config.h"
#include "set_commit.h"
#include "atomic_file.h"
#include "common.h"
#include "grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- names ---------------------------------------------------------------- */

int set_commit_split(const char *prefix, char **dir, char **base)
{
	const char *slash = strrchr(prefix, '/');
	if (slash) {
		*dir = strndup(prefix, slash == prefix ? 1 : (size_t)(slash - prefix));
		*base = strdup(slash + 1);
	} else {
		*dir = strdup(".");
		*base = strdup(prefix);
	}
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		*dir = *base = NULL;
		return -1;
	}
	return 0;
}

/* Skips one or more digits: the position after them, or NULL. */
static const char *skip_digits(const char *p)
{
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

/* Is the directory entry `name` BASE-DIGITS-of-DIGITS.tfrecord[.gz|.zz|.lz4]
 * [.idx]: a shard of the prefix whose last component is `base`, or its
 * index? */
static int is_shard_name(const char *name, const char *base)
{
	size_t blen = strlen(base);
	if (strncmp(name, base, blen) != 0 || name[blen] != '-')
		return 0;
	const char *p = skip_digits(name + blen + 1);
	if (!p || strncmp(p, "-of-", 4) != 0 || !(p = skip_digits(p + 4)))
		return 0;
	if (strncmp(p, ".tfrecord", 9) != 0)
		return 0;
	p += 9;
	if (!strncmp(p, ".gz", 3) || !strncmp(p, ".zz", 3))
		p += 3;
	else if (!strncmp(p, ".lz4", 4))
		p += 4;
	if (!strcmp(p, ".idx"))
		p += 4;
	return *p == '\0';
}

/* Joins dir and name into buf: 0, or -1 when it does not fit. */
static int join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = !strcmp(dir, ".") ? snprintf(buf, size, "%s", name)
	                          : snprintf(buf, size, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int set_commit_staging_name(char *buf, size_t size, const char *dir, const char *base, uint32_t k,
                            rio_compression c)
{
	char name[NAME_MAX + 1];
	int n = snprintf(name, sizeof name, ".%s.pack-%ld-%05u%s", base, (long)getpid(),
	                 (unsigned)k, rio_compression_suffix(c));
	if (n < 0 || (size_t)n >= sizeof name || join(buf, size, dir, name) < 0)
		return -ENAMETOOLONG;
	return 0;
}

/* A staging name of `base`: ".BASE.pack-PID-..." or ".BASE.pack-PID.commit"
 * (the journal's own staging name), or the same with one more leading '.'
 * (the temporaries rio_writer and rio_index_write make beside a staging
 * file). Returns the PID, or 0 when `name` is none of these. */
static long staging_pid(const char *name, const char *base)
{
	size_t blen = strlen(base);
	for (int dots = 1; dots <= 2; dots++) {
		const char *p = name;
		int i;
		for (i = 0; i < dots && *p == '.'; i++)
			p++;
		if (i < dots || strncmp(p, base, blen) || strncmp(p + blen, ".pack-", 6))
			continue;
		const char *end = skip_digits(p + blen + 6);
		if (!end || (*end != '-' && strcmp(end, ".commit")))
			continue;
		long pid = strtol(p + blen + 6, NULL, 10);
		if (pid > 0)
			return pid;
	}
	return 0;
}

/* ---- is the writer still there? ------------------------------------------------ */

/* Seconds since the epoch at which process `pid` started, from
 * /proc/PID/stat (field 22, clock ticks after boot) and /proc/stat's
 * btime; -1 when unknown. */
static double process_start(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return -1;
	unsigned long long ticks = 0;
	/* after ") ": field 3 (state) is token 0, field 22 (starttime) token 19 */
	for (int tok = 0; tok < 20; tok++) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
		if (!*p)
			return -1;
		if (tok == 19)
			ticks = strtoull(p, NULL, 10);
	}
	unsigned long long btime = 0;
	char line[256];
	int found = 0;
	if (!(f = fopen("/proc/stat", "re")))
		return -1;
	while (!found && fgets(line, sizeof line, f))
		found = sscanf(line, "btime %llu", &btime) == 1;
	fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	if (!found || hz <= 0)
		return -1;
	return (double)btime + (double)ticks / (double)hz;
}

/* Could process `pid` have written a file last modified at `mtime`? 0 when
 * no such process runs, or when it started after that write (the PID was
 * reused; 2 s of slack for the clocks' rounding); 1 otherwise, also when
 * its start time cannot be read. */
static int writer_alive(long pid, time_t mtime)
{
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	double start = process_start(pid);
	if (start >= 0 && start > (double)mtime + 2)
		return 0;
	return 1;
}

/* ---- the journal ---------------------------------------------------------- */

typedef struct journal {
	char **from, **to; /* renames: staging name -> final name */
	size_t nren, capfrom, capto;
	char **rm;         /* old files to remove */
	size_t nrm, caprm;
	long pid;
} journal;

static void journal_free(journal *j)
{
	for (size_t i = 0; i < j->nren; i++) {
		free(j->from[i]);
		free(j->to[i]);
	}
	for (size_t i = 0; i < j->nrm; i++)
		free(j->rm[i]);
	free(j->from);
	free(j->to);
	free(j->rm);
	memset(j, 0, sizeof *j);
}

static int grow(char ***v, size_t n, size_t *cap)
{
	return rio__grow(v, cap, n + 1, sizeof **v, 16) ? -1 : 0;
}

/* Appends a rename of the last path components of from and to. */
static int journal_rename(journal *j, const char *from, const char *to)
{
	const char *f = strrchr(from, '/'), *t = strrchr(to, '/');
	f = f ? f + 1 : from;
	t = t ? t + 1 : to;
	if (grow(&j->from, j->nren, &j->capfrom) || grow(&j->to, j->nren, &j->capto))
		return -1;
	char *a = strdup(f), *b = strdup(t);
	if (!a || !b) {
		free(a);
		free(b);
		return -1;
	}
	j->from[j->nren] = a;
	j->to[j->nren] = b;
	j->nren++;
	return 0;
}

static int journal_remove(journal *j, const char *name)
{
	if (grow(&j->rm, j->nrm, &j->caprm))
		return -1;
	if (!(j->rm[j->nrm] = strdup(name)))
		return -1;
	j->nrm++;
	return 0;
}

/* The journal's text, malloc'd; NULL when out of memory. */
static char *journal_text(const journal *j, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		return NULL;
	fprintf(f, "%s\nwriter %ld\n", RIO_SET_JOURNAL_MAGIC, j->pid);
	for (size_t i = 0; i < j->nren; i++)
		fprintf(f, "rename %s\t%s\n", j->from[i], j->to[i]);
	for (size_t i = 0; i < j->nrm; i++)
		fprintf(f, "remove %s\n", j->rm[i]);
	fputs("end\n", f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* Parses a journal of `base` read from `path`. 0, or -1 after reporting. */
static int journal_read(journal *j, const char *path, const char *base)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		tool_error("%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int ended = 0, rc = 0;
	const char *why = NULL;
	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len == 0 || line[len - 1] != '\n') {
			why = "a line without its end";
			break;
		}
		line[len - 1] = '\0';
		char *tab;
		if (ended) {
			why = "text after the end line";
		} else if (lineno == 1) {
			if (strcmp(line, RIO_SET_JOURNAL_MAGIC))
				why = "not a commit journal (wrong first line)";
		} else if (lineno == 2) {
			char *end;
			j->pid = strncmp(line, "writer ", 7) ? 0 : strtol(line + 7, &end, 10);
			if (j->pid <= 0 || *end)
				why = "no writer line";
		} else if (!strcmp(line, "end")) {
			ended = 1;
		} else if (!strncmp(line, "rename ", 7) && (tab = strchr(line + 7, '\t'))) {
			*tab = '\0';
			/* staging names are hidden; finals are shards of this prefix */
			if (staging_pid(line + 7, base) != j->pid || strchr(line + 7, '/') ||
			    !is_shard_name(tab + 1, base))
				why = "a rename of a file no commit of this prefix writes";
			else if (journal_rename(j, line + 7, tab + 1) < 0)
				rc = -1;
		} else if (!strncmp(line, "remove ", 7)) {
			if (!is_shard_name(line + 7, base))
				why = "a removal of a file that is not a shard of this prefix";
			else if (journal_remove(j, line + 7) < 0)
				rc = -1;
		} else {
			why = "an unknown line";
		}
		if (why)
			break;
	}
	int read_error = ferror(f);
	fclose(f);
	free(line);
	if (!why && !ended)
		why = "no end line (the journal is incomplete)";
	if (rc < 0)
		tool_error("out of memory");
	else if (read_error)
		tool_error("%s: %s", path, strerror(EIO));
	else if (why)
		tool_error("%s: line %zu: %s; check the set and remove this file by hand", path,
		           lineno ? lineno : 1, why);
	if (rc < 0 || read_error || why) {
		journal_free(j);
		return -1;
	}
	return 0;
}

/* Writes the journal under its staging name, fsyncs it and renames it to
 * jpath, then fsyncs the directory. 0; -1 (reported) with nothing in place;
 * -2 (reported) when jpath may exist and could not be removed again. */
static int journal_put(const journal *j, const char *prefix, const char *dir, const char *base,
                       const char *jpath)
{
	size_t len;
	char *text = journal_text(j, &len);
	char tmp[PATH_MAX], name[NAME_MAX + 1];
	if (!text) {
		tool_error("out of memory");
		return -1;
	}
	int n = snprintf(name, sizeof name, ".%s.pack-%ld.commit", base, j->pid);
	if (n < 0 || (size_t)n >= sizeof name || join(tmp, sizeof tmp, dir, name) < 0) {
		free(text);
		tool_error("%s: %s", jpath, strerror(ENAMETOOLONG));
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		tool_error("%s: cannot create the commit journal: %s", tmp, strerror(errno));
		free(text);
		return -1;
	}
	int rc = rio__write_all(fd, text, len);
	free(text);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, jpath) < 0)
		rc = -errno;
	if (rc) {
		tool_error("%s: cannot write the commit journal: %s", tmp, strerror(-rc));
		unlink(tmp);
		return -1;
	}
	if ((rc = rio__fsync_dir(dir)) < 0) {
		if (unlink(jpath) < 0 && errno != ENOENT) {
			tool_error("%s: fsync: %s; the set %s stays incomplete: run 'recordio-pack "
			           "--recover --output %s' to finish its commit",
			           dir, strerror(-rc), prefix, prefix);
			return -2;
		}
		tool_error("%s: fsync: %s", dir, strerror(-rc));
		return -1;
	}
	return 0;
}

/* Renames and removes what the journal says, fsyncs the directory, then
 * unlinks the journal. `recovering`: a rename whose source is gone but
 * whose target exists was done before the interruption. Returns the number
 * of files renamed (*removed: of old files removed), or -1 after reporting
 * the first failure (the journal then stays). */
static long roll_forward(const journal *j, const char *dir, const char *prefix, const char *jpath,
                         int recovering, int do_fsync, size_t *removed)
{
	char from[PATH_MAX], to[PATH_MAX];
	long renamed = 0;
	*removed = 0;
	for (size_t i = 0; i < j->nren; i++) {
		if (join(from, sizeof from, dir, j->from[i]) < 0 ||
		    join(to, sizeof to, dir, j->to[i]) < 0) {
			tool_error("%s: %s", prefix, strerror(ENAMETOOLONG));
			return -1;
		}
		if (rename(from, to) == 0) {
			renamed++;
			continue;
		}
		int e = errno;
		if (recovering && e == ENOENT && access(to, F_OK) == 0)
			continue; /* renamed before the interruption */
		tool_error("%s: cannot rename into place: %s; the set %s stays incomplete: run "
		           "'recordio-pack --recover --output %s' to finish its commit",
		           to, strerror(e), prefix, prefix);
		return -1;
	}
	for (size_t i = 0; i < j->nrm; i++) {
		if (join(to, sizeof to, dir, j->rm[i]) < 0) {
			tool_error("%s: %s", prefix, strerror(ENAMETOOLONG));
			return -1;
		}
		if (unlink(to) == 0) {
			(*removed)++;
		} else if (errno != ENOENT) {
			tool_error("%s: cannot remove this old shard: %s; the set %s stays incomplete: "
			           "run 'recordio-pack --recover --output %s' to finish its commit",
			           to, strerror(errno), prefix, prefix);
			return -1;
		}
	}
	/* the renames reach the disk before the journal's removal does */
	int rc = rio__fsync_dir(dir);
	if (rc == 0 && unlink(jpath) < 0)
		rc = -errno;
	if (rc < 0) {
		tool_error("%s: %s; the set %s stays incomplete: run 'recordio-pack --recover "
		           "--output %s' to finish its commit",
		           jpath, strerror(-rc), prefix, prefix);
		return -1;
	}
	if (do_fsync && (rc = rio__fsync_dir(dir)) < 0) {
		tool_error("%s: fsync: %s", dir, strerror(-rc));
		return -1;
	}
	return renamed;
}

/* PREFIX.commit into buf: 0, or -1 (reported) when it does not fit. */
static int journal_path(char *buf, size_t size, const char *prefix)
{
	int n = snprintf(buf, size, "%s%s", prefix, RIO_SET_JOURNAL_SUFFIX);
	if (n < 0 || (size_t)n >= size) {
		tool_error("%s: %s", prefix, strerror(ENAMETOOLONG));
		return -1;
	}
	return 0;
}

/* ---- commit ----------------------------------------------------------------- */

/* Is `name` one of the finals (or its .idx)? */
static int is_final(const char *name, char *const *finals, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		const char *slash = strrchr(finals[k], '/');
		const char *fname = slash ? slash + 1 : finals[k];
		size_t len = strlen(fname);
		if (!strncmp(name, fname, len) && (!name[len] || !strcmp(name + len, ".idx")))
			return 1;
	}
	return 0;
}

/* Lists the prefix's existing shards that are not among the finals (`j`
 * NULL: only checks them); without `replace`, any existing shard of the
 * prefix is refused instead (then `j` and `finals` are not used). One that
 * is not a regular file (a FIFO, a device node, a link, a directory) is
 * refused either way: no commit replaces or removes it (rio_output_check). */
static int list_old(journal *j, const char *dir, const char *base, char *const *finals,
                    uint32_t n, int replace)
{
	struct dirent **list = NULL;
	int count = scandir(dir, &list, NULL, alphasort);
	if (count < 0) {
		tool_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < count; i++) {
		const char *name = list[i]->d_name;
		char path[PATH_MAX];
		rio_error err;
		if (rc || !is_shard_name(name, base)) {
			/* not ours */
		} else if (join(path, sizeof path, dir, name) < 0) {
			tool_error("%s/%s: %s", dir, name, strerror(ENAMETOOLONG));
			rc = -1;
		} else if (rio_output_check(path, &err) < 0) {
			tool_error("%s", err.message);
			rc = -1;
		} else if (!replace) {
			tool_error("%s: already exists (use --force to replace the shards of this "
			           "prefix)",
			           path);
			rc = -1;
		} else if (j && !is_final(name, finals, n) && journal_remove(j, name) < 0) {
			tool_error("out of memory");
			rc = -1;
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

int set_commit_check_existing(const char *dir, const char *base, int replace)
{
	return list_old(NULL, dir, base, NULL, 0, replace);
}

int set_commit_apply(const char *prefix, const char *dir, const char *base, char *const *staged,
                     char *const *finals, uint32_t n, int replace, int do_fsync)
{
	journal j;
	memset(&j, 0, sizeof j);
	j.pid = (long)getpid();
	char jpath[PATH_MAX];
	if (journal_path(jpath, sizeof jpath, prefix) < 0)
		return SET_COMMIT_UNCHANGED;
	/* each index before its shard: a shard never stands without its index */
	for (uint32_t k = 0; k < n; k++) {
		char *sidx = rio_index_path(staged[k]), *fidx = rio_index_path(finals[k]);
		int bad = !sidx || !fidx || journal_rename(&j, sidx, fidx) < 0 ||
		          journal_rename(&j, staged[k], finals[k]) < 0;
		free(sidx);
		free(fidx);
		if (bad) {
			tool_error("out of memory");
			journal_free(&j);
			return SET_COMMIT_UNCHANGED;
		}
	}
	if (list_old(&j, dir, base, finals, n, replace) < 0) {
		journal_free(&j);
		return SET_COMMIT_UNCHANGED;
	}
	int rc = journal_put(&j, prefix, dir, base, jpath);
	if (rc < 0) {
		journal_free(&j);
		return rc == -1 ? SET_COMMIT_UNCHANGED : SET_COMMIT_PENDING;
	}
	size_t removed;
	long renamed = roll_forward(&j, dir, prefix, jpath, 0, do_fsync, &removed);
	journal_free(&j);
	return renamed < 0 ? SET_COMMIT_PENDING : SET_COMMIT_DONE;
}

/* ---- recovery ----------------------------------------------------------------- */

/* Finishes PREFIX.commit when there is one. 1 when it did, 0 when there
 * was none, or -1 after reporting. */
static int recover_journal(const char *prefix, const char *dir, const char *base)
{
	char jpath[PATH_MAX];
	if (journal_path(jpath, sizeof jpath, prefix) < 0)
		return -1;
	struct stat st;
	if (lstat(jpath, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		tool_error("%s: %s", jpath, strerror(errno));
		return -1;
	}
	rio_error err;
	if (rio_output_check(jpath, &err) < 0) { /* a FIFO would block the read */
		tool_error("%s", err.message);
		return -1;
	}
	journal j;
	memset(&j, 0, sizeof j);
	if (journal_read(&j, jpath, base) < 0)
		return -1;
	if (j.pid != (long)getpid() && writer_alive(j.pid, st.st_mtime)) {
		tool_error("%s: process %ld is committing the set %s right now; run again once it "
		           "has finished",
		           jpath, j.pid, prefix);
		journal_free(&j);
		return -1;
	}
	size_t removed;
	long renamed = roll_forward(&j, dir, prefix, jpath, 1, 1, &removed);
	if (renamed >= 0)
		tool_error("%s: finished the interrupted commit of %s by process %ld (%ld of %zu "
		           "files renamed now, %zu old files removed)",
		           jpath, prefix, j.pid, renamed, j.nren, removed);
	journal_free(&j);
	return renamed < 0 ? -1 : 1;
}

/* Staging files of one writer, as the directory scan found them. */
typedef struct writer_files {
	long pid;
	int alive;
	size_t count, failed;
} writer_files;

/* Removes (or leaves, for a live writer) the staging files of base: 1 when
 * there were some (each writer's are reported), 0 when none, -1 after an
 * error. */
static int recover_staging(const char *prefix, const char *dir, const char *base)
{
	struct dirent **list = NULL;
	int count = scandir(dir, &list, NULL, alphasort);
	if (count < 0) {
		tool_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	writer_files *w = NULL;
	size_t nw = 0;
	int rc = 0;
	for (int i = 0; i < count; i++) {
		const char *name = list[i]->d_name;
		long pid = staging_pid(name, base);
		char path[PATH_MAX];
		struct stat st;
		if (!rc && pid > 0 && pid != (long)getpid() && join(path, sizeof path, dir, name) == 0 &&
		    lstat(path, &st) == 0) {
			int alive = writer_alive(pid, st.st_mtime);
			size_t k = 0;
			while (k < nw && (w[k].pid != pid || w[k].alive != alive))
				k++;
			if (k == nw) {
				writer_files *p = realloc(w, (nw + 1) * sizeof *p);
				if (!p) {
					tool_error("out of memory");
					rc = -1;
				} else {
					w = p;
					memset(&w[nw++], 0, sizeof *w);
					w[k].pid = pid;
					w[k].alive = alive;
				}
			}
			if (!rc) {
				w[k].count++;
				if (!alive && unlink(path) < 0 && errno != ENOENT) {
					tool_error("%s: cannot remove this staging file: %s", path,
					           strerror(errno));
					w[k].failed++;
					rc = -1;
				}
			}
		}
		free(list[i]);
	}
	free(list);
	for (size_t k = 0; k < nw; k++) {
		if (w[k].alive)
			tool_error("%s: left alone %zu staging file%s of %s: process %ld is writing them",
			           dir, w[k].count, w[k].count == 1 ? "" : "s", prefix, w[k].pid);
		else if (w[k].count > w[k].failed)
			tool_error("%s: removed %zu staging file%s of %s left by process %ld, which is "
			           "no longer running",
			           dir, w[k].count - w[k].failed, w[k].count - w[k].failed == 1 ? "" : "s",
			           prefix, w[k].pid);
	}
	free(w);
	return rc < 0 ? -1 : nw > 0;
}

int set_commit_recover(const char *prefix)
{
	char *dir, *base;
	if (set_commit_split(prefix, &dir, &base) < 0) {
		tool_error("out of memory");
		return -1;
	}
	int rc = 0;
	struct stat st;
	/* a missing directory is shard_out_open()'s to report */
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		int done = recover_journal(prefix, dir, base);
		rc = done < 0 ? -1 : recover_staging(prefix, dir, base);
		if (rc >= 0)
			rc = rc || done;
	}
	free(dir);
	free(base);
	return rc;
}
