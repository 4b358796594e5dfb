#!/bin/sh
# s3_whole.sh — a globally shuffled epoch of uncompressed S3 shards whose
# batches' ranged GETs would carry a record or two each is read from the
# shards fetched whole (loader/remote_whole.h; route "placed/whole", or
# "pipeline/whole" under --skip-damaged): a few GETs a shard, not a GET a
# record, the batches and their order the local copy's in every world size,
# through faults, every CRC checked (a damaged record fails the epoch, or is
# counted skipped), and the ranged GETs again where the spill cannot be
# had or where a GET would carry enough (route.c's estimate: tested on both
# sides with small sets through --remote-part-size). Against a real S3
# server on 127.0.0.1 (tests/s3_lib.sh), requests counted by
# tests/s3_proxy.py.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/s3_lib.sh"
s3_start

# 6000 records of about 170 bytes in 3 shards of about 340 KiB, with .idx
awk 'BEGIN { for (i = 0; i < 6000; i++) printf "record %06d %0150d\n", i, i }' >"$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$T/loc/c" --shards 3 "$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$B/c" --shards 3 "$T/in.txt"

# same_order NAME SET_LOCAL SET_S3 ARGS...: --dump-order of both equal
same_order() {
	name=$1 loc=$2 s3=$3
	shift 3
	expect_exit 0 "$BENCH" "$@" --dump-order "$T/$name.local" "$loc"
	expect_exit 0 "$BENCH" "$@" --dump-order "$T/$name.s3" "$s3"
	if [ -s "$T/$name.s3" ] && cmp -s "$T/$name.local" "$T/$name.s3"; then pass; else
		fail "$name from S3 ($*): the order differs from the local one"; fi
}
# route_is WANT ARGS...: recordio-bench --json ARGS reports route WANT
route_is() {
	route=$1
	shift
	expect_exit 0 "$BENCH" --json "$@"
	expect_match "\"route\": \"$route\"" "$T/out" "route $route ($*)"
}

# ---- the route, and few GETs: 2 epochs of batches of 50 (120 a epoch)
# fetch each shard once, in parts of 64 KiB (6 a shard), besides its open
# and its .idx check; ranged GETs were 120 to 375
o="--shuffle global --seed 3 --batch 50 --epochs 2 --remote-part-size 64K"
proxy_start
same_order order "$T/loc/c" "$B/c" $o
expect_eq 12000 "$(wc -l <"$T/order.s3" | tr -d ' ')" "every record of 2 epochs delivered"
gets=$(grep -c '^request GET .*\.tfrecord$' "$PROXY_LOG")
if [ "$gets" -le 36 ]; then pass; else
	fail "$gets GETs of 3 shards of 340 KB fetched whole in 64K parts (want at most 36)"; fi
proxy_stop
export AWS_ENDPOINT_URL="$S3_ENDPOINT"
route_is placed/whole $o "$B/c"
# the same order in every world size, batch size and seed
for ranks in "0 2" "1 2" "2 3"; do
	set -- $ranks
	same_order world "$T/loc/c" "$B/c" --shuffle global --seed 9 --batch 7 --epochs 2 \
		--rank "$1" --world "$2"
done
# --skip-damaged: the pipeline reads the mappings
route_is pipeline/whole $o --skip-damaged "$B/c"
same_order skip "$T/loc/c" "$B/c" $o --skip-damaged

# with the shard cache the shards are its local copies, read as local files
# are (no spill): the same order
expect_exit 0 "$BENCH" --json $o --shard-cache "$T/sc" "$B/c"
expect_match '"route": "placed/(map|buffered)"' "$T/out" "with --shard-cache: the copies, not a spill"
same_order cached "$T/loc/c" "$B/c" $o --shard-cache "$T/sc"

# ---- the knob, and a spill that cannot be had: the ranged GETs, same order
RIO_REMOTE_WHOLE=never route_is placed/buffered $o "$B/c"
TMPDIR="$T/none" route_is placed/buffered $o "$B/c"
TMPDIR="$T/none" same_order nospill "$T/loc/c" "$B/c" $o
# the bound: 1 MB of shards whole would take over half of a 1 MiB TMPDIR
# (a tmpfs, where this test may mount one): none is fetched, the ranged GETs
mkdir -p "$T/small"
if mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
	TMPDIR="$T/small" route_is placed/buffered $o "$B/c"
	TMPDIR="$T/small" same_order small "$T/loc/c" "$B/c" $o
	expect_eq "" "$(ls -A "$T/small")" "nothing left in the spill's directory"
	umount "$T/small"
else
	echo "not checked: the spill's bound (cannot mount a tmpfs here)"
fi
expect_exit 2 env RIO_REMOTE_WHOLE=sometimes "$BENCH" $o "$B/c"
expect_match "RIO_REMOTE_WHOLE: 'sometimes': want auto, always or never" "$T/err" \
	"a bad RIO_REMOTE_WHOLE named"

# ---- route.c's estimate on both sides, with 64K parts (whole below 16K a
# GET): 60 records of 20 KB in 3 shards, batches of 4, lie 300 KB apart: a
# GET each, 20 KB: ranged GETs; 10 KB records: fetched whole
awk 'BEGIN { for (i = 0; i < 60; i++) printf "record %06d %020000d\n", i, i }' >"$T/big.txt"
awk 'BEGIN { for (i = 0; i < 60; i++) printf "record %06d %010000d\n", i, i }' >"$T/mid.txt"
for s in big mid; do
	expect_exit 0 "$PACK" --from lines --output "$T/loc/$s" --shards 3 "$T/$s.txt"
	expect_exit 0 "$PACK" --from lines --output "$B/$s" --shards 3 "$T/$s.txt"
done
w="--shuffle global --seed 5 --batch 4 --epochs 1 --remote-part-size 64K"
route_is placed/buffered $w "$B/big"
route_is placed/whole $w "$B/mid"
same_order big "$T/loc/big" "$B/big" $w
same_order mid "$T/loc/mid" "$B/mid" $w

# ---- through resets, truncated bodies, 503 and 500: retried, every record
# once, in the local order
same_order_through_faults 3 "fetched whole" $o "$B/c"
proxy_stop
export AWS_ENDPOINT_URL="$S3_ENDPOINT"

# ---- every CRC checked: a record's data damaged in the middle shard (a
# "directory" of raw objects): the epoch fails naming it, or with
# --skip-damaged the record is counted skipped and the rest delivered
mkdir -p "$T/dmg"
cp "$T/loc/c"-* "$T/dmg/"
f=$(ls "$T/dmg"/*-00001-of-00003.tfrecord)
printf 'X' | dd of="$f" bs=1 seek=5000 conv=notrunc 2>/dev/null
for p in "$T/dmg"/*; do
	expect_eq 200 "$(s3_curl -o /dev/null -w '%{http_code}' -T "$p" \
		"$S3_ENDPOINT/$S3_BUCKET/dmg/$(basename "$p")")" "uploaded $(basename "$p")"
done
expect_exit 1 "$BENCH" $o "$B/dmg/"
expect_match "dmg/c-00001-of-00003\.tfrecord: offset [0-9]+.*CRC" "$T/err" "the damaged record named"
expect_exit 0 "$BENCH" $o --skip-damaged --dump-order "$T/dmg.s3" "$B/dmg/"
expect_exit 0 "$BENCH" $o --skip-damaged --dump-order "$T/dmg.local" "$T/dmg/"
if [ -s "$T/dmg.s3" ] && cmp -s "$T/dmg.local" "$T/dmg.s3"; then pass; else
	fail "a damaged shard fetched whole: the order differs from the local one"; fi
expect_match "skipped: +2" "$T/out" "the damaged record skipped, once an epoch"
finish
