/*
 * memory.c — the memory this process may use (memory.h): the cgroup
 * hierarchies from /proc/self/mountinfo, this process's cgroup in each
 * from /proc/self/cgroup, the limit files from there up to the mount
 * point, and MemTotal.
 */
#include "config.h"
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a cgroup hierarchy with the memory controller is mounted. */
typedef struct hierarchy {
	int v2;               /* cgroup2, else v1's memory controller     */
	char root[512];       /* the cgroup the mount shows as its top    */
	char mountpoint[512];
} hierarchy;

/* ROOT/path opened for reading. */
static FILE *open_under(const char *root, const char *path)
{
	char full[1200];
	snprintf(full, sizeof full, "%s%s", root, path);
	return fopen(full, "r");
}

/* One number from ROOT/path: 0, or -1 when it cannot be read or says
 * "max". */
static int read_limit(const char *root, const char *path, uint64_t *v)
{
	FILE *f = open_under(root, path);
	if (!f)
		return -1;
	unsigned long long n;
	int ok = fscanf(f, "%llu", &n) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*v = n;
	return 0;
}

/* Takes `bytes` from `source` when it is lower than what m has. */
static void lower(tr_memory_limit *m, uint64_t bytes, const char *source)
{
	if (bytes < m->bytes) {
		m->bytes = bytes;
		snprintf(m->source, sizeof m->source, "%s", source);
	}
}

/* Has the comma-separated list `list` the word `word`? */
static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == 0 || p[n] == '\n'))
			return 1;
	return 0;
}

/* The memory hierarchies of mountinfo: up to two (a v2 one, a v1 one). */
static int find_hierarchies(const char *root, hierarchy *h)
{
	FILE *f = open_under(root, "/proc/self/mountinfo");
	if (!f)
		return 0;
	int n = 0;
	char line[2048];
	while (n < 2 && fgets(line, sizeof line, f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - TYPE SOURCE SUPER */
		char mroot[512], point[512], type[64], super[512];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", mroot, point) != 2 ||
		    sscanf(dash + 3, "%63s %*s %511s", type, super) != 2)
			continue;
		int v2 = !strcmp(type, "cgroup2");
		if (!v2 && !(strcmp(type, "cgroup") == 0 && has_word(super, "memory")))
			continue;
		if (n == 1 && h[0].v2 == v2)
			continue;
		h[n].v2 = v2;
		snprintf(h[n].root, sizeof h[n].root, "%s", mroot);
		snprintf(h[n].mountpoint, sizeof h[n].mountpoint, "%s", point);
		n++;
	}
	fclose(f);
	return n;
}

/* This process's cgroup in hierarchy h (its path from the hierarchy's
 * top), from /proc/self/cgroup; -1 when not there. */
static int own_cgroup(const char *root, const hierarchy *h, char *path, size_t size)
{
	FILE *f = open_under(root, "/proc/self/cgroup");
	if (!f)
		return -1;
	char line[2048];
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		/* HIERARCHY-ID:CONTROLLERS:PATH; v2's is "0::PATH" */
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		*b = 0;
		found = h->v2 ? (strncmp(line, "0:", 2) == 0 && a[1] == 0)
		              : has_word(a + 1, "memory");
		if (found) {
			b[1 + strcspn(b + 1, "\n")] = 0;
			snprintf(path, size, "%s", b + 1);
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

/* The limits of hierarchy h: this process's cgroup's and each one above
 * it, up to the mount point. */
static void hierarchy_limit(const char *root, const hierarchy *h, tr_memory_limit *m)
{
	char cg[512], dir[1100], file[1200];
	if (own_cgroup(root, h, cg, sizeof cg) < 0)
		return;
	/* the cgroup relative to what the mount shows (a container's mount
	 * may show its own cgroup as the top) */
	size_t r = strlen(h->root);
	const char *rel = cg;
	if (strcmp(h->root, "/") != 0) {
		if (strncmp(cg, h->root, r) != 0 || (cg[r] != '/' && cg[r] != 0))
			rel = "/"; /* not below it: the mount's top is all we see */
		else
			rel = cg + r;
	}
	snprintf(dir, sizeof dir, "%s%s", h->mountpoint, strcmp(rel, "/") ? rel : "");
	const char *name = h->v2 ? "memory.max" : "memory.limit_in_bytes";
	size_t top = strlen(h->mountpoint);
	for (;;) {
		uint64_t v;
		snprintf(file, sizeof file, "%s/%s", dir, name);
		/* v1 says "no limit" with a page-rounded 2^63 - 1 */
		if (read_limit(root, file, &v) == 0 && v < (1ull << 62))
			lower(m, v, file);
		char *slash = strrchr(dir, '/');
		if (strlen(dir) <= top || !slash || (size_t)(slash - dir) < top)
			break;
		*slash = 0;
	}
}

void tr_memory_limit_get(const char *root, tr_memory_limit *m)
{
	m->bytes = UINT64_MAX;
	m->source[0] = 0;
	FILE *f = open_under(root, "/proc/meminfo");
	if (f) {
		char line[256];
		unsigned long long kb;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
				lower(m, (uint64_t)kb * 1024, "MemTotal in /proc/meminfo");
				break;
			}
		fclose(f);
	}
	hierarchy h[2];
	int n = find_hierarchies(root, h);
	for (int i = 0; i < n; i++)
		hierarchy_limit(root, &h[i], m);
}

uint64_t tr_memory_peak(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	char line[256];
	unsigned long long kb = 0;
	while (fgets(line, sizeof line, f) && sscanf(line, "VmHWM: %llu kB", &kb) != 1) {
	}
	fclose(f);
	return (uint64_t)kb * 1024;
}
