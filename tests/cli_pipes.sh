#!/bin/sh
# cli_pipes.sh — shards read where nothing can seek back: standard input
# ("-"), a pipe given as /dev/stdin, and a FIFO, for every compression.
# recordio-cat, recordio-verify, recordio-info and recordio-pack --from
# tfrecord read them as they read the file (the compression found from the
# stream's first bytes); recordio-index and recordio-bench, which need a
# file to index or to read at offsets, refuse them in one line, as does
# the loader for a FIFO among its shards.
. "$(dirname "$0")/cli_lib.sh"

for t in pack cat verify info index bench; do
	if [ ! -x "$BIN/recordio-$t" ]; then
		echo "cli_pipes.sh: $BIN/recordio-$t not built" >&2
		exit 77
	fi
done
if ! command -v mkfifo >/dev/null 2>&1; then
	echo "cli_pipes.sh: SKIP: no mkfifo" >&2
	exit 77
fi
cd "$T" || exit 1

# in_fifo FILE CMD...: runs CMD (stdout to $T/out, stderr to $T/err) while a
# background `cat FILE` writes into the FIFO $T/ff; sets $rc. The writer is
# killed if CMD never opened the FIFO.
in_fifo() {
	src=$1; shift
	rm -f ff && mkfifo ff || { fail "mkfifo"; return; }
	cat "$src" >ff 2>/dev/null &
	wpid=$!
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	rm -f ff
}

# same_hex: $T/out (from the last command) holds the payloads of want.hex
same_hex() {
	cp "$T/out" got.hex
	expect_exit 0 cmp got.hex want.hex
}

# 300 lines, so that a compressed shard spans more than one stream read
i=0
while [ $i -lt 300 ]; do echo "line $i of the piped shard"; i=$((i + 1)); done >lines.txt
for c in none gzip zlib lz4; do
	expect_exit 0 "$PACK" --from lines --output $c --compression $c -q lines.txt
done
expect_exit 0 "$CAT" --format hex none
cp "$T/out" want.hex

for c in none gzip zlib lz4; do
	f=$(ls $c-00000-of-00001.tfrecord* | grep -v '\.idx$')

	# recordio-cat: "-", /dev/stdin on a pipe, a FIFO
	expect_exit 0 sh -c "cat '$f' | '$CAT' --format hex -"
	same_hex
	expect_exit 0 sh -c "cat '$f' | '$CAT' --format hex /dev/stdin"
	same_hex
	in_fifo "$f" "$CAT" --format hex ff
	expect_eq 0 $rc "$c: recordio-cat reads a FIFO"
	same_hex
	expect_exit 0 sh -c "'$CAT' --count - <'$f'"
	expect_eq 300 "$(cat "$T/out")" "$c: recordio-cat --count - from a redirected file"

	# recordio-verify
	expect_exit 0 sh -c "cat '$f' | '$VERIFY' -"
	expect_match "^-: OK, 300 records, .*\($c" "$T/out" "$c: recordio-verify - through a pipe"
	in_fifo "$f" "$VERIFY" ff
	expect_eq 0 $rc "$c: recordio-verify reads a FIFO"
	expect_match "^ff: OK, 300 records, .*\($c" "$T/out" "$c: recordio-verify names the FIFO"
	# the sizes of the bytes read, not of a pipe (0), and of the stream
	expect_eq "$("$VERIFY" "$f" | sed -e "s|^$f:|-:|" -e "s|, index OK$||")" "$(sh -c "cat '$f' | '$VERIFY' -")" \
		"$c: recordio-verify - says what it says of the file"

	# recordio-info
	expect_exit 0 sh -c "cat '$f' | '$INFO' -"
	expect_match "^-  *300 .* $c\$" "$T/out" "$c: recordio-info - through a pipe"
	in_fifo "$f" "$INFO" ff
	expect_eq 0 $rc "$c: recordio-info reads a FIFO"
	expect_match "^ff  *300 " "$T/out" "$c: recordio-info names the FIFO"

	# recordio-pack --from tfrecord -
	expect_exit 0 sh -c "cat '$f' | '$PACK' --from tfrecord --output re-$c -q -"
	expect_exit 0 cmp re-$c-00000-of-00001.tfrecord none-00000-of-00001.tfrecord
	in_fifo "$f" "$PACK" --from tfrecord --output fifo-$c -q ff
	expect_eq 0 $rc "$c: recordio-pack --from tfrecord reads a FIFO"
	expect_exit 0 cmp fifo-$c-00000-of-00001.tfrecord none-00000-of-00001.tfrecord
done

# damage through a pipe: reported naming standard input, exit 1
head -c 200 gzip-00000-of-00001.tfrecord.gz >cut.gz
expect_exit 1 sh -c "cat cut.gz | '$VERIFY' -"
expect_match '^recordio-verify: standard input: offset [0-9]+ \(record [0-9]+\): truncated record' \
	"$T/err" "a cut gzip stream through a pipe is named"
expect_exit 1 sh -c "cat cut.gz | '$CAT' --count -"
expect_match '^recordio-cat: standard input: ' "$T/err" "recordio-cat names standard input"
printf 'not a shard at all' >junk
expect_exit 1 sh -c "cat junk | '$CAT' -"
expect_match '^recordio-cat: standard input: offset 0 \(record 0\): corrupted record' "$T/err" \
	"junk through a pipe is damage at offset 0"
expect_exit 0 sh -c "'$CAT' --count - </dev/null"
expect_eq 0 "$(cat "$T/out")" "an empty standard input holds no records"

# standard input reads once: "-" twice is a usage error
expect_exit 2 sh -c "cat none-00000-of-00001.tfrecord | '$CAT' - -"
expect_match "'-' \(standard input\) given twice" "$T/err" "recordio-cat: '-' twice"
expect_exit 2 sh -c "cat none-00000-of-00001.tfrecord | '$VERIFY' - -"
# and --shards N cannot count it
expect_exit 1 sh -c "cat none-00000-of-00001.tfrecord | '$PACK' --from tfrecord --output two --shards 2 -"
expect_match 'standard input: not a regular file' "$T/err" "pack --shards 2 refuses standard input"
expect_eq "" "$(ls two-* 2>/dev/null)" "nothing written for standard input with --shards 2"

# recordio-index and recordio-bench need a file: one line, exit 1
rm -f ff && mkfifo ff
expect_exit 1 sh -c "cat none-00000-of-00001.tfrecord | '$INDEX' -"
expect_match '^recordio-index: standard input: not a regular file' "$T/err" "recordio-index refuses -"
expect_lines 1 "$T/err" "recordio-index: one line for -"
expect_exit 1 "$INDEX" ff
expect_match '^recordio-index: ff: not a regular file' "$T/err" "recordio-index refuses a FIFO"
expect_exit 0 test ! -e ff.idx
expect_exit 1 sh -c "cat none-00000-of-00001.tfrecord | '$BENCH' -"
expect_match '^recordio-bench: standard input: not a regular file' "$T/err" "recordio-bench refuses -"
expect_lines 1 "$T/err" "recordio-bench: one line for -"
expect_exit 1 sh -c "cat none-00000-of-00001.tfrecord | '$BENCH' /dev/stdin"
expect_match '^recordio-bench: /dev/stdin: not a regular file' "$T/err" "recordio-bench refuses a pipe"
expect_exit 1 "$BENCH" ff
expect_match '^recordio-bench: ff: not a regular file' "$T/err" "recordio-bench refuses a FIFO"
# a FIFO among files reaches the loader, which refuses it (without waiting
# for a writer) naming it
expect_exit 1 "$BENCH" none-00000-of-00001.tfrecord,ff
expect_match '^recordio-bench: ff: not supported for this file: not a regular file' "$T/err" \
	"the loader refuses a FIFO among the shards"
expect_lines 1 "$T/err" "the loader's refusal is one line"
rm -f ff

finish
