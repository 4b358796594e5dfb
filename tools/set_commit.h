/*
 * set_commit.h — replacing a shard set as a whole: the commit journal.
 *
 * Why: a set is many files, and no file system renames many files at once.
 * Renaming the new shards over the old ones one by one, an error or a kill
 * between two renames would leave half an old and half a new set whose
 * names agree, which nothing could tell from a whole set. So before the
 * first final rename a journal PREFIX.commit is put in place (written under
 * a hidden name, fsync'd, renamed, the directory fsync'd). It lists every
 * rename still to do (staging name -> final name, shards and their .idx)
 * and every old file of the set to remove, and ends with an "end" line:
 *
 *   recordio-set-commit 1
 *   writer PID
 *   rename STAGING<TAB>FINAL      (one per file, names relative to the dir)
 *   remove OLD                    (old shards of the prefix not replaced)
 *   end
 *
 * While PREFIX.commit exists, rio_shardset_expand() refuses the set
 * (RIO_EINCOMPLETESET), so a reader sees the old set, the new set or an
 * error naming the incomplete set — never a mix. The renames and removals
 * are idempotent, so anyone may finish them: set_commit_recover(), run by
 * the next recordio-pack on the prefix, rolls a journal forward and then
 * unlinks it. It also removes the staging files (".BASE.pack-PID-...") of
 * writers that are gone; a PID is taken as gone when no such process runs,
 * or when the one that does started after the file was last written (the
 * PID was reused).
 *
 * Errors and what was done are reported on stderr (tool_error()).
 */
#ifndef RIO_TOOLS_SET_COMMIT_H
#define RIO_TOOLS_SET_COMMIT_H

#include <stddef.h>
#include <stdint.h>

#include "recordio.h"

/* Splits PREFIX into its directory ("." when it has none) and last
 * component, both malloc'd. 0, or -1 when out of memory (not reported). */
int set_commit_split(const char *prefix, char **dir, char **base);

/* The prefix's shards (and .idx files) already in `dir`: -1 after
 * reporting the first that is not a regular file (which no commit replaces
 * or removes: rio_output_check()), or, without `replace`, the first at
 * all: "PATH: already exists (use --force ...)". 0 when none is refused. */
int set_commit_check_existing(const char *dir, const char *base, int replace);

/* The staging path of shard k written by this process:
 * DIR/.BASE.pack-PID-SSSSS.tfrecord[.gz|.zz|.lz4], hidden so that no shard
 * set expansion sees it, unique per process. 0, or -ENAMETOOLONG. */
int set_commit_staging_name(char *buf, size_t size, const char *dir, const char *base, uint32_t k,
                            rio_compression c);

/* What set_commit_apply() left. */
enum {
	SET_COMMIT_DONE = 0,      /* the new set is in place, the old one gone */
	SET_COMMIT_UNCHANGED = -1, /* failed before the journal: nothing renamed,
	                            * the caller removes its staging files       */
	SET_COMMIT_PENDING = -2,  /* failed with the journal in place: the
	                            * staging files belong to the journal now;
	                            * set_commit_recover() finishes the commit  */
};

/* Commits n staged shards (full paths, each with STAGED.idx beside it) to
 * their final paths (with FINAL.idx) in the directory `dir` of the prefix
 * whose last component is `base`. With `replace`, the prefix's existing
 * shards are replaced and those not among the finals removed; without it,
 * any existing shard of the prefix is refused (SET_COMMIT_UNCHANGED).
 * `do_fsync` also fsyncs the directory once the journal is gone (the
 * journal itself and the directory before its removal are always
 * fsync'd). Reports any failure. */
int set_commit_apply(const char *prefix, const char *dir, const char *base, char *const *staged,
                     char *const *finals, uint32_t n, int replace, int do_fsync);

/* Before writing to PREFIX: finishes an interrupted commit (a complete
 * PREFIX.commit journal) and removes the staging files of writers of
 * PREFIX that are gone, reporting each on stderr. A journal whose writer is
 * still running is an error (a commit is in progress); a live writer's
 * staging files are left alone. 1 when it found anything (and reported
 * it), 0 when there was nothing to do, -1 after reporting an error. */
int set_commit_recover(const char *prefix);

#endif /* RIO_TOOLS_SET_COMMIT_H */
