/*
 * feature_spec.c — finding the input and label features in the data's first
 * record and turning them into loader column specs. The loader then checks
 * every record against these specs (a record that does not match is an
 * error under FAIL).
 */
#include "config.h"
#include "feature_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "image (bytes[1]), label (int64[1])": what a record holds, for messages. */
static void list_features(const void *data, size_t size, char *out, size_t outlen)
{
	rio_example_iter it;
	rio_feature f;
	size_t used = 0;
	out[0] = 0;
	rio_example_iter_init(&it, data, size);
	while (rio_example_iter_next(&it, &f) == 1 && used < outlen) {
		int n = snprintf(out + used, outlen - used, "%s%.*s (%s[%zu])", used ? ", " : "",
		                 (int)f.name_len, f.name, rio_feature_kind_name(f.kind), f.count);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!out[0])
		snprintf(out, outlen, "no features");
}

static int first_record(const char *shards, rio_reader **reader, rio_record *rec, char *path,
                        size_t pathlen, char *err, size_t errlen)
{
	rio_shardset set;
	rio_error e = {0};
	int rc = rio_shardset_expand(shards, &set, &e);
	if (rc < 0) {
		snprintf(err, errlen, "%s", e.message[0] ? e.message : rio_strerror(rc));
		return -1;
	}
	snprintf(path, pathlen, "%s", set.paths[0]);
	rio_shardset_free(&set);
	rc = rio_reader_open(reader, path, NULL);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, rio_strerror(rc));
		return -1;
	}
	rc = rio_reader_next(*reader, rec);
	if (rc <= 0) {
		const rio_error *re = rio_reader_error(*reader);
		snprintf(err, errlen, "%s", rc == 0 ? "" : re->message);
		if (rc == 0)
			snprintf(err, errlen, "%s: no records", path);
		rio_reader_close(*reader);
		*reader = NULL;
		return -1;
	}
	return 0;
}

int tr_features_resolve(const char *shards, char *const *x, int nx, const char *const *ids,
                        int nids, const char *y, rio_column_spec *specs, char *err,
                        size_t errlen)
{
	rio_reader *r = NULL;
	rio_record rec;
	char path[4096], have[1024];
	if (first_record(shards, &r, &rec, path, sizeof path, err, errlen) < 0)
		return -1;
	int rc = 0, label = nx + nids;
	for (int i = 0; i <= label && rc == 0; i++) {
		const char *name = i < nx ? x[i] : i < label ? ids[i - nx] : y;
		const char *option = i < nx ? "x" : i < label ? "embed" : "y";
		rio_feature f;
		int found = rio_example_find(rec.data, rec.size, name, &f);
		rio_column_spec *s = &specs[i];
		memset(s, 0, sizeof *s);
		snprintf(s->name, sizeof s->name, "%s", name);
		if (found < 0) {
			list_features(rec.data, rec.size, have, sizeof have);
			snprintf(err, errlen, "--%s %s: no such feature in %s (record 0 has: %s)", option,
			         name, path, have);
			rc = -1;
		} else if (i == label) {
			if (f.kind != RIO_FEATURE_INT64 || f.count != 1) {
				snprintf(err, errlen,
				         "--y %s: the label must be one int64 (in %s it is %s[%zu])", name,
				         path, rio_feature_kind_name(f.kind), f.count);
				rc = -1;
			}
			s->type = RIO_DTYPE_I64;
			s->length = 1;
		} else if (i >= nx) { /* --embed: k ids, as many as this record has */
			if (f.kind != RIO_FEATURE_INT64 || f.count == 0) {
				snprintf(err, errlen, "--embed %s: ids must be int64 (in %s it is %s[%zu])",
				         name, path, rio_feature_kind_name(f.kind), f.count);
				rc = -1;
			}
			s->type = RIO_DTYPE_I64;
			s->length = f.count;
		} else if (f.kind == RIO_FEATURE_BYTES) {
			size_t cursor = 0, len = 0;
			const uint8_t *v;
			if (f.count != 1 || rio_feature_bytes_next(&f, &cursor, &v, &len) != 1 ||
			    len == 0) {
				snprintf(err, errlen,
				         "--x %s: a bytes input must hold one non-empty value (in %s it "
				         "holds %zu)",
				         name, path, f.count);
				rc = -1;
			}
			s->type = RIO_DTYPE_F32;
			s->length = len;
			s->scale = 1.0f / 255.0f;
		} else if (f.kind == RIO_FEATURE_FLOAT || f.kind == RIO_FEATURE_INT64) {
			if (f.count == 0) {
				snprintf(err, errlen, "--x %s: the feature is empty in %s", name, path);
				rc = -1;
			}
			s->type = RIO_DTYPE_F32;
			s->length = f.count;
		} else {
			snprintf(err, errlen, "--x %s: the feature has no values in %s", name, path);
			rc = -1;
		}
	}
	rio_reader_close(r);
	return rc;
}

size_t tr_features_width(const rio_column_spec *specs, int nx)
{
	size_t n = 0;
	for (int i = 0; i < nx; i++)
		n += specs[i].length;
	return n;
}
