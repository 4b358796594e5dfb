#!/bin/sh
# cli_dir.sh — a directory where shards are expected means the shard files
# in it, sorted, without .idx files, commit journals, hidden names and
# subdirectories: recordio-cat, -verify, -info, -index, -bench (the loader)
# and pack --from tfrecord on a TFX-like split directory made of the
# TensorFlow-written golden files, a directory in a list, "DIR/" against a
# DIR that is also a shard PREFIX (ambiguous), and an empty directory.
. "$(dirname "$0")/cli_lib.sh"

for p in "$PACK" "$CAT" "$VERIFY" "$INFO" "$INDEX" "$BENCH"; do
	if [ ! -x "$p" ]; then
		echo "cli_dir.sh: SKIP: $p not built"
		rm -rf "$T"
		exit 77
	fi
done
cd "$T" || exit 1

# ---- a TFX split: DIR/data_tfrecord-SSSSS-of-NNNNN.gz ------------------------

PENGUIN="$TESTDATA/tfx-penguin-train.tfrecord.gz"
EXTERNAL="$TESTDATA/tfx-external-00001-of-00002.tfrecord.gz"
mkdir -p tfx/train tfx/eval
cp "$PENGUIN" tfx/train/data_tfrecord-00000-of-00001.gz
cp "$EXTERNAL" tfx/eval/data_tfrecord-00000-of-00001.gz
n_train=$("$CAT" -c "$PENGUIN")
n_eval=$("$CAT" -c "$EXTERNAL")
expect_eq 234 "$n_train" "the golden penguin file"

expect_exit 0 "$CAT" -c tfx/train
expect_eq "$n_train" "$(cat "$T/out")" "cat -c DIR counts the split's records"
expect_exit 0 "$CAT" -c tfx/train/
expect_eq "$n_train" "$(cat "$T/out")" "DIR/ is the same directory"
"$CAT" -f json tfx/train >dir.json
"$CAT" -f json "$PENGUIN" >direct.json
expect_exit 0 cmp dir.json direct.json
expect_exit 0 "$VERIFY" tfx/train
expect_match '^tfx/train/data_tfrecord-00000-of-00001\.gz: OK, 234 records' "$T/out" \
	"verify DIR checks the split's shard"
expect_exit 0 "$INFO" tfx/train
expect_match '^tfx/train/data_tfrecord-00000-of-00001\.gz +234 ' "$T/out" "info DIR lists the shard"
expect_match 'species +int64' "$T/out" "info DIR reads the Examples"
expect_exit 0 "$BENCH" tfx/train
expect_match '^shards: +1 .* 234 records per epoch' "$T/out" "the loader reads a directory"
# two splits as a list, in the given order
expect_exit 0 "$CAT" -c tfx/eval,tfx/train
expect_eq $((n_train + n_eval)) "$(cat "$T/out")" "a list of directories"
expect_exit 0 "$CAT" -c tfx/eval tfx/train/
expect_eq $((n_train + n_eval)) "$(cat "$T/out")" "two directory arguments"
# index sidecars written into the directory are not shards of it
expect_exit 0 "$INDEX" tfx/train
expect_exit 0 test -f tfx/train/data_tfrecord-00000-of-00001.gz.idx
expect_exit 0 "$VERIFY" tfx/train
expect_match 'index OK' "$T/out" "the new index is used"
expect_lines 1 "$T/out" "one shard: the .idx is not a shard"
# packing a split directory into a set
expect_exit 0 "$PACK" --from tfrecord --output packed --shards 2 tfx/train
expect_exit 0 "$CAT" -c packed
expect_eq "$n_train" "$(cat "$T/out")" "pack --from tfrecord DIR"

# ---- what a directory leaves out ---------------------------------------------

mkdir mixed mixed/sub
"$PACK" -q --from lines --output mixed/b /dev/null
printf 'x\n' >lines.txt
"$PACK" -q --from lines --output mixed/a lines.txt
cp mixed/a-00000-of-00001.tfrecord mixed/.hidden.tfrecord
cp mixed/a-00000-of-00001.tfrecord mixed/sub/c.tfrecord
cp mixed/a-00000-of-00001.tfrecord mixed/old.commit
expect_exit 0 "$VERIFY" mixed
expect_eq "mixed/a-00000-of-00001.tfrecord mixed/b-00000-of-00001.tfrecord" \
	"$(grep -o '^[^:]*: OK' "$T/out" | sed 's/: OK//' | tr '\n' ' ' | sed 's/ $//')" \
	"sorted; no .idx, hidden, journal or subdirectory"

# ---- errors -------------------------------------------------------------------

mkdir empty
for tool in "$CAT" "$VERIFY" "$INFO" "$BENCH"; do
	name=$(basename "$tool")
	expect_exit 1 "$tool" empty
	expect_eq "$name: empty: no shards match: an empty directory" "$(cat "$T/err")" \
		"$name: an empty directory is named"
done
mkdir only-idx
touch only-idx/a.tfrecord.idx only-idx/.x
expect_exit 1 "$CAT" only-idx
expect_eq "recordio-cat: only-idx: no shards match: a directory with no shard files (hidden, .idx and .commit files and subdirectories are not shards)" \
	"$(cat "$T/err")" "a directory of non-shards is named"

# DIR that is also the PREFIX of shards beside it (made after the shards:
# recordio-pack refuses to write them beside an existing directory)
mkdir amb
"$PACK" -q --from lines --output amb/train lines.txt
mkdir amb/train
"$PACK" -q --from lines --output amb/train/inner lines.txt
# (recordio-bench takes the loader's -EINVAL as a usage error: exit 2)
for tool in "$CAT:1" "$VERIFY:1" "$BENCH:2"; do
	name=$(basename "${tool%:*}")
	expect_exit "${tool##*:}" "${tool%:*}" amb/train
	expect_eq "$name: amb/train: Invalid argument: both a directory and the PREFIX of shards (amb/train-00000-of-00001.tfrecord); write 'amb/train/' for the directory's files or 'amb/train-*' for the shards" \
		"$(head -1 "$T/err")" "$name: a directory that is also a PREFIX is ambiguous"
done
expect_exit 0 "$VERIFY" amb/train/
expect_match '^amb/train/inner-00000-of-00001\.tfrecord: OK' "$T/out" "DIR/ picks the directory"
expect_exit 0 "$VERIFY" 'amb/train-*'
expect_match '^amb/train-00000-of-00001\.tfrecord: OK' "$T/out" "a glob picks the shards"
# a trailing '/' on a file
expect_exit 1 "$CAT" lines.txt/
expect_eq "recordio-cat: lines.txt/: Not a directory" "$(cat "$T/err")" "FILE/ is not a directory"

finish
