/*
 * aws_config.c — credentials, region and endpoint as the AWS tools find
 * them (aws_config.h), and the INI reading they need.
 */
#include "config.h"
#include "aws_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNK RIO__UNKNOWN
#define INI_MAX (1u << 20) /* a larger credentials file is refused */

/* ---- INI text ---------------------------------------------------------- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* [*b, *e) without blanks at either end. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && is_blank(**b))
		(*b)++;
	while (*e > *b && is_blank((*e)[-1]))
		(*e)--;
}

/* Calls fn for every "key = value" line with the section it is in;
 * stops when fn returns non-zero and returns that. */
typedef int (*ini_fn)(void *arg, const char *sec, size_t seclen, const char *key, size_t keylen,
                      const char *val, size_t vallen);

static int ini_walk(const char *text, size_t len, ini_fn fn, void *arg)
{
	const char *p = text, *end = text + len;
	const char *sec = NULL;
	size_t seclen = 0;
	int in_section = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *b = p, *e = le;
		int continued = p < le && is_blank(*p);
		p = nl ? nl + 1 : end;
		trim(&b, &e);
		if (b == e || *b == '#' || *b == ';' || continued)
			continue;
		if (*b == '[') {
			const char *close = memchr(b, ']', (size_t)(e - b));
			in_section = close != NULL;
			if (close) {
				const char *sb = b + 1, *se = close;
				trim(&sb, &se);
				sec = sb;
				seclen = (size_t)(se - sb);
			}
			continue;
		}
		const char *eq = memchr(b, '=', (size_t)(e - b));
		if (!eq || !in_section)
			continue;
		const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
		trim(&kb, &ke);
		trim(&vb, &ve);
		int rc = fn(arg, sec, seclen, kb, (size_t)(ke - kb), vb, (size_t)(ve - vb));
		if (rc)
			return rc;
	}
	return 0;
}

struct ini_query {
	const char *section, *key;
	char *out;
	size_t cap;
	int found; /* 1 found, -E2BIG too long */
	int section_seen;
};

static int same(const char *a, size_t n, const char *z)
{
	return strlen(z) == n && !memcmp(a, z, n);
}

static int ini_query_fn(void *arg, const char *sec, size_t seclen, const char *key, size_t keylen,
                        const char *val, size_t vallen)
{
	struct ini_query *q = arg;
	if (!same(sec, seclen, q->section))
		return 0;
	q->section_seen = 1;
	if (!q->key || !same(key, keylen, q->key))
		return 0;
	if (vallen >= q->cap) {
		q->found = -E2BIG;
		return 0;
	}
	memcpy(q->out, val, vallen);
	q->out[vallen] = '\0';
	q->found = 1; /* the last occurrence wins: go on */
	return 0;
}

int rio__ini_get(const char *text, size_t len, const char *section, const char *key, char *out,
                 size_t cap)
{
	struct ini_query q = {section, key, out, cap, 0, 0};
	if (!cap)
		return -E2BIG;
	ini_walk(text, len, ini_query_fn, &q);
	return q.found;
}

/* A section with no keys is a section too: looked for on its own. */
int rio__ini_has_section(const char *text, size_t len, const char *section)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *b = p, *e = nl ? nl : end;
		int continued = p < e && is_blank(*p);
		p = nl ? nl + 1 : end;
		trim(&b, &e);
		if (continued || b == e || *b != '[')
			continue;
		const char *close = memchr(b, ']', (size_t)(e - b));
		if (!close)
			continue;
		const char *sb = b + 1, *se = close;
		trim(&sb, &se);
		if (same(sb, (size_t)(se - sb), section))
			return 1;
	}
	return 0;
}

/* ---- the files and the environment ---------------------------------------- */

/* A shared file: its path and text (NULL when absent). */
struct shared_file {
	char path[1024];
	char *text;
	size_t len;
};

static int file_path(struct shared_file *f, const char *env, const char *name, rio_error *err)
{
	const char *v = getenv(env), *home = getenv("HOME");
	int n;
	if (v && *v)
		n = snprintf(f->path, sizeof f->path, "%s", v);
	else if (home && *home)
		n = snprintf(f->path, sizeof f->path, "%s/.aws/%s", home, name);
	else
		n = 0, f->path[0] = '\0';
	if (n < 0 || (size_t)n >= sizeof f->path)
		return rio__error_set(err, -ENAMETOOLONG, env, UNK, UNK, "the path is too long");
	return 0;
}

static int file_read(struct shared_file *f, rio_error *err)
{
	f->text = NULL;
	f->len = 0;
	if (!f->path[0])
		return 0;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR
		               ? 0
		               : rio__error_set(err, -errno, f->path, UNK, UNK, NULL);
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size > INI_MAX)
		rc = -EINVAL;
	else if (!(f->text = malloc((size_t)st.st_size + 1)))
		rc = -ENOMEM;
	while (rc == 0 && f->len < (size_t)st.st_size) {
		ssize_t n = read(fd, f->text + f->len, (size_t)st.st_size - f->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		f->len += (size_t)n;
	}
	close(fd);
	if (rc == 0 && f->text)
		f->text[f->len] = '\0';
	if (rc < 0) {
		free(f->text);
		f->text = NULL;
		return rio__error_set(err, rc, f->path, UNK, UNK,
		                      rc == -EINVAL ? "not a regular file of at most 1 MiB" : NULL);
	}
	return 0;
}

/* One setting of the profile: in the credentials file's [P] first when
 * `creds` is given, then in the config file's [profile P] ([default] for
 * the default profile, which "[profile default]" may also name). */
static int profile_get(const struct shared_file *creds, const struct shared_file *conf,
                       const char *profile, const char *key, char *out, size_t cap,
                       const char **from, rio_error *err)
{
	char sec[300];
	int rc = 0;
	if (creds && creds->text &&
	    (rc = rio__ini_get(creds->text, creds->len, profile, key, out, cap)) != 0) {
		*from = creds->path;
	} else if (conf->text) {
		snprintf(sec, sizeof sec, "profile %s", profile);
		rc = rio__ini_get(conf->text, conf->len, sec, key, out, cap);
		if (rc == 0 && !strcmp(profile, "default"))
			rc = rio__ini_get(conf->text, conf->len, "default", key, out, cap);
		*from = conf->path;
	}
	if (rc == -E2BIG)
		return rio__error_set(err, -E2BIG, *from, UNK, UNK, "[%s] %s: the value is too long",
		                      profile, key);
	return rc;
}

static int env_copy(const char *name, char *out, size_t cap, rio_error *err)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	if (strlen(v) >= cap)
		return rio__error_set(err, -E2BIG, name, UNK, UNK, "the value is too long");
	strcpy(out, v);
	return 1;
}

static int load_credentials(rio__aws_config *c, const struct shared_file *creds,
                            const struct shared_file *conf, const char *profile,
                            rio_error *err)
{
	int a = env_copy("AWS_ACCESS_KEY_ID", c->access_key, sizeof c->access_key, err);
	int s = a < 0 ? a : env_copy("AWS_SECRET_ACCESS_KEY", c->secret_key, sizeof c->secret_key, err);
	if (a < 0 || s < 0)
		return a < 0 ? a : s;
	if (a || s) {
		if (!(a && s))
			return rio__error_set(err, -EINVAL, a ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID",
			                      UNK, UNK, "not set, while %s is",
			                      a ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY");
		int t = env_copy("AWS_SESSION_TOKEN", c->session_token, sizeof c->session_token, err);
		snprintf(c->source, sizeof c->source, "the environment (AWS_ACCESS_KEY_ID)");
		return t < 0 ? t : 0;
	}
	const char *from = "";
	a = profile_get(creds, conf, profile, "aws_access_key_id", c->access_key,
	                sizeof c->access_key, &from, err);
	if (a < 0)
		return a;
	if (a == 0) {
		c->anonymous = 1;
		snprintf(c->source, sizeof c->source, "no credentials: anonymous requests");
		return 0;
	}
	snprintf(c->source, sizeof c->source, "%s [%s]", from, profile);
	/* the secret and token from the same file as the key */
	const struct shared_file *only = !strcmp(from, creds->path) ? creds : NULL;
	const struct shared_file none = {{0}, NULL, 0};
	s = profile_get(only, only ? &none : conf, profile, "aws_secret_access_key", c->secret_key,
	                sizeof c->secret_key, &from, err);
	if (s <= 0)
		return s < 0 ? s
		             : rio__error_set(err, -EINVAL, c->source, UNK, UNK,
		                              "aws_access_key_id without aws_secret_access_key");
	int t = profile_get(only, only ? &none : conf, profile, "aws_session_token", c->session_token,
	                    sizeof c->session_token, &from, err);
	return t < 0 ? t : 0;
}

int rio__aws_config_load(rio__aws_config *c, rio_error *err)
{
	memset(c, 0, sizeof *c);
	struct shared_file creds, conf;
	creds.text = conf.text = NULL;
	int rc = file_path(&creds, "AWS_SHARED_CREDENTIALS_FILE", "credentials", err);
	if (rc == 0)
		rc = file_path(&conf, "AWS_CONFIG_FILE", "config", err);
	if (rc == 0)
		rc = file_read(&creds, err);
	if (rc == 0)
		rc = file_read(&conf, err);
	const char *profile = getenv("AWS_PROFILE"), *named = "AWS_PROFILE";
	if (!profile || !*profile)
		profile = getenv("AWS_DEFAULT_PROFILE"), named = "AWS_DEFAULT_PROFILE";
	if (!profile || !*profile)
		profile = "default", named = NULL;
	if (rc == 0 && strlen(profile) > 200)
		rc = rio__error_set(err, -E2BIG, named, UNK, UNK, "the profile name is too long");
	if (rc == 0 && named) {
		char sec[300];
		snprintf(sec, sizeof sec, "profile %s", profile);
		int there = (creds.text && rio__ini_has_section(creds.text, creds.len, profile)) ||
		            (conf.text && (rio__ini_has_section(conf.text, conf.len, sec) ||
		                           (!strcmp(profile, "default") &&
		                            rio__ini_has_section(conf.text, conf.len, "default"))));
		if (!there)
			rc = rio__error_set(err, -EINVAL, named, UNK, UNK,
			                    "the profile '%s' is in neither %s nor %s", profile,
			                    creds.path[0] ? creds.path : "~/.aws/credentials",
			                    conf.path[0] ? conf.path : "~/.aws/config");
	}
	if (rc == 0)
		rc = load_credentials(c, &creds, &conf, profile, err);
	const char *from = "";
	if (rc == 0 && (rc = env_copy("AWS_REGION", c->region, sizeof c->region, err)) == 0 &&
	    (rc = env_copy("AWS_DEFAULT_REGION", c->region, sizeof c->region, err)) == 0 &&
	    (rc = profile_get(NULL, &conf, profile, "region", c->region, sizeof c->region, &from,
	                      err)) == 0)
		strcpy(c->region, "us-east-1");
	if (rc > 0)
		rc = 0;
	if (rc == 0 &&
	    (rc = env_copy("AWS_ENDPOINT_URL_S3", c->endpoint, sizeof c->endpoint, err)) == 0 &&
	    (rc = env_copy("AWS_ENDPOINT_URL", c->endpoint, sizeof c->endpoint, err)) == 0)
		rc = profile_get(NULL, &conf, profile, "endpoint_url", c->endpoint, sizeof c->endpoint,
		                 &from, err);
	if (rc > 0)
		rc = 0;
	size_t n = strlen(c->endpoint);
	while (n && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = '\0';
	free(creds.text);
	free(conf.text);
	return rc;
}
