#!/bin/sh
# s3_roundtrip.sh — a set packed to S3 (recordio-pack --output s3://...)
# reads back as the same set packed locally: recordio-cat (records and
# --count), recordio-verify, recordio-info and recordio-index (its .idx
# sidecars written next to the S3 shards) agree with the local copy. The
# set is committed as a whole (doc/recordio-format.md, "Sets in S3"): a
# new generation under PREFIX.gNNNNNN/, then the manifest; --force replaces
# it keeping the generation that was in force; a failed pack leaves the set
# as it was and nothing behind. Shards over the part size go up in a
# multipart upload. Against a real S3 server on 127.0.0.1 (tests/s3_lib.sh).
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/s3_lib.sh"
s3_start

# s3_keys PREFIX: the bucket's keys under PREFIX, one a line
s3_keys() {
	# (curl signs a query's '/' wrong: sent as %2F)
	s3_curl "$S3_ENDPOINT/$S3_BUCKET?list-type=2&prefix=$(echo "$1" | sed 's|/|%2F|g')" |
		grep -o '<Key>[^<]*</Key>' | sed 's/<Key>\(.*\)<\/Key>/\1/'
}

# ---- a set of 3 shards, local and in S3 --------------------------------------
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "record %d %s\n", i, substr("abcdefghij", 1, i % 10) }' \
	>"$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$T/loc/train" --shards 3 "$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$B/sets/train" --shards 3 "$T/in.txt"
expect_match "^published $B/sets/train: generation 1, 3 shards under $B/sets/train.g000001/" \
	"$T/out" "the publication named"
s3_keys sets/ >"$T/keys"
expect_lines 7 "$T/keys" "3 shards, their .idx and the manifest"
expect_match '^sets/train.g000001/train-00000-of-00003.tfrecord$' "$T/keys" "shard 0's key"
expect_match '^sets/train.g000001/train-00002-of-00003.tfrecord.idx$' "$T/keys" "shard 2's .idx"
expect_match '^sets/train.manifest$' "$T/keys" "the manifest"
expect_eq "" "$(ls "$TMPDIR")" "the staging directory removed"

# the records, in order, through every form of the set's name
"$CAT" --format raw "$T/loc/train" >"$T/local.txt"
for spec in "$B/sets/train" "$B/sets/" "$B/sets/train.g000001/" \
	"$B/sets/train.g000001/train-*" "$B/sets/train.manifest"; do
	expect_exit 0 "$CAT" --format raw "$spec"
	if cmp -s "$T/local.txt" "$T/out"; then pass; else fail "records of $spec differ"; fi
done
expect_exit 0 "$CAT" --count "$B/sets/train"
expect_eq 3000 "$(cat "$T/out")" "cat --count"

# verify: each shard OK, with its index, the same counts
expect_exit 0 "$VERIFY" "$T/loc/train"
sed 's|.*/train-|train-|; s/ in [0-9.]* s.*//' "$T/out" >"$T/verify.local"
expect_exit 0 "$VERIFY" "$B/sets/train"
sed 's|.*/train-|train-|; s/ in [0-9.]* s.*//' "$T/out" >"$T/verify.s3"
expect_match 'train-00001-of-00003.tfrecord: OK, 1000 records, .*index OK' "$T/verify.s3" \
	"verify checks the S3 shard's .idx"
if cmp -s "$T/verify.local" "$T/verify.s3"; then pass; else
	fail "verify differs"; diff "$T/verify.local" "$T/verify.s3" >&2; fi

# info: the same table but for the shards' names
expect_exit 0 "$INFO" "$T/loc/train"
sed 's|^[^ ]*/train-|train-|' "$T/out" | tr -s ' ' >"$T/info.local"
expect_exit 0 "$INFO" "$B/sets/train"
sed 's|^[^ ]*/train-|train-|' "$T/out" | tr -s ' ' >"$T/info.s3"
if cmp -s "$T/info.local" "$T/info.s3"; then pass; else
	fail "info differs"; diff "$T/info.local" "$T/info.s3" >&2; fi

# index: the sidecars rebuilt next to the S3 shards, as the local ones
G="$S3_ENDPOINT/$S3_BUCKET/sets/train.g000001"
for k in 0 1 2; do s3_curl -X DELETE "$G/train-0000$k-of-00003.tfrecord.idx"; done
expect_eq 3 "$(s3_keys sets/train.g | wc -l | tr -d ' ')" "the sidecars deleted"
expect_exit 0 "$INDEX" "$B/sets/train"
for k in 0 1 2; do
	s3_curl "$G/train-0000$k-of-00003.tfrecord.idx" >"$T/idx.s3"
	if cmp -s "$T/loc/train-0000$k-of-00003.tfrecord.idx" "$T/idx.s3"; then pass; else
		fail "shard $k's .idx written to S3 differs from the local one"; fi
done

# an existing sidecar in S3 is kept without --force (one line a shard), as
# a local one is; with --force it is written again
expect_exit 1 "$INDEX" "$B/sets/train"
expect_eq 3 "$(grep -c 'tfrecord.idx: already exists (use --force to replace it)$' "$T/err")" \
	"an existing S3 .idx kept, one line a shard"
expect_exit 0 "$INDEX" --force -q "$B/sets/train"

# recordio-index's --remote-* options (its --help names them): the part size
# sets the GETs that read a shard (2 shards of 330 KB: one GET each with
# 8M parts, 6 with 64K ones), the attempts those of a failing request
"$INDEX" --help >"$T/help"
expect_match '^ +--remote-part-size SIZE' "$T/help" "--help names --remote-part-size"
expect_exit 2 "$INDEX" --remote-inflight 0 "$B/sets/train"
expect_match 'remote-inflight' "$T/err" "a bad --remote-inflight named"
awk 'BEGIN { for (i = 0; i < 4000; i++) printf "record %06d %0150d\n", i, i }' >"$T/ix.txt"
expect_exit 0 "$PACK" --from lines --output "$B/ix/i" --shards 2 "$T/ix.txt"
proxy_start
expect_exit 0 "$INDEX" -q --force "$B/ix/i"
gets_default=$(grep -c '^request GET .*tfrecord$' "$PROXY_LOG")
proxy_start
expect_exit 0 "$INDEX" -q --force --remote-part-size 64K "$B/ix/i"
gets_small=$(grep -c '^request GET .*tfrecord$' "$PROXY_LOG")
if [ "$gets_small" -ge $((gets_default + 8)) ]; then pass; else
	fail "--remote-part-size 64K: $gets_small GETs of the shards, 8M parts $gets_default"; fi
proxy_start --faults 503 --every 1
expect_exit 1 "$INDEX" -q --force --remote-attempts 2 "$B/ix/i"
expect_eq 2 "$(proxy_count 503)" "--remote-attempts 2: two tries of the first request"
expect_lines 1 "$T/err" "attempts run out: one line"
proxy_stop
export AWS_ENDPOINT_URL="$S3_ENDPOINT"

# ---- the loader (recordio-bench --dump-order): the same records in the same
# order from S3 as from the local copy, in every shuffle mode and world size,
# plain (read at offsets) and gzip (read as a stream)
expect_exit 0 "$PACK" --from lines --output "$T/loc/gz" --shards 3 --compression gzip "$T/in.txt"
expect_exit 0 "$PACK" --from lines --output "$B/sets/gz" --shards 3 --compression gzip "$T/in.txt"
for set in train gz; do
	for mode in none buffer global; do
		[ $set = gz ] && [ $mode = global ] && continue # offsets need uncompressed shards
		for ranks in "0 1" "0 2" "1 2"; do
			set -- $ranks
			o="--shuffle $mode --seed 7 --batch 16 --epochs 2 --rank $1 --world $2"
			expect_exit 0 "$BENCH" $o --dump-order "$T/order.local" "$T/loc/$set"
			expect_exit 0 "$BENCH" $o --dump-order "$T/order.s3" "$B/sets/$set"
			if [ -s "$T/order.s3" ] && cmp -s "$T/order.local" "$T/order.s3"; then pass; else
				fail "bench $o on $set: the order from S3 differs from the local one"; fi
		done
	done
done
expect_eq 3000 "$(wc -l <"$T/order.s3" | tr -d ' ')" "2 epochs of rank 1 of 2 (records sharding: .idx found in S3): 1500 records each"

# ---- a set in force is refused without --force, replaced with it -------------
expect_exit 1 "$PACK" --from lines --output "$B/sets/train" --shards 2 "$T/in.txt"
expect_match "sets/train.manifest, generation 1.*--force" "$T/err" "an existing set refused"
expect_lines 1 "$T/err" "one line"
head -100 "$T/in.txt" >"$T/small.txt"
expect_exit 0 "$PACK" --from lines --output "$B/sets/train" --shards 2 --force "$T/small.txt"
expect_match "generation 2, 2 shards" "$T/out" "generation 2"
expect_exit 0 "$CAT" --count "$B/sets/train"
expect_eq 100 "$(cat "$T/out")" "the new set read"
# the generation that was in force stays for its readers
expect_eq 6 "$(s3_keys sets/train.g000001/ | wc -l | tr -d ' ')" "generation 1 kept"
expect_exit 0 "$PACK" --from lines --output "$B/sets/train" --force "$T/small.txt"
expect_match "generation 3, 1 shard " "$T/out" "generation 3"
expect_eq 0 "$(s3_keys sets/train.g000001/ | wc -l | tr -d ' ')" "generation 1 deleted"
expect_eq 4 "$(s3_keys sets/train.g000002/ | wc -l | tr -d ' ')" "generation 2 kept"
expect_exit 0 "$CAT" --count "$B/sets/train"
expect_eq 100 "$(cat "$T/out")" "generation 3 read"

# ---- a failed pack leaves the set as it was, and nothing behind --------------
printf 'ok\n' >"$T/bad.txt"
awk 'BEGIN { s = sprintf("%2000s", ""); print s }' >>"$T/bad.txt"
expect_exit 1 "$PACK" --from lines --output "$B/sets/train" --force --max-record-size 1K "$T/bad.txt"
expect_exit 0 "$CAT" --count "$B/sets/train"
expect_eq 100 "$(cat "$T/out")" "the set in force after a failed pack"
expect_eq 0 "$(s3_keys sets/train.g000004 | wc -l | tr -d ' ')" "no generation 4"
expect_eq "" "$(ls "$TMPDIR")" "the staging directory removed after a failure"

# ---- a shard larger than the part size: a multipart upload -------------------
awk 'BEGIN { s = sprintf("%1000s", ""); for (i = 0; i < 6000; i++) printf "%06d%s\n", i, s }' \
	>"$T/big.txt"
expect_exit 0 "$PACK" --from lines --output "$T/loc/big" "$T/big.txt"
expect_exit 0 "$PACK" --from lines --output "$B/big/b" --remote-part-size 5M "$T/big.txt"
s3_curl -D "$T/headers" -o "$T/big.s3" "$S3_ENDPOINT/$S3_BUCKET/big/b.g000001/b-00000-of-00001.tfrecord"
if cmp -s "$T/loc/big-00000-of-00001.tfrecord" "$T/big.s3"; then pass; else
	fail "the multipart upload differs from the local shard"; fi
# S3's ETag of a multipart object ends in -PARTS
expect_match '^[Ee][Tt]ag: "?[0-9a-f]+-2"?' "$T/headers" "uploaded in 2 parts"
expect_exit 0 "$VERIFY" "$B/big/b"

# ---- usage ----------------------------------------------------------------------
expect_exit 2 "$PACK" --from lines --output "https://example.com/x" "$T/in.txt"
expect_match "s3:// only" "$T/err" "an http output refused"
expect_exit 2 "$PACK" --recover --output "$B/sets/train"
expect_exit 2 "$PACK" --from lines --output "$B/sets/" "$T/in.txt"
expect_match "is a directory" "$T/err" "a directory output refused"
finish
