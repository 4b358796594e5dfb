#!/bin/sh
# cli_sizes.sh — every tool option that takes a SIZE goes through the one
# parser (lib/size.c; its edges are tests/test_lib's): KB is 1000 bytes and
# K 1024 where it shows (the shards --shard-size cuts), a fraction takes a
# unit, and what the parser refuses is a usage error (exit 2) naming the
# option and the text, on one line, from recordio-pack, recordio-verify and
# recordio-bench alike. Each --help says the grammar.
. "$(dirname "$0")/cli_lib.sh"
cd "$T" || exit 1

# 176 records of 100 bytes, 116 framed: 88 fit in 10K (10240 bytes), 86 in
# 10KB (10000): two shards against three
mkdir k kb kib frac
i=1
while [ $i -le 176 ]; do printf '%0100d\n' $i; i=$((i + 1)); done >lines.txt
expect_exit 0 "$PACK" -q --from lines --output k/t --shard-size 10K lines.txt
expect_exit 0 "$PACK" -q --from lines --output kb/t --shard-size 10KB lines.txt
expect_exit 0 "$PACK" -q --from lines --output kib/t --shard-size 10KiB lines.txt
expect_eq "2 3 2" "$(ls k | grep -c 'tfrecord$') $(ls kb | grep -c 'tfrecord$') $(ls kib | grep -c 'tfrecord$')" \
	"--shard-size 10K, 10KB, 10KiB: 1024, 1000, 1024 bytes a K"
expect_eq 88 "$("$CAT" --count k/t-00000-of-00002.tfrecord)" "10K: 88 records of 116 bytes"
expect_eq 86 "$("$CAT" --count kb/t-00000-of-00003.tfrecord)" "10KB: 86 records of 116 bytes"
# a fraction with a unit: 9.5K = 9728 bytes, 83 records
expect_exit 0 "$PACK" -q --from lines --output frac/t --shard-size 9.5K lines.txt
expect_eq 83 "$("$CAT" --count frac/t-00000-of-00003.tfrecord)" "9.5K: 83 records of 116 bytes"

# accepted spellings of one size, for each tool
for size in 262144 262144B 256K 256KiB 0.25M 0.25MiB; do
	expect_exit 0 "$VERIFY" -q --buffer-size "$size" k/t-00000-of-00002.tfrecord
	expect_exit 0 "$BENCH" --read-size "$size" k/t-00000-of-00002.tfrecord
done
expect_exit 0 "$BENCH" --cache 1.5GB k/t-00000-of-00002.tfrecord
expect_exit 0 "$BENCH" --cache 0 k/t-00000-of-00002.tfrecord

# refused: a usage error naming the option and the text, on one line
nl='
'
for size in "" " 4K" "4K " 4k 4kb 4Mi 4MBB 4Q 1e8 0x10 -4K +4K nan inf 1.5 1.5B .5K 4.K \
	18446744073709551616 16777216T "4${nl}K"; do
	for run in "$VERIFY -q --buffer-size" "$BENCH --read-size" "$BENCH --cache" \
		"$PACK -q --from lines --output r/t --shard-size" \
		"$PACK -q --from lines --output r/t --max-record-size"; do
		# shellcheck disable=SC2086
		set -- $run
		tool=$1
		shift
		last=$(eval echo "\${$#}")
		expect_exit 2 "$tool" "$@" "$size" lines.txt
		expect_match "^recordio-[a-z]+: $last: (expected a size such as 64M or 1\.5G, got|'.*' is too large)" \
			"$T/err" "$last '$size' refused"
		expect_lines 2 "$T/err" "$last '$size': one line, then the --help hint"
	done
done
[ ! -e r ] || fail "a refused size wrote nothing"

# each --help states the grammar
for tool in "$PACK" "$VERIFY" "$BENCH"; do
	expect_exit 0 "$tool" --help
	expect_match "^A SIZE is a whole number of bytes, or a number with a unit: K, M, G, T \(or" \
		"$T/out" "$tool --help: the SIZE grammar"
	expect_match "KB, MB, GB, TB powers of 1000" "$T/out" "$tool --help: KB is 1000 bytes"
done
finish
