/*
 * aws_config.h — the settings the AWS tools take, read as they read them:
 * credentials, region and endpoint from the environment and the shared
 * files ~/.aws/credentials and ~/.aws/config.
 *
 *   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+
 *                AWS_SESSION_TOKEN); else the profile's aws_access_key_id,
 *                aws_secret_access_key (and aws_session_token) in the
 *                credentials file ([NAME]), then in the config file
 *                ([profile NAME], or [default]); else none: anonymous.
 *   profile      AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default". A
 *                profile named in the environment must exist in one of
 *                the files (as the AWS CLI insists).
 *   files        AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, else
 *                $HOME/.aws/credentials and $HOME/.aws/config.
 *   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`,
 *                else us-east-1.
 *   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
 *                `endpoint_url`, else none (AWS itself).
 * Not read: credential_process, SSO, web identity, role assumption, the
 * instance metadata service (export the keys they give).
 */
#ifndef RIO_REMOTE_AWS_CONFIG_H
#define RIO_REMOTE_AWS_CONFIG_H

#include "internal.h"

#include <stddef.h>

typedef struct rio__aws_config {
	int anonymous;          /* no credentials: unsigned requests          */
	char access_key[256];
	char secret_key[256];
	char session_token[8192]; /* "" when none                           */
	char region[64];
	char endpoint[1024];    /* "" for AWS; no trailing '/'               */
	char source[1200];      /* where the credentials came from, for
	                         * messages ("the environment", "FILE [x]") */
} rio__aws_config;

/* Reads the settings (see above). 0, or a negative code with a one-line
 * message naming the variable or file in `err`: a profile named in the
 * environment that neither file has, a profile with an access key but no
 * secret, a file that exists but cannot be read, a value too long. */
int rio__aws_config_load(rio__aws_config *c, rio_error *err);

/* The value of `key` in section `section` (the text between the brackets,
 * blanks around it ignored) of INI text[0, len): copied, blanks trimmed,
 * to out (cap bytes, NUL-terminated). Returns 1 when found, 0 when not,
 * -E2BIG when the value does not fit. Lines "key = value"; '#' and ';'
 * start comment lines; lines that start with a blank continue a nested
 * value ("s3 =" followed by indented settings) and are not keys of the
 * section. The last occurrence wins. Never reads outside text[0, len). */
int rio__ini_get(const char *text, size_t len, const char *section, const char *key, char *out,
                 size_t cap);
/* 1 when the INI text has section `section`. */
int rio__ini_has_section(const char *text, size_t len, const char *section);

#endif /* RIO_REMOTE_AWS_CONFIG_H */
