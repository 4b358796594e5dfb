#!/bin/sh
# cli_verify.sh — recordio-verify: every golden file verifies; each kind of
# damage (length, length CRC, data, data CRC, truncation inside header, data
# and footer) is found and named with file, offset and kind; --all-errors
# reports several; .idx sidecars are checked; output stays in argument order
# under threads; usage errors.
. "$(dirname "$0")/cli_lib.sh"

V="$BIN/recordio-verify"
D="$TESTDATA"
MNIST="$D/tfx-mnist.tfrecord"
R=3203 # framed size of every tfx-mnist record (3187 bytes of data + 16)

# flip FILE OFFSET: inverts the byte at OFFSET.
flip() {
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# ---- usage -------------------------------------------------------------------
expect_exit 0 "$V" --help
expect_match '^Usage: recordio-verify' "$T/out" "--help on stdout"
expect_exit 2 "$V"
expect_match "Try 'recordio-verify --help'" "$T/err" "no FILE"
expect_exit 2 "$V" --threads abc "$MNIST"
expect_exit 2 "$V" --buffer-size 1Q "$MNIST"
expect_exit 2 "$V" "$MNIST" ""
expect_match "empty FILE argument" "$T/err" "an empty argument is named"
expect_exit 2 "$V" --bogus "$MNIST"

# ---- the golden files are good ------------------------------------------------------
for f in tfx-mnist.tfrecord tfx-penguin-train.tfrecord.gz tfx-external-00001-of-00002.tfrecord.gz \
	tf-singles.tfrecord tf-mixed-types.tfrecord; do
	expect_exit 0 "$V" "$D/$f"
	expect_lines 1 "$T/out" "one line for $f"
	expect_lines 0 "$T/err" "no errors for $f"
done
expect_exit 0 "$V" "$MNIST"
expect_match "tfx-mnist\.tfrecord: OK, 1000 records, 3\.1 MiB \(none\)$" "$T/out" "mnist OK line"
expect_exit 0 "$V" "$D/tfx-penguin-train.tfrecord.gz"
expect_match "tfx-penguin-train\.tfrecord\.gz: OK, 234 records, .* \(gzip, .* uncompressed\)$" \
	"$T/out" "penguin OK line names gzip"
expect_exit 0 "$V" "$D/tfx-external-00001-of-00002.tfrecord.gz"
expect_match ": OK, 5012 records" "$T/out" "external: 5012 records"
expect_exit 0 "$V" --quiet "$MNIST" "$D/tf-singles.tfrecord"
expect_lines 0 "$T/out" "--quiet prints nothing for good shards"

# several files: one line each in argument order, whatever the threads, and a total
for j in 1 2 4 16; do
	expect_exit 0 "$V" --threads $j "$D/tf-singles.tfrecord" "$MNIST" "$D/tfx-penguin-train.tfrecord.gz" \
		"$D/tf-mixed-types.tfrecord" "$D/tfx-external-00001-of-00002.tfrecord.gz"
	expect_lines 6 "$T/out" "--threads $j: five lines and a total"
	expect_eq "tf-singles.tfrecord tfx-mnist.tfrecord tfx-penguin-train.tfrecord.gz tf-mixed-types.tfrecord tfx-external-00001-of-00002.tfrecord.gz" \
		"$(sed -n '1,5s|^.*/\([^/:]*\): OK.*|\1|p' "$T/out" | tr '\n' ' ' | sed 's/ $//')" \
		"--threads $j: argument order"
	expect_match "^total: 5 files, 5 OK, 0 failed, 6250 records" "$T/out" "--threads $j: total"
done

# shard specs: a glob and a PREFIX
mkdir -p "$T/g"
cp "$D/tf-singles.tfrecord" "$T/g/s-00000-of-00002.tfrecord"
cp "$D/tf-mixed-types.tfrecord" "$T/g/s-00001-of-00002.tfrecord"
expect_exit 0 "$V" "$T/g/s"
expect_match "^total: 2 files, 2 OK, 0 failed, 4 records" "$T/out" "PREFIX spec"
expect_exit 0 "$V" "$T/g/*.tfrecord"
expect_lines 3 "$T/out" "glob spec: two files and a total"

# a missing file among good ones: the others are still verified
expect_exit 1 "$V" "$D/tf-singles.tfrecord" "$T/missing.tfrecord" "$MNIST"
expect_match "missing\.tfrecord" "$T/err" "missing file named"
expect_match "tfx-mnist\.tfrecord: OK" "$T/out" "files after it verified"
expect_match "^total: 3 files, 2 OK, 1 failed" "$T/out" "total counts the failure"

# ---- each kind of damage ------------------------------------------------------------
# damage_case NAME BYTE KIND: flips byte BYTE (of record 2, at 2*R) and expects
# KIND reported at offset 2*R.
damage_case() {
	cp "$MNIST" "$T/$1.tfrecord"
	flip "$T/$1.tfrecord" "$2"
	expect_exit 1 "$V" "$T/$1.tfrecord"
	expect_match "$1\.tfrecord: offset $((2 * R)) \(record 2\): $3" "$T/err" "$1: kind and offset"
	expect_match "$1\.tfrecord: FAILED, 2 good records" "$T/out" "$1: summary line"
}
damage_case length $((2 * R + 3)) "corrupted record \(length CRC mismatch\)"
damage_case length0 $((2 * R)) "corrupted record \(length CRC mismatch\)"
damage_case lengthcrc $((2 * R + 9)) "corrupted record \(length CRC mismatch\)"
damage_case data $((2 * R + 12 + 1000)) "corrupted record \(data CRC mismatch\)"
damage_case datafirst $((2 * R + 12)) "corrupted record \(data CRC mismatch\)"
damage_case datalast $((2 * R + R - 5)) "corrupted record \(data CRC mismatch\)"
damage_case datacrc $((2 * R + R - 1)) "corrupted record \(data CRC mismatch\)"
damage_case datacrc0 $((2 * R + R - 4)) "corrupted record \(data CRC mismatch\)"
# a huge length with a matching length CRC is caught by the length limit or as a
# truncation; check only that it fails and names the place
printf '\377\377\377\377\377\377\377\177' >"$T/hdr"
cp "$MNIST" "$T/huge.tfrecord"
dd if="$T/hdr" of="$T/huge.tfrecord" bs=1 seek=$((2 * R)) conv=notrunc 2>/dev/null
expect_exit 1 "$V" "$T/huge.tfrecord"
expect_match "huge\.tfrecord: offset $((2 * R)) \(record 2\)" "$T/err" "huge length: offset"

# truncation inside the header, the data and the footer of record 2
for cut in 1 5 11 12 13 1500 $((R - 4)) $((R - 3)) $((R - 1)); do
	head -c $((2 * R + cut)) "$MNIST" >"$T/cut$cut.tfrecord"
	expect_exit 1 "$V" "$T/cut$cut.tfrecord"
	expect_match "cut$cut\.tfrecord: offset $((2 * R)) \(record 2\): truncated record" "$T/err" \
		"truncated $cut bytes into record 2"
done
head -c $((3 * R)) "$MNIST" >"$T/whole3.tfrecord"
expect_exit 0 "$V" "$T/whole3.tfrecord"
expect_match "OK, 3 records" "$T/out" "a cut at a record boundary is a good shard"
: >"$T/zero.tfrecord"
expect_exit 0 "$V" "$T/zero.tfrecord"
expect_match "zero\.tfrecord: OK, 0 records" "$T/out" "an empty file is a good shard"

# a damaged shard among good ones: reported in place, exit 1
expect_exit 1 "$V" --threads 2 "$D/tf-singles.tfrecord" "$T/data.tfrecord" "$MNIST"
expect_match "tf-singles\.tfrecord: OK" "$T/out" "good before"
expect_match "tfx-mnist\.tfrecord: OK" "$T/out" "good after"
expect_match "^total: 3 files, 2 OK, 1 failed" "$T/out" "total with one failure"

# ---- --all-errors ------------------------------------------------------------------------
cp "$MNIST" "$T/multi.tfrecord"
flip "$T/multi.tfrecord" $((2 * R + 100))     # data of record 2
flip "$T/multi.tfrecord" $((5 * R + R - 2))   # data CRC of record 5
flip "$T/multi.tfrecord" $((8 * R + 1))       # length of record 8
flip "$T/multi.tfrecord" $((500 * R + 10))    # length CRC of record 500
expect_exit 1 "$V" "$T/multi.tfrecord"
expect_lines 1 "$T/err" "without --all-errors: the first damage only"
expect_exit 1 "$V" --all-errors "$T/multi.tfrecord"
expect_lines 4 "$T/err" "--all-errors: four damages"
expect_match "offset $((2 * R)) \(record 2\): corrupted record \(data CRC mismatch\)" "$T/err" "damage 1"
expect_match "offset $((5 * R)) \(record [0-9]+\): corrupted record \(data CRC mismatch\)" "$T/err" "damage 2"
expect_match "offset $((8 * R)) \(record [0-9]+\): corrupted record \(length CRC mismatch\)" "$T/err" "damage 3"
expect_match "offset $((500 * R)) \(record [0-9]+\): corrupted record \(length CRC mismatch\)" "$T/err" "damage 4"
expect_match "multi\.tfrecord: FAILED, 996 good records, 4 damaged" "$T/out" "--all-errors summary"
# two damaged records in a row: each is listed with its own place (the
# reader reports every damage under --all-errors), and both are counted
cp "$MNIST" "$T/row.tfrecord"
flip "$T/row.tfrecord" $((2 * R + 100))
flip "$T/row.tfrecord" $((3 * R + 100))
expect_exit 1 "$V" --all-errors "$T/row.tfrecord"
expect_match "offset $((2 * R)) \(record 2\): corrupted record \(data CRC mismatch\)" "$T/err" \
	"two in a row: the first at its own offset"
expect_match "offset $((3 * R)) \(record 2\): corrupted record \(data CRC mismatch\)" "$T/err" \
	"two in a row: the second at its own offset"
expect_match "row\.tfrecord: FAILED, 998 good records, 2 damaged" "$T/out" "two in a row counted"
# more than 100 damages: 100 are listed, the rest counted
cp "$MNIST" "$T/many.tfrecord"
i=0
while [ $i -lt 300 ]; do flip "$T/many.tfrecord" $((i * R + 50)); i=$((i + 2)); done
expect_exit 1 "$V" --all-errors "$T/many.tfrecord"
expect_lines 101 "$T/err" "100 damages listed and a count"
expect_match "many\.tfrecord: 50 more damaged records skipped, not listed$" "$T/err" "the rest counted"
expect_match "many\.tfrecord: FAILED, 850 good records, 150 damaged" "$T/out" "all counted"
head -c $((999 * R + 7)) "$T/multi.tfrecord" >"$T/multicut.tfrecord"
expect_exit 1 "$V" -a "$T/multicut.tfrecord"
expect_lines 5 "$T/err" "--all-errors: four damages and a truncated tail"
expect_match "offset $((999 * R)) \(record [0-9]+\): truncated record" "$T/err" "truncated tail"

# ---- compressed shards ---------------------------------------------------------------------
cp "$D/tfx-penguin-train.tfrecord.gz" "$T/pg.tfrecord.gz"
size=$(wc -c <"$T/pg.tfrecord.gz" | tr -d ' ')
flip "$T/pg.tfrecord.gz" $((size / 2))
expect_exit 1 "$V" "$T/pg.tfrecord.gz"
expect_match "pg\.tfrecord\.gz: " "$T/err" "damaged gzip named"
head -c $((size / 2)) "$D/tfx-penguin-train.tfrecord.gz" >"$T/pgcut.tfrecord.gz"
expect_exit 1 "$V" "$T/pgcut.tfrecord.gz"
expect_match "pgcut\.tfrecord\.gz: " "$T/err" "truncated gzip named"

# zlib and LZ4 shards written by recordio-pack (when it is built), with their .idx
if [ -x "$BIN/recordio-pack" ]; then
	for c in zlib lz4 gzip; do
		expect_exit 0 "$BIN/recordio-pack" --quiet --from tfrecord --output "$T/pk-$c" --shards 2 \
			--compression $c "$MNIST"
		expect_exit 0 "$V" "$T/pk-$c"
		expect_match "pk-$c-00001-of-00002\.tfrecord\.[a-z0-9]+: OK, 500 records, .*\($c, .* uncompressed\), index OK$" \
			"$T/out" "$c shard from pack, with its .idx"
		f=$(echo "$T/pk-$c-00000-of-00002.tfrecord."*[!x])
		size=$(wc -c <"$f" | tr -d ' ')
		flip "$f" $((size / 2))
		expect_exit 1 "$V" "$f"
		expect_match "pk-$c-00000-of-00002\.tfrecord\.[a-z0-9]+: " "$T/err" "damaged $c stream named"
	done
fi

# ---- .idx sidecars -------------------------------------------------------------------------
# idx_lines N SIZE: the correct index of N records of SIZE bytes
idx_lines() {
	i=0
	while [ $i -lt "$1" ]; do echo "$((i * $2)) $2"; i=$((i + 1)); done
}
cp "$MNIST" "$T/ix.tfrecord"
idx_lines 1000 $R >"$T/ix.tfrecord.idx"
expect_exit 0 "$V" "$T/ix.tfrecord"
expect_match "ix\.tfrecord: OK, 1000 records, .*index OK" "$T/out" "a correct .idx"
idx_lines 999 $R >"$T/ix.tfrecord.idx"
expect_exit 1 "$V" "$T/ix.tfrecord"
expect_match "ix\.tfrecord\.idx: .*999 entries" "$T/err" "short .idx named"
idx_lines 1001 $R >"$T/ix.tfrecord.idx"
expect_exit 1 "$V" "$T/ix.tfrecord"
expect_match "ix\.tfrecord\.idx: line 1001: .*1001 entries, but the shard has 1000 records" \
	"$T/err" "long .idx named"
idx_lines 1000 $R | sed '3s/.*/6406 3204/' >"$T/ix.tfrecord.idx"
expect_exit 1 "$V" "$T/ix.tfrecord"
expect_match "ix\.tfrecord\.idx: .*line [34]" "$T/err" "wrong size in .idx: line named"
idx_lines 1000 3186 >"$T/ix.tfrecord.idx"
expect_exit 1 "$V" "$T/ix.tfrecord"
expect_match "ix\.tfrecord\.idx: line 1 \(record 0\): malformed or mismatched index" \
	"$T/err" "consistent but wrong .idx: line and record named"
printf 'zero 3203\n' >"$T/ix.tfrecord.idx"
expect_exit 1 "$V" "$T/ix.tfrecord"
expect_match "ix\.tfrecord\.idx: .*line 1" "$T/err" "malformed .idx named"
# an .idx of a gzip shard holds offsets in the decompressed stream
cp "$D/tf-singles.tfrecord" "$T/sg.tfrecord"
gzip -c "$T/sg.tfrecord" >"$T/sg.tfrecord.gz"
printf '0 40\n40 45\n85 45\n' >"$T/sg.tfrecord.gz.idx"
expect_exit 0 "$V" "$T/sg.tfrecord.gz"
expect_match "sg\.tfrecord\.gz: OK, 3 records, .*\(gzip, 130 B uncompressed\), index OK" "$T/out" \
	"gzip shard with a stream-offset .idx"

finish
