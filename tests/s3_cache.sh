#!/bin/sh
# s3_cache.sh — the loader's shard cache on local disk (--shard-cache DIR,
# --shard-cache-limit SIZE; loader/shard_cache.h) with shards in a real S3
# server (tests/s3_lib.sh), read through recordio-bench: shards downloaded
# once and then read from DIR, the same records in the same order as from
# the local copy; a limit smaller than one shard streams it (no deadlock,
# nothing cached); eviction never deletes a copy another process reads, nor
# a file the cache did not download; a download killed mid-way is never
# served, and its .part is deleted by the next run.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/s3_lib.sh"
s3_start
C="$T/cache"

# 180000-byte shards: x (3 of them), y (2), z (1)
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "record %06d %0150d\n", i, i }' >"$T/x.txt"
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "record %06d %0150d\n", i, i }' >"$T/y.txt"
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "record %06d %0150d\n", i, i }' >"$T/z.txt"
for s in x:3 y:2 z:1; do
	n=${s%:*}
	expect_exit 0 "$PACK" --from lines --output "$T/loc/$n" --shards ${s#*:} "$T/$n.txt"
	expect_exit 0 "$PACK" --from lines --output "$B/$n" --shards ${s#*:} "$T/$n.txt"
done
# x globally shuffled (from the copies); y and z, of which some shards are
# read from the network, buffer-shuffled (a global shuffle from the
# network reads record by record)
ORDER_X="--shuffle global --seed 3 --epochs 2"
ORDER="--shuffle buffer --seed 3 --epochs 2"
"$BENCH" $ORDER_X --dump-order "$T/x.local" "$T/loc/x" >/dev/null
for n in y z; do "$BENCH" $ORDER --dump-order "$T/$n.local" "$T/loc/$n" >/dev/null; done

# same_order NAME WHAT: $T/order is NAME's local order
same_order() {
	if [ -s "$T/order" ] && cmp -s "$T/$1.local" "$T/order"; then pass; else
		fail "$2: the order differs from the local copy's"; fi
}
# copies: the cache's complete copies
copies() { ls "$C" | grep -c '^rio-[0-9a-f]*\.shard$'; }
# shard_gets: GETs of shard objects the proxy saw (not listings or .idx)
shard_gets() { grep -c '^request GET .*\.tfrecord$' "$PROXY_LOG"; }
idx_gets() { grep -c '^request GET .*\.idx$' "$PROXY_LOG"; }

# ---- downloaded once, then read from the local disk ------------------------------
proxy_start
expect_exit 0 "$BENCH" $ORDER_X --dump-order "$T/order" --shard-cache "$C" "$B/x"
same_order x "first run through the cache"
expect_eq 3 "$(copies)" "3 copies"
first=$(shard_gets)
proxy_start
expect_exit 0 "$BENCH" $ORDER_X --dump-order "$T/order" --shard-cache "$C" "$B/x"
same_order x "second run from the cache"
# the second run lists the set (each shard's size and ETag, which name its
# copy) and reads the copies: no GET of a shard or an .idx
expect_eq 0 "$(shard_gets)" "second run: no GET of a shard (the listing names the copies)"
expect_eq 0 "$(idx_gets)" "second run: no GET of an .idx (read from its copy)"
if [ "$first" -ge 3 ]; then pass; else fail "the first run downloaded nothing ($first GETs)"; fi
for f in "$C"/rio-*.shard; do
	if cmp -s "$f" "$T/loc/x-00000-of-00003.tfrecord" || cmp -s "$f" "$T/loc/x-00001-of-00003.tfrecord" ||
		cmp -s "$f" "$T/loc/x-00002-of-00003.tfrecord"; then pass; else fail "$f is no shard of x"; fi
done

# ---- compressed shards: a later run streams the copies, not the network ----------
expect_exit 0 "$PACK" --from lines --output "$T/loc/w" --shards 2 --compression lz4 "$T/y.txt"
expect_exit 0 "$PACK" --from lines --output "$B/w" --shards 2 --compression lz4 "$T/y.txt"
"$BENCH" $ORDER --dump-order "$T/w.local" "$T/loc/w" >/dev/null
proxy_start
expect_exit 0 "$BENCH" $ORDER --dump-order "$T/order" --shard-cache "$T/wc" "$B/w"
same_order w "compressed shards, the first run through the cache"
if [ "$(grep -c '^request GET .*\.lz4$' "$PROXY_LOG")" -ge 2 ]; then pass; else
	fail "compressed shards: the first run downloaded nothing"; fi
proxy_start
expect_exit 0 "$BENCH" $ORDER --dump-order "$T/order" --shard-cache "$T/wc" "$B/w"
same_order w "compressed shards, the second run from the cache"
expect_eq 0 "$(grep -c '^request GET .*\.lz4$' "$PROXY_LOG")" \
	"compressed shards, second run: streamed from the copies, no GET of a shard"

# ---- a limit smaller than one shard: streamed, nothing cached, no deadlock ------
expect_exit 0 "$BENCH" $ORDER --dump-order "$T/order" --shard-cache "$T/small" \
	--shard-cache-limit 100K "$B/z"
same_order z "a limit smaller than the shard"
expect_eq 0 "$(ls "$T/small" | grep -c '^rio-.*\.shard')" "nothing cached under a 100K limit"

# ---- eviction: never a copy another process reads, never a foreign file --------------
echo mine >"$C/mine.tfrecord"
echo mine >"$C/rio-notacopy.shard"
# a reader of z holds its copy (every shard, for the loader's life)
AWS_ENDPOINT_URL="$S3_ENDPOINT" "$BENCH" --epochs 100000 --shard-cache "$C" "$B/z" \
	>"$T/z.out" 2>&1 &
zpid=$!
i=0
while [ "$(copies)" -lt 4 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq 4 "$(copies)" "z's copy made beside x's 3"
zcopy=$(ls -t "$C" | grep '^rio-[0-9a-f]*\.shard$' | head -1)
# y needs 360000 bytes within 400K: x's copies go, z's (read now) stays
expect_exit 0 "$BENCH" $ORDER --dump-order "$T/order" --shard-cache "$C" \
	--shard-cache-limit 400K "$B/y"
same_order y "y read while z's reader holds its copy"
if kill -0 $zpid 2>/dev/null; then pass; else fail "z's reader ended before y's run was over"; fi
if [ -f "$C/$zcopy" ]; then pass; else fail "the copy another process reads was evicted"; fi
expect_eq 2 "$(copies)" "x's copies evicted: z's and one of y's left (400K)"
expect_eq mine "$(cat "$C/mine.tfrecord")" "a file the cache did not make kept"
expect_eq mine "$(cat "$C/rio-notacopy.shard")" "a file not named as a copy kept"
kill $zpid
wait $zpid 2>/dev/null
expect_eq "" "$(grep -v '^$' "$T/z.out" | grep -i error)" "z's reader had no error"

# ---- a download killed mid-way is never served ------------------------------------------
rm -rf "$C"
# the whole shard's GET stalls: the download hangs until killed
proxy_start --faults stall --every 1 --min-bytes 100000 --stall 60
"$BENCH" $ORDER --shard-cache "$C" "$B/z" >"$T/killed.out" 2>&1 &
kpid=$!
i=0
while ! ls "$C" 2>/dev/null | grep -q "\.part-$kpid-" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
part=$(ls "$C" 2>/dev/null | grep "\.part-$kpid-")
if [ -n "$part" ]; then pass; else fail "no download under way to kill"; fi
kill -KILL $kpid
wait $kpid 2>/dev/null
expect_eq 0 "$(copies)" "no copy from the killed download"
proxy_start
expect_exit 0 "$BENCH" $ORDER --dump-order "$T/order" --shard-cache "$C" "$B/z"
same_order z "after a killed download"
expect_eq "" "$(ls "$C" | grep '\.part-')" "the killed download's .part deleted"
expect_eq 1 "$(copies)" "the shard downloaded again, whole"
if cmp -s "$C"/rio-*.shard "$T/loc/z-00000-of-00001.tfrecord"; then pass; else
	fail "the copy differs from the shard"; fi

# ---- a damaged shard is never cached ----------------------------------------------------
# (the download is checked as it arrives, every record's CRCs: a damaged
# one is not kept, and the run meets the damage as it does without a cache)
mkdir -p "$T/dmg"
cp "$T/loc/z-00000-of-00001.tfrecord" "$T/dmg/d-00000-of-00001.tfrecord"
printf 'X' | dd of="$T/dmg/d-00000-of-00001.tfrecord" bs=1 seek=90000 conv=notrunc 2>/dev/null
code=$(s3_curl -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$T/dmg/d-00000-of-00001.tfrecord" \
	"$S3_ENDPOINT/$S3_BUCKET/dmg/d-00000-of-00001.tfrecord")
expect_eq 200 "$code" "the damaged shard uploaded"
rm -rf "$C"
"$BENCH" "$T/dmg/d-00000-of-00001.tfrecord" >/dev/null 2>"$T/dmg.local"
expect_exit 1 "$BENCH" --shard-cache "$C" "s3://$S3_BUCKET/dmg/"
expect_match "CRC" "$T/err" "the damage reported through the cache"
expect_match "CRC" "$T/dmg.local" "the damage reported from the local copy"
expect_eq 0 "$(copies)" "no copy of a damaged shard"
expect_eq "" "$(ls "$C" | grep '\.part-')" "no .part left of a damaged shard"
"$BENCH" --json --skip-damaged "$T/dmg/d-00000-of-00001.tfrecord" >"$T/dmg.local.json"
expect_exit 0 "$BENCH" --json --skip-damaged --shard-cache "$C" "s3://$S3_BUCKET/dmg/"
expect_eq "$(grep -o '"records": *[0-9]*' "$T/dmg.local.json")" \
	"$(grep -o '"records": *[0-9]*' "$T/out")" "--skip-damaged: the records the local copy gives"
expect_eq 0 "$(copies)" "no copy of a damaged shard with --skip-damaged"

# ---- a download broken off mid-body resumes: the copy is whole ----------------------------
rm -rf "$C"
proxy_start --faults reset,truncate --every 2 --min-bytes 10000
expect_exit 0 "$BENCH" $ORDER --dump-order "$T/order" --shard-cache "$C" "$B/y"
same_order y "downloads broken off mid-body"
expect_match "^(reset|truncate) GET" "$PROXY_LOG" "the proxy broke downloads off"
expect_eq 2 "$(copies)" "both shards of y cached"
for f in "$C"/rio-*.shard; do
	if cmp -s "$f" "$T/loc/y-00000-of-00002.tfrecord" || cmp -s "$f" "$T/loc/y-00001-of-00002.tfrecord"; then
		pass; else fail "$f is no whole shard of y"; fi
done
proxy_start

# ---- usage -----------------------------------------------------------------------------
expect_exit 2 "$BENCH" --shard-cache-limit 1M "$B/z"
expect_match "needs --shard-cache" "$T/err" "a limit without a cache refused"
finish
