#!/bin/sh
# s3_coalesce.sh — the loader reads a globally shuffled epoch of
# uncompressed S3 shards with few requests: the records of a batch that lie
# within 256 KiB of each other in one shard come in one ranged GET
# (loader/source.h's read_many, rio__remote_read_many), not a GET a record,
# and the batches and their order stay the local copy's, through faults
# too; a read that runs out of attempts is one line naming the URL. A
# loader's shards share one remote client: one engine thread however many
# shards (tests/s3_engines). Against a real S3 server on 127.0.0.1
# (tests/s3_lib.sh), the requests counted by tests/s3_proxy.py.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/s3_lib.sh"
s3_start
# the ranged GETs, which a globally shuffled epoch of sets this small would
# not take (they are fetched whole: tests/s3_whole.sh)
export RIO_REMOTE_WHOLE=never

# 6000 records of about 170 bytes in 3 shards of about 340 KiB, with .idx
awk 'BEGIN { for (i = 0; i < 6000; i++) printf "record %06d %0150d\n", i, i }' >"$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$T/loc/c" --shards 3 "$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$B/c" --shards 3 "$T/in.txt"

# order_from_s3 NAME ARGS...: recordio-bench ARGS --dump-order of the local
# copy ($T/NAME.local) and of the S3 one ($T/NAME.s3) give the same order
order_from_s3() {
	name=$1
	shift
	expect_exit 0 "$BENCH" "$@" --dump-order "$T/$name.local" "$T/loc/c"
	expect_exit 0 "$BENCH" "$@" --dump-order "$T/$name.s3" "$B/c"
	if [ -s "$T/$name.s3" ] && cmp -s "$T/$name.local" "$T/$name.s3"; then pass; else
		fail "$name from S3 ($*): the order differs from the local one"; fi
}

# ---- one epoch, globally shuffled, batches of 50: the local order, and
# about one GET per shard per batch (each shard's records of a batch are
# within 256 KiB of each other), besides a few at each shard's open (its
# first bytes, and the headers that check its .idx, read together); a GET a
# record would be 6000
proxy_start
o="--shuffle global --seed 3 --batch 50 --epochs 1"
order_from_s3 order $o
expect_eq 6000 "$(wc -l <"$T/order.s3" | tr -d ' ')" "every record delivered"
gets=$(grep -c '^request GET .*\.tfrecord$' "$PROXY_LOG")
batches=120
most=$((batches * 3 + 3 * 5))
if [ "$gets" -ge $batches ] && [ "$gets" -le $most ]; then pass; else
	fail "$gets GETs of the shards for 6000 records in $batches batches (want $batches to $most)"; fi
# opening the set reads each shard's .idx with one GET through the loader's
# client, which also says whether it is there: no HEAD before it
expect_eq 0 "$(proxy_count 'request HEAD')" "no HEAD of a sidecar at open"
expect_eq 3 "$(grep -c '^request GET .*\.tfrecord\.idx$' "$PROXY_LOG")" "one GET of each .idx"

# ---- shard order reads ahead: batches claimed together (about
# part size x inflight / 2 bytes a worker's claim), their contiguous bytes
# fetched in part-size GETs, not a GET a batch: 3 shards of 340 KB in
# a few GETs each (open, its .idx's check, the read), where 120 batches
# were 120 GETs
proxy_start
order_from_s3 order1 --shuffle none --batch 50 --epochs 1
gets=$(grep -c '^request GET .*\.tfrecord$' "$PROXY_LOG")
if [ "$gets" -le 15 ]; then pass; else
	fail "$gets GETs of the shards for 3 shards of 340 KB in shard order (want at most 15)"; fi

# ---- the check of each shard's .idx at open reads the headers of its
# first and last records (the middle one's GET cost a store that reads
# whole chunks as much as a part: loader/dataset.c). In shard order at one
# rank the open's GET takes the shard's first part (8 MiB: all of these 3
# shards of 1.2 MB), which serves the check and the epoch's read: 3 GETs in
# all, where the check's and the read's were 3 more a shard
awk 'BEGIN { for (i = 0; i < 6000; i++) printf "record %06d %0580d\n", i, i }' >"$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$T/loc/w" --shards 3 "$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$B/w" --shards 3 "$T/in.txt"
proxy_start
expect_exit 0 "$BENCH" --shuffle none --batch 50 --dump-order "$T/w.s3" "$B/w"
expect_exit 0 "$BENCH" --shuffle none --batch 50 --dump-order "$T/w.local" "$T/loc/w"
if [ -s "$T/w.s3" ] && cmp -s "$T/w.local" "$T/w.s3"; then pass; else
	fail "wide shards from S3: the order differs from the local one"; fi
expect_eq 3 "$(grep -c '^request GET .*\.tfrecord$' "$PROXY_LOG")" \
	"3 shards of 1.2 MB in shard order: one GET a shard, the open's of its first part"

# ---- with 64 KiB parts the open's GET is the shard's first part, and the
# epoch asks for the others: per shard that GET, one for the check of its
# last record's header (in the last part) and one for each part after the
# first, where the first part had a GET of its own too
first_gets=0
for f in "$T"/loc/c-*.tfrecord; do
	first_gets=$((first_gets + ($(wc -c <"$f") + 65535) / 65536 + 1))
done
proxy_start
expect_exit 0 "$BENCH" --shuffle none --batch 50 --remote-part-size 64K \
	--dump-order "$T/first.s3" "$B/c"
expect_exit 0 "$BENCH" --shuffle none --batch 50 --dump-order "$T/first.local" "$T/loc/c"
if [ -s "$T/first.s3" ] && cmp -s "$T/first.local" "$T/first.s3"; then pass; else
	fail "shard order with the open's first parts: the order differs from the local one"; fi
expect_eq $first_gets "$(grep -c '^request GET .*\.tfrecord$' "$PROXY_LOG")" \
	"shard order, 64 KiB parts: the open's GET serves the first part"
# the first parts are handed over to the epoch's parts, buffers and all:
# with 2 in flight (room for 2 first parts) more buffers go round than
# the window of 2 + 2 x 2 workers keeps for the next parts
expect_exit 0 "$BENCH" --shuffle none --batch 50 --remote-part-size 64K --remote-inflight 2 \
	--workers 2 --dump-order "$T/first2.s3" "$B/c"
if [ -s "$T/first2.s3" ] && cmp -s "$T/first.local" "$T/first2.s3"; then pass; else
	fail "shard order with 2 first parts handed over: the order differs from the local one"; fi

# ---- the same through resets, truncated bodies, 503 and 500: retried, every
# record once, in the local order
same_order_through_faults 5 "global shuffle" $o "$B/c"

# ---- shard order reads the epoch's bytes ahead in aligned parts
# (loader/parts.c), copied out by the workers' claims: with 64 KiB parts
# (6 a shard, claims of about a part), the local order over 2 epochs, through
# faults too (retried, resumed where the body broke), and a part whose
# attempts run out fails the epoch with the read's one line
p="--shuffle none --batch 50 --epochs 2 --remote-part-size 64K"
"$BENCH" $p --dump-order "$T/order.local" "$T/loc/c" >/dev/null
same_order_through_faults 4 "shard order in parts" $p "$B/c"
proxy_start --faults 503 --every 25
expect_exit 1 "$BENCH" $p --remote-attempts 1 "$B/c"
expect_lines 1 "$T/err" "shard order: a part that ran out of attempts: one line"
expect_match "s3://$S3_BUCKET/c\.g000001/c-0000[0-2]-of-00003\.tfrecord.*HTTP 503 \(SlowDown\)" \
	"$T/err" "shard order: the line names the URL, the status and the code"

# ---- shard order stopped mid-epoch (its parts in flight dropped) and
# resumed from the saved state (parts from the batch resumed at on): the
# local copy's records, in the order of one uninterrupted epoch
proxy_stop
export AWS_ENDPOINT_URL="$S3_ENDPOINT"
expect_exit 0 "$BIN/tests/s3_resume" "$B/c" 50 7
mv "$T/out" "$T/resume.s3"
expect_exit 0 "$BIN/tests/s3_resume" "$T/loc/c" 50 7
"$BENCH" --shuffle none --batch 50 --dump-order "$T/resume.order" "$T/loc/c" >/dev/null
expect_eq 6000 "$(wc -l <"$T/resume.s3" | tr -d ' ')" "every record once, resumed from S3"
if cmp -s "$T/out" "$T/resume.s3" && cut -d' ' -f1,2 "$T/out" | cmp -s - "$T/resume.order"; then
	pass; else fail "shard order resumed from S3: not the local copy's records in order"; fi

# ---- a batch larger than the parts' window (2000 records: 5 parts of 64
# KiB and more, where 1 in flight + 2 x 2 workers would be asked for): the
# window grows to the largest claim, which would otherwise wait for ever
"$BENCH" --shuffle none --batch 2000 --dump-order "$T/big.local" "$T/loc/c" >/dev/null
expect_exit 0 timeout -s KILL 120 "$BENCH" --shuffle none --batch 2000 --remote-part-size 64K \
	--remote-inflight 1 --dump-order "$T/big.s3" "$B/c"
if [ -s "$T/big.s3" ] && cmp -s "$T/big.local" "$T/big.s3"; then pass; else
	fail "batches larger than the parts' window: not the local order"; fi

# ---- recordio-bench --json says how many ranged GETs were in flight:
# some, never more than --remote-inflight; none for the local copy
inflight() { # the JSON's remote_gets_in_flight, remote_get_s
	sed -n 's/.*"remote_get_s": \([0-9.]*\), "remote_gets_in_flight": \([0-9.]*\).*/\2 \1/p' "$T/out"
}
expect_exit 0 "$BENCH" --json $p --remote-inflight 2 "$B/c"
if inflight | awk '{ exit !($1 > 0 && $1 <= 2 && $2 > 0) }'; then pass; else
	fail "GETs in flight from S3 with --remote-inflight 2: '$(inflight)' (want 0 < n <= 2 over some time)"; fi
expect_exit 0 "$BENCH" --json $p "$T/loc/c"
expect_eq "0 0" "$(inflight | awk '{ print $1 + 0, $2 + 0 }')" "no GETs in flight for local shards"

# ---- the loader's remote options (recordio-bench --remote-*), and a read
# that runs out of attempts mid-epoch: one line naming the shard's URL, the
# HTTP status and S3's code, as the tools say it (the 40th GET answers 503:
# opening the set takes 11, the epoch about 360; it is tried once)
proxy_start --faults 503 --every 40
expect_exit 1 "$BENCH" $o --remote-attempts 1 "$B/c"
expect_lines 1 "$T/err" "a read that ran out of attempts: one line"
expect_match "s3://$S3_BUCKET/c\.g000001/c-0000[0-2]-of-00003\.tfrecord: offset [0-9]+: remote storage error: HTTP 503 \(SlowDown\)" \
	"$T/err" "the read's line names the URL, the offset, the status and the code"
expect_exit 2 "$BENCH" --remote-inflight 0 "$B/c"
expect_match "remote-inflight" "$T/err" "--remote-inflight 0 refused"
proxy_stop
export AWS_ENDPOINT_URL="$S3_ENDPOINT"

# ---- 12 shards, one loader: one remote client's engine thread, not 12
expect_exit 0 "$PACK" --from lines --output "$B/many" --shards 12 "$T/in.txt"
expect_exit 0 "$BIN/tests/s3_engines" "$B/many" 100
expect_eq "records 6000 engines 1" "$(cat "$T/out")" "12 remote shards read by one loader"
finish
