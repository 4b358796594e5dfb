#!/bin/sh
# s3_faults.sh — reading and writing S3 through a fault-injecting proxy
# (tests/s3_proxy.py) in front of a real S3 server (tests/s3_lib.sh):
# connections reset mid-body, truncated bodies, stalls, 503 SlowDown and
# 500 are retried, a broken range resumed, and every record comes through
# exactly once, in order; when the attempts run out the run ends with one
# line naming the URL and the last error. Wrong credentials, a missing
# bucket and a wrong region fail at once: one line, one request. A
# multipart upload that fails is aborted, and the set stays as it was.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/s3_lib.sh"
s3_start

# 3 shards of about 600 KiB, plain and gzip, packed locally and to S3
awk 'BEGIN { for (i = 0; i < 12000; i++) printf "record %06d %0150d\n", i, i }' >"$T/in.txt"
for c in none gzip; do
	expect_exit 0 "$PACK" --from lines --output "$T/loc/$c" --shards 3 --compression $c "$T/in.txt"
	expect_exit 0 "$PACK" --from lines --output "$B/$c" --shards 3 --compression $c "$T/in.txt"
	"$CAT" --format raw "$T/loc/$c" >"$T/$c.local"
done
# small parts: many ranged GETs per shard, for the faults to land in
R="--remote-part-size 64K --remote-stall 1"

# ---- passing faults: retried, resumed, every record once -----------------------
proxy_start --faults reset,truncate,stall,503,500 --every 3 --stall 4
for c in none gzip; do
	expect_exit 0 "$CAT" --format raw $R "$B/$c"
	if cmp -s "$T/$c.local" "$T/out"; then pass; else
		fail "$c: the records read through the faults differ from the local ones"; fi
	expect_exit 0 "$VERIFY" $R "$B/$c"
	expect_match "total: 3 files, 3 OK, 0 failed, 12000 records" "$T/out" "$c: verify"
done
for kind in reset truncate stall 503 500; do
	n=$(proxy_count $kind)
	if [ "$n" -ge 1 ]; then pass; else fail "no '$kind' fault was injected"; fi
done

# the loader (recordio-bench): the same records in the same order as the
# local copy, read at offsets (plain) and as a stream (gzip); no stalls
# (its stall limit is the default 30 s: the tools above show them retried)
proxy_start --faults reset,truncate,503,500 --every 3
for c in none gzip; do
	"$BENCH" --shuffle buffer --seed 9 --dump-order "$T/$c.order.local" "$T/loc/$c" >/dev/null
	expect_exit 0 "$BENCH" --shuffle buffer --seed 9 --dump-order "$T/$c.order" "$B/$c"
	if [ -s "$T/$c.order" ] && cmp -s "$T/$c.order.local" "$T/$c.order"; then pass; else
		fail "$c: the loader's order through the faults differs from the local one"; fi
	expect_match "skipped: +0" "$T/out" "$c: nothing skipped"
done
n=$(proxy_count request)
if [ "$(proxy_count reset)" -ge 1 ] && [ "$(proxy_count 503)" -ge 1 ]; then pass; else
	fail "no faults reached the loader ($n requests)"; fi

# ---- the attempts run out: one line naming the URL and the last error ----------
proxy_start --faults 503 --every 1
S="$B/none.g000001/none-00000-of-00003.tfrecord"
expect_exit 1 "$CAT" --count --remote-attempts 3 "$S"
expect_lines 1 "$T/err" "attempts run out: one line"
expect_match "$S.*503.*SlowDown.*after 3 attempts" "$T/err" "the URL, the status, S3's code, the attempts"
expect_eq 3 "$(proxy_count request)" "3 attempts made"

# ---- permanent errors: one line, one request, no retry ---------------------------
proxy_start
AWS_SECRET_ACCESS_KEY=wrong expect_exit 1 "$CAT" --count "$S"
expect_lines 1 "$T/err" "wrong credentials: one line"
expect_match "$S.*403.*SignatureDoesNotMatch" "$T/err" "wrong credentials named"
expect_eq 1 "$(proxy_count request)" "wrong credentials: no retry"

proxy_start
expect_exit 1 "$CAT" --count "s3://no-such-bucket-here/x.tfrecord"
expect_lines 1 "$T/err" "missing bucket: one line"
expect_match "s3://no-such-bucket-here/x.tfrecord.*404.*NoSuchBucket" "$T/err" "missing bucket named"
expect_eq 1 "$(proxy_count request)" "missing bucket: no retry"

# SeaweedFS takes any region: the proxy answers a wrong one as AWS does
proxy_start --region us-east-1
AWS_REGION=eu-west-3 expect_exit 1 "$CAT" --count "$S"
expect_lines 1 "$T/err" "wrong region: one line"
expect_match "$S.*400.*AuthorizationHeaderMalformed.*us-east-1" "$T/err" "wrong region named, the right one said"
expect_eq 1 "$(proxy_count request)" "wrong region: no retry"
expect_exit 0 "$CAT" --count "$S"
expect_eq 4000 "$(cat "$T/out")" "the right region passes the proxy"

# ---- a multipart upload that fails is aborted; the set stays -----------------------
awk 'BEGIN { s = sprintf("%1000s", ""); for (i = 0; i < 6000; i++) printf "%06d%s\n", i, s }' \
	>"$T/big.txt"
# the third PUT is the second part of the big shard's upload
proxy_start --faults 500 --every 3 --methods PUT
expect_exit 1 "$PACK" --from lines --output "$B/none" --force --remote-part-size 5M \
	--remote-attempts 1 "$T/big.txt"
expect_lines 1 "$T/err" "the failed upload: one line"
expect_match "500.*InternalError" "$T/err" "the failed upload's error"
expect_eq 1 "$(proxy_count 500)" "one part failed"
export AWS_ENDPOINT_URL="$S3_ENDPOINT"
s3_curl "$S3_ENDPOINT/$S3_BUCKET?uploads" >"$T/uploads"
if grep -q '<Upload>' "$T/uploads"; then fail "a multipart upload was left behind"; else pass; fi
s3_curl "$S3_ENDPOINT/$S3_BUCKET?list-type=2&prefix=none.g000002" >"$T/list"
if grep -q '<Key>' "$T/list"; then fail "objects of the failed generation left"; else pass; fi
expect_exit 0 "$CAT" --count "$B/none"
expect_eq 12000 "$(cat "$T/out")" "the set in force after the failed upload"
finish
