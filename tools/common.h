/*
 * common.h — what every recordio tool shares: the exit-code convention,
 * one-line error reporting, number and size parsing, and the progress line.
 * What the trainer and the library share with them is in lib/ (clock.h,
 * size.h, json.h, exit_status.h).
 *
 * Exit codes: 0 success, 1 data or I/O error, 2 usage error. Errors go to
 * stderr as "PROGRAM: MESSAGE" on one line; --help goes to stdout.
 */
#ifndef RIO_TOOLS_COMMON_H
#define RIO_TOOLS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recordio.h"

#include "exit_status.h"

/* Set once from argv[0]'s last component by tool_init(). */
extern const char *tool_name;
void tool_init(const char *argv0);

/* "PROGRAM: message\n" on stderr. */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: the message, then "Try 'PROGRAM --help'.", exit 2. */
void tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* After getopt_long has reported an unknown option or a missing argument:
 * "Try 'PROGRAM --help'." and exit 2. */
void tool_try_help(void) __attribute__((noreturn));

/* Parses a non-negative integer option value (decimal); on error a usage
 * error naming `option`. */
uint64_t tool_parse_u64(const char *option, const char *value);
/* Parses a size (lib/size.h: "64M", "1.5G", "4096"; K..T and KiB..TiB
 * powers of 1024, KB..TB powers of 1000); on anything else, or past
 * 2^64-1, a usage error naming `option`. The caller checks its range and
 * says what 0 means. */
uint64_t tool_parse_size(const char *option, const char *value);

/* Flushes standard output and checks it had no write error: 0, or -1 after
 * reporting one ("standard output: No space left on device"). */
int tool_flush_stdout(void);

/* A progress line on stderr, redrawn at most 10 times a second, only when
 * stderr is a terminal and not quiet. */
typedef struct tool_progress {
	int enabled;
	double start, last;
} tool_progress;
void tool_progress_init(tool_progress *p, int quiet);
void tool_progress_update(tool_progress *p, uint64_t records, uint64_t bytes, const char *what);
void tool_progress_done(tool_progress *p);

/* Output prefixes of shard sets (PREFIX-SSSSS-of-NNNNN...): a usage error
 * naming `option` (exit 2) for a prefix spelled as a directory ("d/",
 * ".", "d/.."), and, in the second, for the name of an existing directory
 * (its shards would land beside it, and readers refuse "DIR" as both a
 * directory and a PREFIX). Call both before writing anything. */
void tool_check_output_prefix(const char *option, const char *prefix);
void tool_refuse_output_dir(const char *option, const char *prefix);

/* The --help lines on what part of a numbered set a specification reads
 * (rio_shardset_expand()). */
#define TOOL_SHARDS_SUBSET_HELP                                                                   \
	"A shard that a glob matches, or that a directory or PREFIX lists, must exist;\n"            \
	"a glob may pick part of a set: 'data/train-0000[0-2]-of-00004.tfrecord'.\n"

/* Expands a shard spec (glob, list, PREFIX or file) with rio_shardset_expand,
 * printing the error on failure; returns 0 or -1. An empty spec is a usage
 * error (exit 2). The spec "-" (standard input) is the one path "-". */
int tool_expand_shards(const char *spec, rio_shardset *set);

/* Expands `n` specs, in order, into one flat list `all` (free it with
 * rio_shardset_free). Every spec is expanded before any is read, so a
 * missing file fails before any output. Prints the first failure and
 * returns -1 (with `all` empty), else 0. "-" given twice is a usage error
 * (standard input reads once). */
int tool_expand_all(char *const *specs, int n, rio_shardset *all);

/* "-" stands for standard input among the FILE arguments: 1 for it. */
int tool_is_stdin(const char *path);
/* The name messages give a FILE argument: "standard input" for "-", else
 * the path itself. */
const char *tool_input_name(const char *path);
/* rio_reader_open(), or rio_reader_open_fd() on standard input for "-"
 * (named "standard input"). A pipe, a FIFO or /dev/stdin works either way:
 * the compression is detected from the bytes read. 0, or the negative code
 * (not reported: name tool_input_name(path) in the message). */
int tool_reader_open(rio_reader **r, const char *path, const rio_reader_opts *opts);
/* 1 when `path` can be read only once, in order: "-", a pipe or FIFO, a
 * character device (/dev/stdin on a terminal, /dev/zero) or a socket. A
 * path that cannot be stat()ed gives 0 (its open reports why). */
int tool_is_stream(const char *path);

/* Installs SIGINT/SIGTERM/SIGHUP handlers that set tool_interrupted. */
extern volatile int tool_interrupted;
void tool_catch_signals(void);

/* Kept for recordio-train only, until it calls lib/json.h and lib/size.h
 * itself (issue 24: the trainer stops compiling tools/): the same as
 * rio__json_number(), rio__json_member() and rio__format_bytes(). The
 * tools call those; remove these with the trainer's last use. */
void tool_json_number(FILE *out, double v, int digits);
void tool_json_member(FILE *out, const char *key, double v, int digits);
const char *tool_format_bytes(char *buf, size_t size, uint64_t bytes);

/* Writes `len` bytes as standard base64 (with padding), no quotes. */
void tool_base64(FILE *out, const void *data, size_t len);

#endif /* RIO_TOOLS_COMMON_H */
