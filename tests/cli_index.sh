#!/bin/sh
# cli_index.sh — recordio-index: the .idx of the golden files line by line,
# offsets of a gzip shard in the decompressed stream, --force, shard specs,
# no .idx for a damaged shard, and usage errors.
. "$(dirname "$0")/cli_lib.sh"

IX="$BIN/recordio-index"
V="$BIN/recordio-verify"
D="$TESTDATA"
R=3203 # framed size of every tfx-mnist record (3187 bytes of data + 16)

# idx_lines N SIZE: the index of N records of SIZE bytes framed
idx_lines() {
	i=0
	while [ $i -lt "$1" ]; do echo "$((i * $2)) $2"; i=$((i + 1)); done
}

# ---- usage -------------------------------------------------------------------
expect_exit 0 "$IX" --help
expect_match '^Usage: recordio-index' "$T/out" "--help on stdout"
expect_exit 2 "$IX"
expect_match "Try 'recordio-index --help'" "$T/err" "no FILE"
expect_exit 2 "$IX" --bogus x
expect_exit 1 "$IX" "$T/missing.tfrecord"
expect_match "missing\.tfrecord" "$T/err" "missing file named"

# ---- tfx-mnist: 1000 lines "i*3203 3203" ----------------------------------------
cp "$D/tfx-mnist.tfrecord" "$T/mnist.tfrecord"
expect_exit 0 "$IX" "$T/mnist.tfrecord"
expect_eq "wrote $T/mnist.tfrecord.idx: 1000 records" "$(cat "$T/out")" "index message"
expect_lines 1000 "$T/mnist.tfrecord.idx" "mnist: 1000 lines"
expect_eq "0 3203" "$(sed -n 1p "$T/mnist.tfrecord.idx")" "mnist line 1"
expect_eq "3203 3203" "$(sed -n 2p "$T/mnist.tfrecord.idx")" "mnist line 2"
idx_lines 1000 $R >"$T/want.idx"
if cmp -s "$T/want.idx" "$T/mnist.tfrecord.idx"; then pass; else fail "mnist .idx differs from the expected lines"; fi
expect_exit 0 "$V" "$T/mnist.tfrecord"
expect_match "index OK" "$T/out" "verify accepts the written .idx"
ls -a "$T" >"$T/ls"
if grep -q '\.tmp$' "$T/ls"; then fail "a temporary file was left behind"; else pass; fi

# an existing .idx is kept without --force
echo "0 1" >"$T/mnist.tfrecord.idx"
expect_exit 1 "$IX" "$T/mnist.tfrecord"
expect_match "mnist\.tfrecord\.idx: already exists" "$T/err" "existing .idx named"
expect_eq "0 1" "$(cat "$T/mnist.tfrecord.idx")" "existing .idx untouched"
expect_exit 0 "$IX" --force --quiet "$T/mnist.tfrecord"
expect_lines 0 "$T/out" "--quiet prints nothing"
if cmp -s "$T/want.idx" "$T/mnist.tfrecord.idx"; then pass; else fail "--force did not rewrite the .idx"; fi

# ---- small files and several at once ------------------------------------------------
cp "$D/tf-singles.tfrecord" "$D/tf-mixed-types.tfrecord" "$T/"
expect_exit 0 "$IX" "$T/tf-singles.tfrecord" "$T/tf-mixed-types.tfrecord"
expect_lines 2 "$T/out" "one line per file"
expect_eq "0 40
40 45
85 45" "$(cat "$T/tf-singles.tfrecord.idx")" "tf-singles .idx"
expect_eq "0 68" "$(cat "$T/tf-mixed-types.tfrecord.idx")" "tf-mixed-types .idx"

# ---- compressed shards: offsets in the decompressed stream ----------------------------
cp "$D/tfx-penguin-train.tfrecord.gz" "$D/tfx-external-00001-of-00002.tfrecord.gz" "$T/"
expect_exit 0 "$IX" "$T/tfx-penguin-train.tfrecord.gz"
expect_eq "wrote $T/tfx-penguin-train.tfrecord.gz.idx: 234 records" "$(cat "$T/out")" "penguin message"
expect_lines 234 "$T/tfx-penguin-train.tfrecord.gz.idx" "penguin: 234 lines"
expect_eq 0 "$(sed -n '1s/ .*//p' "$T/tfx-penguin-train.tfrecord.gz.idx")" "penguin: first offset 0"
# every offset is the previous offset plus its size, and the last one ends
# where the decompressed stream ends
streamsize=$(gzip -dc "$T/tfx-penguin-train.tfrecord.gz" | wc -c | tr -d ' ')
expect_eq "ok $streamsize" "$(awk 'BEGIN { e = 0; ok = "ok" }
	{ if ($1 != e) ok = "bad line " NR; e = $1 + $2 }
	END { print ok, e }' "$T/tfx-penguin-train.tfrecord.gz.idx")" "penguin: offsets in the stream"
gzip -dc "$T/tfx-penguin-train.tfrecord.gz" >"$T/penguin.tfrecord"
expect_exit 0 "$IX" "$T/penguin.tfrecord"
if cmp -s "$T/penguin.tfrecord.idx" "$T/tfx-penguin-train.tfrecord.gz.idx"; then pass; else
	fail "the .idx of a gzip shard differs from the .idx of its decompressed bytes"; fi
expect_exit 0 "$IX" "$T/tfx-external-00001-of-00002.tfrecord.gz"
expect_lines 5012 "$T/tfx-external-00001-of-00002.tfrecord.gz.idx" "external: 5012 lines"
expect_exit 0 "$V" "$T/tfx-external-00001-of-00002.tfrecord.gz"
expect_match "index OK" "$T/out" "verify accepts the .idx of a gzip shard"

# ---- shard specs ----------------------------------------------------------------------
mkdir -p "$T/p"
cp "$D/tf-singles.tfrecord" "$T/p/d-00000-of-00002.tfrecord"
cp "$D/tf-mixed-types.tfrecord" "$T/p/d-00001-of-00002.tfrecord"
expect_exit 0 "$IX" "$T/p/d"
expect_lines 2 "$T/out" "PREFIX: two shards"
expect_eq "0 68" "$(cat "$T/p/d-00001-of-00002.tfrecord.idx")" "PREFIX: second shard indexed"
# the sidecars are not shards: a glob that matches them skips them
expect_exit 0 "$IX" --force "$T/p/*"
expect_lines 2 "$T/out" "glob: .idx files are not indexed"

# ---- damage: exit 1, named, and no .idx ------------------------------------------------
cp "$D/tfx-mnist.tfrecord" "$T/bad.tfrecord"
printf '\000' | dd of="$T/bad.tfrecord" bs=1 seek=$((7 * R + 20)) conv=notrunc 2>/dev/null
expect_exit 1 "$IX" "$T/bad.tfrecord" "$T/tf-singles.tfrecord"
expect_match "bad\.tfrecord: offset $((7 * R)) \(record 7\): corrupted record \(data CRC mismatch\)" \
	"$T/err" "damage named with offset"
if [ -e "$T/bad.tfrecord.idx" ]; then fail "an .idx was written for a damaged shard"; else pass; fi
expect_match "already exists" "$T/err" "the other file is still handled"
head -c $((3 * R + 10)) "$D/tfx-mnist.tfrecord" >"$T/cut.tfrecord"
expect_exit 1 "$IX" "$T/cut.tfrecord"
expect_match "cut\.tfrecord: offset $((3 * R)) \(record 3\): truncated record" "$T/err" "truncation named"
if [ -e "$T/cut.tfrecord.idx" ]; then fail "an .idx was written for a truncated shard"; else pass; fi

finish
