#!/bin/sh
# cli_ctr_gen.sh — bench/ctr_gen, the synthetic click-through dataset: the
# records and shards asked for, the schema, the same bytes for the same seed
# (and the same records whatever the shard count), ids in the vocabulary
# with a Zipf head, labels not all one class, and every bad argument
# refused with a one-line error naming it; what is not a regular file under
# a shard's name refused before anything is written, and a set that fails
# half way leaves none of its shards.
. "$(dirname "$0")/cli_lib.sh"

GEN="$BIN/bench/ctr_gen"
[ -x "$GEN" ] || { echo "SKIP: $GEN not built"; exit 77; }

# ---- usage -------------------------------------------------------------------
expect_exit 0 "$GEN" --help
expect_match '^Usage: ctr_gen -o PREFIX' "$T/out" "--help on stdout"

# bad_arg OPTION-NAME ARGS...: exit 2, the first line names the option
bad_arg() {
	what=$1; shift
	expect_exit 2 "$GEN" "$@"
	expect_match "^ctr_gen: $what" "$T/err" "error names $what"
	expect_lines 2 "$T/err" "$what: the error and the hint to --help"
}
bad_arg "--vocab: 0 is out of range" -o "$T/x" --vocab 0
bad_arg "--vocab: expected a non-negative integer, got '-5'" -o "$T/x" --vocab -5
bad_arg "--shards: 100000 is out of range" -o "$T/x" --shards 100000
bad_arg "--shards: 0 is out of range" -o "$T/x" -s 0
bad_arg "--records: expected a non-negative integer, got 'many'" -o "$T/x" -n many
bad_arg "--features: 1001 is out of range" -o "$T/x" --features 1001
bad_arg "--ids: 0 is out of range" -o "$T/x" -k 0
bad_arg "--dense: expected a non-negative integer, got '1.5'" -o "$T/x" --dense 1.5
bad_arg "--zipf: -1 is out of range" -o "$T/x" --zipf -1
bad_arg "--zipf: expected a number, got 'nan'" -o "$T/x" --zipf nan
bad_arg "--noise: expected a number, got ''" -o "$T/x" --noise ''
bad_arg "--seed: expected a non-negative integer, got 'x'" -o "$T/x" --seed x
bad_arg "--output: an output prefix is required" -n 5
bad_arg "unexpected argument 'extra'" -o "$T/x" extra
mkdir "$T/odir"
bad_arg "--output: '$T/odir' is a directory \(the shards would go beside it" -o "$T/odir" -n 5
bad_arg "--output: '$T/odir/' is a directory; give a file prefix such as $T/odir/train" \
	-o "$T/odir/" -n 5
expect_eq 0 "$(ls -A "$T/odir" | wc -l | tr -d ' ')" "--output DIR: nothing written in it"
expect_eq 0 "$(ls "$T" | grep -c '^odir-')" "--output DIR: nothing written beside it"
expect_exit 2 "$GEN" -o "$T/x" --bogus
expect_eq 0 "$(ls "$T" | grep -c '^x')" "no output after usage errors"

# a shard that cannot be written: exit 1, the path named, nothing left
expect_exit 1 "$GEN" -o "$T/nodir/x" -n 10
expect_match "^ctr_gen: $T/nodir/x-00000-of-00001\.tfrecord: " "$T/err" "unwritable shard named"
expect_lines 1 "$T/err" "one-line write error"
# what is not a regular file under a shard's name is refused before any
# shard is written (shard 0 was in place when shard 1's FIFO failed)
mkdir "$T/nr"
mkfifo "$T/nr/c-00001-of-00002.tfrecord"
expect_exit 1 "$GEN" -o "$T/nr/c" -n 10 -s 2
expect_match "^ctr_gen: $T/nr/c-00001-of-00002\.tfrecord: .*a FIFO, not a regular file" "$T/err" \
	"a FIFO under shard 1's name"
expect_lines 1 "$T/err" "one line for the FIFO"
expect_eq "c-00001-of-00002.tfrecord" "$(ls "$T/nr")" "no shard written beside the FIFO"
# a shard that fails after another was written (its rename fails): the one
# written is removed, so that no set mixes two runs (shard 0 of seed 2
# beside shard 1 of seed 1 looked whole)
rm "$T/nr/c-00001-of-00002.tfrecord"
expect_exit 0 "$GEN" -o "$T/nr/c" -n 40 -s 2 --seed 1
if [ -f "$SHIM" ]; then
	expect_exit 1 shimmed FAIL_AT=rename:2 -- "$GEN" -o "$T/nr/c" -n 40 -s 2 --seed 2
	expect_match "^ctr_gen: $T/nr/c-00001-of-00002\.tfrecord: .*; the 1 shard before it removed \(no set mixes two runs\)\$" \
		"$T/err" "the failed shard, and the one removed"
	expect_lines 1 "$T/err" "one line for the failed set"
	expect_eq "c-00001-of-00002.tfrecord" "$(ls "$T/nr")" "only the earlier run's shard 1 left"
	expect_exit 1 "$CAT" "$T/nr/c"
	expect_match "missing shard" "$T/err" "the set is refused, not read mixed"
else
	echo "SKIP: $SHIM not built: a set that fails half way"
fi

# ---- a small set -------------------------------------------------------------
ARGS="-n 600 -f 3 -V 1000 -k 2 -d 4 --seed 7"
expect_exit 0 "$GEN" -o "$T/a" -s 3 $ARGS
expect_match "^600 records in 3 shards" "$T/out" "summary line"
expect_exit 0 "$CAT" -c "$T/a"
expect_eq 600 "$(cat "$T/out")" "records in all"
for s in 0 1 2; do
	expect_exit 0 "$CAT" -c "$T/a-0000$s-of-00003.tfrecord"
	expect_eq 200 "$(cat "$T/out")" "records in shard $s"
done
expect_exit 0 "$VERIFY" "$T/a"
expect_exit 0 "$INFO" "$T/a"
for f in cat0 cat1 cat2; do
	expect_match "^  $f +int64 +length 2\.\.2 +in 600 records$" "$T/out" "$f: 2 ids a record"
done
expect_match "^  dense +float +length 4\.\.4 +in 600 records$" "$T/out" "dense floats"
expect_match "^  label +int64 +length 1\.\.1 +in 600 records$" "$T/out" "label"
expect_eq 0 "$(ls -a "$T" | grep -c 'tmp$')" "no temporary file left"

# the same seed: the same bytes; another seed: other bytes
expect_exit 0 "$GEN" -o "$T/b" -s 3 $ARGS
same=0
for s in 0 1 2; do
	cmp -s "$T/a-0000$s-of-00003.tfrecord" "$T/b-0000$s-of-00003.tfrecord" && same=$((same + 1))
done
expect_eq 3 "$same" "same seed, same shards"
expect_exit 0 "$GEN" -o "$T/c" -s 3 -n 600 -f 3 -V 1000 -k 2 -d 4 --seed 8
cmp -s "$T/a-00000-of-00003.tfrecord" "$T/c-00000-of-00003.tfrecord"
expect_eq 1 "$?" "another seed, other bytes"
# one shard: the same records in the same order
expect_exit 0 "$GEN" -o "$T/one" $ARGS
"$CAT" -f hex "$T/a" >"$T/a.hex"
"$CAT" -f hex "$T/one" >"$T/one.hex"
cmp -s "$T/a.hex" "$T/one.hex"
expect_eq 0 "$?" "records independent of the shard count"

# ---- the values --------------------------------------------------------------
"$CAT" -f json "$T/a" >"$T/a.json"
ones=$(grep -c '"label": {"int64": \[1\]}' "$T/a.json")
zeros=$(grep -c '"label": {"int64": \[0\]}' "$T/a.json")
expect_eq 600 "$((ones + zeros))" "every label 0 or 1"
if [ "$ones" -ge 150 ] && [ "$ones" -le 450 ]; then pass; else
	fail "label balance: $ones of 600 are 1"; fi
# every id of cat0 in [0, 1000); Zipf 1.05 over 1000 ids: the most frequent
# id is about 1/7 of them (uniform ids: 1/1000)
grep -o '"cat0": {"int64": \[[0-9, -]*\]}' "$T/a.json" | sed 's/.*\[//; s/\].*//' |
	tr ',' '\n' | tr -d ' ' >"$T/ids"
expect_lines 1200 "$T/ids" "2 ids of cat0 in each record"
bad=$(awk '$1 < 0 || $1 >= 1000' "$T/ids" | wc -l)
expect_eq 0 "$bad" "ids in the vocabulary"
top=$(sort -n "$T/ids" | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
if [ "$top" -ge 100 ]; then pass; else fail "Zipf head: the top id has $top of 1200"; fi
# the top id is not 0: popular ids are spread by the permutation
topid=$(sort -n "$T/ids" | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
if [ "$topid" != 0 ]; then pass; else fail "the most frequent id is 0: not permuted"; fi
# --zipf 0: uniform ids
expect_exit 0 "$GEN" -o "$T/u" -n 600 -f 1 -V 1000 -d 0 --zipf 0
"$CAT" -f json "$T/u" | grep -o '"cat0": {"int64": \[[0-9]*\]}' | sed 's/.*\[//; s/\].*//' >"$T/uids"
top=$(sort -n "$T/uids" | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
if [ "$top" -le 10 ]; then pass; else fail "--zipf 0: the top id has $top of 600"; fi
# a vocabulary of 10^7, as the benchmarks use
expect_exit 0 "$GEN" -o "$T/big" -n 200 -f 2 -V 10000000
expect_exit 0 "$CAT" -c "$T/big"
expect_eq 200 "$(cat "$T/out")" "vocab 10^7: records"

finish
