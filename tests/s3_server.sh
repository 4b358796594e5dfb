#!/bin/sh
# s3_server.sh — a real S3 server on 127.0.0.1 for the Python package's
# tests (python/tests/test_s3.py), through tests/s3_lib.sh's s3_serve:
# prints one line "ENDPOINT BUCKET KEY SECRET REGION" once it stores
# objects, serves until its standard input closes, then stops the server.
# Where none can be had (no SeaweedFS `weed`, no curl) it prints a line
# starting "skip:" and exits 77.
. "$(dirname "$0")/s3_lib.sh"
s3_serve
echo "$S3_ENDPOINT $S3_BUCKET $S3_KEY $S3_SECRET $S3_REGION"
cat >/dev/null
