#!/bin/sh
# cli_pack.sh — shell tests of recordio-pack: every --from mode, every
# compression, shard naming and counts, .idx sidecars, --shuffle, the exit
# codes of usage and data errors, that a failure or an interrupt leaves
# nothing behind, that existing shards are kept without --force, and that
# no run replaces or removes what is not a regular file.
#
# Inputs are made here (tiny IDX files with known bytes, CSV, a class tree);
# payloads are checked by reading the shard bytes through the .idx with od,
# and through recordio-cat when it is built.
. "$(dirname "$0")/cli_lib.sh"

[ -x "$CAT" ] && HAVE_CAT=1 || HAVE_CAT=0
if [ ! -x "$PACK" ]; then
	echo "cli_pack.sh: $PACK not built" >&2
	exit 77
fi
cd "$T" || exit 1

# ---- helpers -------------------------------------------------------------

# records_hex SHARD: the payload of every record of an uncompressed SHARD in
# hex, one a line, found through SHARD.idx ("offset framed_size").
records_hex() {
	while read -r off size; do
		tail -c +$((off + 13)) "$1" | head -c $((size - 16)) | od -An -v -tx1 | tr -d ' \n'
		echo
	done <"$1.idx"
}

# nfiles DIR: entries in DIR, hidden ones included.
nfiles() { ls -A "$1" | wc -l | tr -d ' '; }

# pack ARGS...: recordio-pack, expected to succeed.
pack() { expect_exit 0 "$PACK" "$@"; }

# ---- inputs --------------------------------------------------------------

# 5 images of 2x3 pixels, bytes 1..30; labels 0..4.
printf '\0\0\10\3\0\0\0\5\0\0\0\2\0\0\0\3' >img.idx
i=1
while [ $i -le 30 ]; do
	printf "\\$(printf %03o $i)" >>img.idx
	i=$((i + 1))
done
printf '\0\0\10\1\0\0\0\5\0\1\2\3\4' >lab.idx
gzip -c img.idx >img.idx.gz
gzip -c lab.idx >lab.idx.gz
printf '\0\0\10\1\0\0\0\4\0\1\2\3' >lab4.idx
head -c 40 img.idx >trunc.idx

# Example{image: bytes(6), label: int64} for image 0 and image 1
EX0=0a250a130a05696d616765120a0a080a060102030405060a0e0a056c6162656c12051a030a0100
EX1=0a250a130a05696d616765120a0a080a060708090a0b0c0a0e0a056c6162656c12051a030a0101

printf 'alpha\nbeta\n\ngamma\r\ndelta' >lines.txt
printf 'x,name,label,y\r\n1.5,"a,b",3,\r\n2,"say ""hi""",-4,7e2\r\n\r\n,plain,0,1\r\n' >data.csv
mkdir -p tree/cat tree/dog tree/emu
printf 'meow' >tree/cat/b.jpg
printf 'purr' >tree/cat/a.jpg
printf 'woof' >tree/dog/x.jpg
printf 'skip' >tree/stray.txt
printf 'skip' >tree/cat/.hidden

# ---- --help and usage errors (exit 2) ------------------------------------

expect_exit 0 "$PACK" --help
expect_match '^Usage: recordio-pack' "$T/out" "--help prints usage to stdout"
expect_match 'round|contiguous|\[k\*n/N' "$T/out" "--help documents the --shards split"
mkdir u
expect_exit 2 "$PACK"
expect_exit 2 "$PACK" --bogus --from lines --output u/x lines.txt
expect_match 'bogus' "$T/err" "unknown option named"
expect_exit 2 "$PACK" --from lines lines.txt
expect_match 'output' "$T/err" "missing --output named"
expect_exit 2 "$PACK" --from lines --output u/x --compression brotli lines.txt
expect_match 'brotli' "$T/err" "bad --compression value named"
expect_exit 2 "$PACK" --from lines --output u/x --shards 2 --shard-size 1M lines.txt
expect_exit 2 "$PACK" --from lines --output u/x
expect_exit 2 "$PACK" --from tfrecord --output u/x
expect_exit 2 "$PACK" --from idx --images img.idx --output u/x
expect_exit 2 "$PACK" --from idx --images img.idx --labels lab.idx --output u/x extra
expect_exit 2 "$PACK" --from nonsense --output u/x lines.txt
expect_exit 2 "$PACK" --output u/x lines.txt
expect_exit 2 "$PACK" --from lines --output u/x --shards 0 lines.txt
expect_exit 2 "$PACK" --from lines --output u/x --shards many lines.txt
expect_exit 2 "$PACK" --from lines --output u/x --shard-size 12Q lines.txt
for size in nan inf 0x10 1e3 " 5" 16777216T; do
	expect_exit 2 "$PACK" --from lines --output u/x --shard-size "$size" lines.txt
done
expect_exit 2 "$PACK" --from lines --output u/x --seed 3 lines.txt
expect_exit 2 "$PACK" --from lines --output u/x --level 3 lines.txt
expect_exit 2 "$PACK" --from lines --output u/x --label y lines.txt
expect_exit 2 "$PACK" --from csv --output u/x data.csv data.csv
expect_exit 2 "$PACK" --from lines --output u/ lines.txt
expect_exit 2 "$PACK" --from lines --output u/.. lines.txt
expect_exit 2 "$PACK" --from lines --output . lines.txt
expect_exit 2 "$PACK" --from lines --output
expect_eq 0 "$(nfiles u)" "usage errors write nothing"
# an existing directory without its '/' is refused too: its shards would go
# beside it (u-00000-of-00001.tfrecord), which every reader then refuses as
# ambiguous; --recover on it still runs (it may finish an older journal)
expect_exit 2 "$PACK" --from lines --output u lines.txt
expect_match "^recordio-pack: --output: 'u' is a directory \(the shards would go beside it, as u-00000-of-\.\.\.\); give a file prefix such as u/train$" \
	"$T/err" "--output DIR: refused in one line, naming it"
expect_exit 2 "$PACK" --from idx --images img.idx --labels lab.idx --output "$T/u" --force
expect_eq "" "$(ls -d u-* 2>/dev/null)" "--output DIR: nothing written beside it"
ln -s u ulink
expect_exit 2 "$PACK" --from lines --output ulink lines.txt
expect_eq 0 "$(nfiles u)" "--output DIR: nothing written in it"
expect_exit 0 "$PACK" --recover --output u
expect_match "^u: nothing to recover$" "$T/out" "--recover --output DIR runs"
rm ulink

# ---- --from idx ----------------------------------------------------------

mkdir idx
pack --from idx --images img.idx --labels lab.idx --output idx/one
expect_match '^packed 5 records .* into 1 shard in ' "$T/out" "summary line"
expect_eq "idx/one-00000-of-00001.tfrecord idx/one-00000-of-00001.tfrecord.idx" \
	"$(echo idx/one*)" "one shard and its index by default"
expect_eq "0 55" "$(head -1 idx/one-00000-of-00001.tfrecord.idx)" ".idx first line"
expect_eq "55 55" "$(sed -n 2p idx/one-00000-of-00001.tfrecord.idx)" ".idx second line"
expect_lines 5 idx/one-00000-of-00001.tfrecord.idx ".idx has one line per record"
expect_eq 275 "$(wc -c <idx/one-00000-of-00001.tfrecord | tr -d ' ')" "shard size"
records_hex idx/one-00000-of-00001.tfrecord >idx/hex
expect_eq "$EX0" "$(sed -n 1p idx/hex)" "Example of image 0"
expect_eq "$EX1" "$(sed -n 2p idx/hex)" "Example of image 1"
if [ $HAVE_CAT = 1 ]; then
	expect_exit 0 "$CAT" --format hex idx/one-00000-of-00001.tfrecord
	expect_eq "$(cat idx/hex)" "$(cat "$T/out")" "recordio-cat reads the same payloads"
fi

pack --from idx --images img.idx.gz --labels lab.idx.gz --output idx/gz
expect_exit 0 cmp idx/one-00000-of-00001.tfrecord idx/gz-00000-of-00001.tfrecord
pack --from idx --images img.idx.gz --labels lab.idx --output idx/mix --quiet
expect_eq "" "$(cat "$T/out")" "--quiet prints no summary"

expect_exit 1 "$PACK" --from idx --images img.idx --labels lab4.idx --output idx/bad
expect_match 'img\.idx.*lab4\.idx|lab4\.idx.*img\.idx' "$T/err" "count mismatch names both files"
expect_exit 1 "$PACK" --from idx --images lab.idx --labels lab.idx --output idx/bad
expect_exit 1 "$PACK" --from idx --images img.idx --labels img.idx --output idx/bad
expect_exit 1 "$PACK" --from idx --images missing-images.gz --labels lab.idx --output idx/bad
expect_match 'missing-images\.gz' "$T/err" "a missing input is named"
expect_eq 0 "$(ls -A idx | grep -c bad)" "failed idx runs write nothing"

# ---- shard counts: --shards and --shard-size ------------------------------

mkdir sh
pack --from idx --images img.idx --labels lab.idx --output sh/three --shards 3
expect_eq 6 "$(nfiles sh)" "--shards 3: three shards and three indexes"
counts=""
for k in 0 1 2; do
	f=sh/three-0000$k-of-00003.tfrecord
	counts="$counts $(wc -l <"$f.idx" | tr -d ' ')"
	if [ $HAVE_CAT = 1 ]; then
		expect_eq "$(wc -l <"$f.idx" | tr -d ' ')" "$("$CAT" --count "$f")" "recordio-cat --count $f"
	fi
done
expect_eq " 1 2 2" "$counts" "--shards 3 over 5 records: contiguous [k*n/N, (k+1)*n/N)"
# the shards in order hold the records in input order
cat sh/three-0000[012]-of-00003.tfrecord >sh/all
cp idx/one-00000-of-00001.tfrecord.idx sh/all.idx
expect_exit 0 cmp sh/all idx/one-00000-of-00001.tfrecord
expect_eq "0 55" "$(head -1 sh/three-00001-of-00003.tfrecord.idx)" "each shard's index starts at 0"

pack --from idx --images img.idx --labels lab.idx --output sh/seven --shards 7
expect_eq 14 "$(ls sh/seven-* | wc -l | tr -d ' ')" "--shards 7 over 5 records writes 7 shards"
expect_eq 0 "$(wc -c <sh/seven-00000-of-00007.tfrecord | tr -d ' ')" "an empty shard is empty"

pack --from idx --images img.idx --labels lab.idx --output sh/size --shard-size 120
expect_eq "sh/size-00000-of-00003.tfrecord sh/size-00001-of-00003.tfrecord sh/size-00002-of-00003.tfrecord" \
	"$(ls sh/size-*.tfrecord | tr '\n' ' ' | sed 's/ $//')" "--shard-size 120: 55-byte frames, 2 a shard"
expect_lines 2 sh/size-00000-of-00003.tfrecord.idx "--shard-size: first shard"
expect_lines 1 sh/size-00002-of-00003.tfrecord.idx "--shard-size: last shard"
pack --from idx --images img.idx --labels lab.idx --output sh/tiny --shard-size 10
expect_eq 5 "$(ls sh/tiny-*-of-00005.tfrecord | wc -l | tr -d ' ')" "a shard holds at least one record"
pack --from idx --images img.idx --labels lab.idx --output sh/exact --shard-size 110
expect_eq 3 "$(ls sh/exact-*-of-00003.tfrecord | wc -l | tr -d ' ')" "a shard may fill SIZE exactly"
pack --from lines --output sh/lines --shards 2 lines.txt
expect_lines 2 sh/lines-00000-of-00002.tfrecord.idx "lines are counted first: 2 + 3"
expect_lines 3 sh/lines-00001-of-00002.tfrecord.idx "lines are counted first: 2 + 3"

# ---- compression ---------------------------------------------------------

mkdir cz
pack --from idx --images img.idx --labels lab.idx --output cz/none --compression none
for c in gzip zlib lz4; do
	case $c in gzip) ext=gz ;; zlib) ext=zz ;; lz4) ext=lz4 ;; esac
	pack --from idx --images img.idx --labels lab.idx --output cz/$c --compression $c
	expect_match "as $c" "$T/out" "summary names the compression"
	f=cz/$c-00000-of-00001.tfrecord.$ext
	expect_exit 0 test -s "$f"
	expect_exit 0 cmp "$f.idx" cz/none-00000-of-00001.tfrecord.idx
	if [ $HAVE_CAT = 1 ]; then
		expect_exit 0 "$CAT" --format hex "$f"
		expect_eq "$(records_hex cz/none-00000-of-00001.tfrecord)" "$(cat "$T/out")" "$c payloads"
	fi
done
if command -v zcat >/dev/null 2>&1; then
	zcat cz/gzip-00000-of-00001.tfrecord.gz >cz/from-gz
	expect_exit 0 cmp cz/from-gz cz/none-00000-of-00001.tfrecord
fi
if command -v lz4 >/dev/null 2>&1; then
	lz4 -dc cz/lz4-00000-of-00001.tfrecord.lz4 >cz/from-lz4
	expect_exit 0 cmp cz/from-lz4 cz/none-00000-of-00001.tfrecord
fi
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], "rb").read()))' \
		cz/zlib-00000-of-00001.tfrecord.zz >cz/from-zz
	expect_exit 0 cmp cz/from-zz cz/none-00000-of-00001.tfrecord
fi
pack --from idx --images img.idx --labels lab.idx --output cz/lvl --compression gzip --level 9
expect_exit 2 "$PACK" --from idx --images img.idx --labels lab.idx --output cz/lvl2 -c gzip --level 12

# ---- --from lines --------------------------------------------------------

mkdir ln
pack --from lines --output ln/l lines.txt
records_hex ln/l-00000-of-00001.tfrecord >ln/hex
# alpha, beta, "", gamma\r, delta (no final newline)
expect_eq "616c706861 62657461  67616d6d610d 64656c7461" "$(tr '\n' ' ' <ln/hex | sed 's/ $//')" \
	"one raw record per line"
if [ $HAVE_CAT = 1 ]; then
	expect_exit 0 "$CAT" --format hex ln/l-00000-of-00001.tfrecord
	cp "$T/out" ln/cat-hex
	expect_exit 0 cmp ln/cat-hex ln/hex
fi
: >empty.txt
pack --from lines --output ln/empty empty.txt
expect_eq 0 "$(wc -c <ln/empty-00000-of-00001.tfrecord | tr -d ' ')" "an empty input gives an empty shard"
pack --from lines --output ln/two lines.txt lines.txt
expect_lines 10 ln/two-00000-of-00001.tfrecord.idx "several line files are concatenated"
expect_exit 1 "$PACK" --from lines --output ln/missing lines.txt no-such-file.txt
expect_match 'no-such-file\.txt' "$T/err" "a missing line file is named"

# ---- --max-record-size, and inputs larger than memory --------------------

mkdir lim
for bad in 0 257M 1G x -1; do
	expect_exit 2 "$PACK" --from lines --output lim/x --max-record-size "$bad" lines.txt
done
expect_match 'max-record-size' "$T/err" "a bad --max-record-size is named"
# a line of /dev/zero never ends: an error once it passes the limit, not a
# wait for the memory to run out
expect_exit 1 "$PACK" --from lines --output lim/z /dev/zero
expect_match '^recordio-pack: /dev/zero:1: line longer than --max-record-size \(268435456 bytes\)$' \
	"$T/err" "/dev/zero: the line-too-long error"
printf 'abcd\nabcde\nab\n' >lim4.txt
expect_exit 1 "$PACK" --from lines --output lim/l --max-record-size 4 lim4.txt
expect_match '^recordio-pack: lim4\.txt:2: line longer than --max-record-size \(4 bytes\)$' \
	"$T/err" "a line one byte over the limit names file:line"
printf 'abcd\nab\nabcde' >lim4b.txt
expect_exit 1 "$PACK" --from lines --output lim/l --max-record-size 4 lim4b.txt
expect_match 'lim4b\.txt:3: line longer' "$T/err" "a last line without newline over the limit"
pack --from lines --output lim/l --max-record-size 5 lim4.txt
expect_lines 3 lim/l-00000-of-00001.tfrecord.idx "a line at the limit packs"
expect_exit 1 sh -c "printf 'ab\\nabcdef\\n' | '$PACK' --from lines --output lim/p --max-record-size 5 -"
expect_match '^recordio-pack: standard input:2: line longer' "$T/err" "standard input is named"
printf 'a,b\n1,xyzab\n' >limf.csv
expect_exit 1 "$PACK" --from csv --output lim/c --max-record-size 4 limf.csv
expect_match '^recordio-pack: limf\.csv:2: field 2 longer than --max-record-size \(4 bytes\)$' \
	"$T/err" "a csv field over the limit names file:line"
printf 'a,b\n"1\n2",345\n' >limr.csv
expect_exit 1 "$PACK" --from csv --output lim/c --max-record-size 5 limr.csv
expect_match '^recordio-pack: limr\.csv:2: row longer than --max-record-size \(5 bytes\)$' \
	"$T/err" "a csv row over the limit names the line it starts on"
printf 'a\nxyz\n' >limx.csv
expect_exit 1 "$PACK" --from csv --output lim/c --max-record-size 4 limx.csv
expect_match '^recordio-pack: limx\.csv:2: a record of [0-9]+ bytes, over --max-record-size \(4 bytes\)$' \
	"$T/err" "a csv Example over the limit names file:line"
expect_exit 1 "$PACK" --from csv --output lim/c --max-record-size 64K /dev/zero
expect_match '/dev/zero:1: field 1 longer than --max-record-size' "$T/err" "csv over /dev/zero stops at the limit"
pack --from lines --output lim/t lim4.txt
expect_exit 1 "$PACK" --from tfrecord --output lim/tt --max-record-size 4 lim/t
expect_match 'lim/t-00000-of-00001\.tfrecord: offset 20 \(record 1\): record length exceeds limit' \
	"$T/err" "a tfrecord input record over the limit names file, offset and record"
expect_exit 1 "$PACK" --from dir --output lim/d --max-record-size 3 tree
expect_match 'tree/cat/a\.jpg: a file of 4 bytes, over --max-record-size \(3 bytes\)' "$T/err" \
	"a dir file over the limit is named"
expect_exit 1 "$PACK" --from idx --images img.idx --labels lab.idx --output lim/i --max-record-size 30
expect_match 'img\.idx: image 1: a record of 39 bytes, over --max-record-size \(30 bytes\)' "$T/err" \
	"an idx Example over the limit is named"
expect_eq 0 "$(ls -A lim | grep -vc '^l-\|^t-')" "runs over the limit write nothing"

# A line larger than the memory the process may have: an error naming the
# line, never taken for the end of the input (getline's ENOMEM once was:
# exit 0 and the records lost). The memory is limited by ASan's allocator
# when the tools are built with it, else by ulimit -v.
SAN=$(sed -n 's/^LDFLAGS = //p' "$BIN/Makefile" 2>/dev/null | grep -o -- '-fsanitize=[a-z,]*')
case $SAN in
*address*) limited() { ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=32" "$@"; } ;;
*thread*) limited() { TSAN_OPTIONS="${TSAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=32" "$@"; } ;;
*) limited() { (ulimit -v 180000 && exec "$@"); } ;;
esac
head -c 200000000 /dev/zero | limited "$PACK" --from lines --output lim/m - >"$T/out" 2>"$T/err"
expect_eq 1 $? "a line larger than memory: exit 1"
expect_match '^recordio-pack: standard input:1: out of memory for a line of more than [0-9]+ bytes$' \
	"$T/err" "a line larger than memory: the error names the line"
limited "$PACK" --from csv --output lim/m /dev/zero >"$T/out" 2>"$T/err"
expect_eq 1 $? "a csv field larger than memory: exit 1"
expect_match '^recordio-pack: /dev/zero:1: out of memory' "$T/err" \
	"a csv field larger than memory: the error names the line"
expect_eq 0 "$(ls -A lim | grep -c '^m-')" "nothing written when memory runs out"

# ---- --from csv ----------------------------------------------------------

mkdir csv
pack --from csv --label label --output csv/d data.csv
expect_lines 3 csv/d-00000-of-00001.tfrecord.idx "a blank line is skipped"
if [ $HAVE_CAT = 1 ]; then
	expect_exit 0 "$CAT" --format json csv/d-00000-of-00001.tfrecord
	# "a,b" is YSxi, 'say "hi"' is c2F5ICJoaSI=
	expect_eq '{"x": {"float": [1.5]}, "name": {"bytes": ["YSxi"]}, "label": {"int64": [3]}, "y": {"float": ["NaN"]}}' \
		"$(sed -n 1p "$T/out")" "csv row 1: float, quoted comma, int64 label, empty float"
	expect_eq '{"x": {"float": [2]}, "name": {"bytes": ["c2F5ICJoaSI="]}, "label": {"int64": [-4]}, "y": {"float": [700]}}' \
		"$(sed -n 2p "$T/out")" "csv row 2: doubled quotes, negative label, exponent"
fi
# the same bytes in the shard: the quoted "a,b" and the int64 label 3
records_hex csv/d-00000-of-00001.tfrecord >csv/hex
expect_match '0a03612c62' csv/hex "csv bytes feature holds a,b"
# nan, inf and infinity (any case, any sign) are numbers: the column stays
# float, and the summary counts them per column
printf 'x,y,z,s\nnan,1,1,a\nNaN,-inf,2,b\n+inf,Infinity,1e39,c\n-Infinity,,3,d\nINF,-INFINITY,-nan,e\n' >special.csv
pack --from csv --output csv/sp special.csv
expect_match "^column 'x': float, 2 nan, 2 inf, 1 -inf\$" "$T/out" "csv specials counted (x)"
expect_match "^column 'y': float, 1 inf, 2 -inf, 1 empty \\(NaN\\)\$" "$T/out" "csv specials counted (y)"
expect_match "^column 'z': float, 1 nan, 1 beyond float range \\(\\+-inf\\)\$" "$T/out" \
	"a decimal beyond float range is counted"
expect_eq 0 "$(grep -c "column 's'" "$T/out")" "a bytes column has no specials line"
if [ $HAVE_CAT = 1 ]; then
	expect_exit 0 "$CAT" --format json csv/sp-00000-of-00001.tfrecord
	expect_eq '{"x": {"float": ["NaN"]}, "y": {"float": [1]}, "z": {"float": [1]}, "s": {"bytes": ["YQ=="]}}' \
		"$(sed -n 1p "$T/out")" "csv nan is a float NaN"
	expect_eq '{"x": {"float": ["Infinity"]}, "y": {"float": ["Infinity"]}, "z": {"float": ["Infinity"]}, "s": {"bytes": ["Yw=="]}}' \
		"$(sed -n 3p "$T/out")" "csv +inf, Infinity are float infinities"
	expect_eq '{"x": {"float": ["Infinity"]}, "y": {"float": ["-Infinity"]}, "z": {"float": ["NaN"]}, "s": {"bytes": ["ZQ=="]}}' \
		"$(sed -n 5p "$T/out")" "csv INF, -INFINITY, -nan"
fi
pack --from csv --output csv/sp2 --quiet special.csv
expect_eq "" "$(cat "$T/out")" "--quiet prints no specials either"
printf 'x\nnana\n1\n' >notnan.csv
pack --from csv --output csv/nn notnan.csv
expect_eq 0 "$(grep -c '^column' "$T/out")" "nana is not a number: a bytes column"
printf 'a,label\n1,2\n3,x\n' >badlabel.csv
expect_exit 1 "$PACK" --from csv --label label --output csv/bad badlabel.csv
expect_match 'badlabel\.csv:3' "$T/err" "a non-integer label names file:line"
printf 'a,label\n1,2\n3,2.5\n' >badlabel2.csv
expect_exit 1 "$PACK" --from csv --label label --output csv/bad badlabel2.csv
expect_match 'badlabel2\.csv:3' "$T/err" "a fractional label names file:line"
printf 'a,b,c\r\n1,2,3\r\n4,5\r\n' >short.csv
expect_exit 1 "$PACK" --from csv --output csv/bad short.csv
expect_match 'short\.csv:3' "$T/err" "a short row names file:line"
printf 'a,b\n1,"2,3",4\n' >long.csv
expect_exit 1 "$PACK" --from csv --output csv/bad long.csv
expect_match 'long\.csv:2' "$T/err" "a long row names file:line"
printf 'a,b\n1,"open\n' >quote.csv
expect_exit 1 "$PACK" --from csv --output csv/bad quote.csv
expect_match 'quote\.csv:2' "$T/err" "an unterminated quote names file:line"
expect_exit 1 "$PACK" --from csv --label nosuch --output csv/bad data.csv
expect_match 'nosuch' "$T/err" "an unknown --label column is named"
expect_exit 1 "$PACK" --from csv --output csv/bad missing.csv
expect_match 'missing\.csv' "$T/err" "a missing csv is named"
expect_eq 0 "$(ls -A csv | grep -c bad)" "failed csv runs write nothing"

# ---- --from dir ----------------------------------------------------------

mkdir dir
pack --from dir --output dir/t tree
expect_lines 3 dir/t-00000-of-00001.tfrecord.idx "one record per file in a class directory"
if [ $HAVE_CAT = 1 ]; then
	expect_exit 0 "$CAT" --format json dir/t-00000-of-00001.tfrecord
	# purr=cHVycg== cat/a.jpg=Y2F0L2EuanBn, meow=bWVvdw== cat/b.jpg=Y2F0L2IuanBn,
	# woof=d29vZg== dog/x.jpg=ZG9nL3guanBn
	expect_eq '{"data": {"bytes": ["cHVycg=="]}, "label": {"int64": [0]}, "name": {"bytes": ["Y2F0L2EuanBn"]}}' \
		"$(sed -n 1p "$T/out")" "dir record 0: cat/a.jpg"
	expect_eq '{"data": {"bytes": ["bWVvdw=="]}, "label": {"int64": [0]}, "name": {"bytes": ["Y2F0L2IuanBn"]}}' \
		"$(sed -n 2p "$T/out")" "dir record 1: cat/b.jpg"
	expect_eq '{"data": {"bytes": ["d29vZg=="]}, "label": {"int64": [1]}, "name": {"bytes": ["ZG9nL3guanBn"]}}' \
		"$(sed -n 3p "$T/out")" "dir record 2: dog/x.jpg, label 1"
fi
records_hex dir/t-00000-of-00001.tfrecord >dir/hex
expect_match '70757272' dir/hex "dir record holds the file's bytes"
expect_match '6361742f612e6a7067' dir/hex "dir record holds CLASS/FILE"
expect_exit 1 "$PACK" --from dir --output dir/bad no-such-dir
expect_match 'no-such-dir' "$T/err" "a missing directory is named"
mkdir flat
printf x >flat/file
expect_exit 1 "$PACK" --from dir --output dir/bad flat

# ---- --from tfrecord -----------------------------------------------------

mkdir tf
PENGUIN="$TESTDATA/tfx-penguin-train.tfrecord.gz"
if [ -f "$PENGUIN" ]; then
	pack --from tfrecord --output tf/p --compression lz4 --shards 4 "$PENGUIN"
	expect_eq 4 "$(ls tf/p-*-of-00004.tfrecord.lz4 | wc -l | tr -d ' ')" "TF gzip to 4 lz4 shards"
	expect_eq 234 "$(cat tf/p-*.idx | wc -l | tr -d ' ')" "every record re-sharded"
	pack --from tfrecord --output tf/back tf/p
	expect_lines 234 tf/back-00000-of-00001.tfrecord.idx "a shard PREFIX as input"
	if command -v zcat >/dev/null 2>&1; then
		zcat "$PENGUIN" >tf/orig
		expect_exit 0 cmp tf/orig tf/back-00000-of-00001.tfrecord
	fi
	pack --from tfrecord --output tf/glob "tf/p-*.lz4"
	expect_exit 0 cmp tf/back-00000-of-00001.tfrecord tf/glob-00000-of-00001.tfrecord
	if [ $HAVE_CAT = 1 ]; then
		expect_eq 234 "$("$CAT" --count tf/p)" "recordio-cat counts the re-sharded set"
	fi
	# a damaged second input: an error naming it, nothing written
	cp tf/back-00000-of-00001.tfrecord tf-damaged.tfrecord
	truncate -s -3 tf-damaged.tfrecord 2>/dev/null || head -c 1000 tf/orig >tf-damaged.tfrecord
	mkdir tfbad
	expect_exit 1 "$PACK" --from tfrecord --output tfbad/x --shard-size 1K "$PENGUIN" tf-damaged.tfrecord
	expect_match 'tf-damaged\.tfrecord' "$T/err" "a damaged input is named"
	expect_eq 0 "$(nfiles tfbad)" "nothing left after a damaged input (--shard-size)"
	expect_exit 1 "$PACK" --from tfrecord --output tfbad/x --shuffle --shards 2 "$PENGUIN" tf-damaged.tfrecord
	expect_eq 0 "$(nfiles tfbad)" "nothing left after a damaged input (--shuffle)"
else
	echo "cli_pack.sh: $PENGUIN missing; TensorFlow input tests skipped" >&2
fi
expect_exit 1 "$PACK" --from tfrecord --output tf/bad no-such.tfrecord
expect_match 'no-such\.tfrecord' "$T/err" "a missing tfrecord input is named"

# ---- --shuffle -----------------------------------------------------------

mkdir shuf
pack --from idx --images img.idx --labels lab.idx --output shuf/a --shuffle --seed 42 --shards 2
expect_match 'seed 42' "$T/out" "the summary gives the seed"
pack --from idx --images img.idx --labels lab.idx --output shuf/b --shuffle --seed 42 --shards 2
pack --from idx --images img.idx --labels lab.idx --output shuf/c --shuffle --seed 43 --shards 2
expect_exit 0 cmp shuf/a-00000-of-00002.tfrecord shuf/b-00000-of-00002.tfrecord
expect_exit 0 cmp shuf/a-00001-of-00002.tfrecord shuf/b-00001-of-00002.tfrecord
cat shuf/a-0000[01]-of-00002.tfrecord >shuf/a.all
cat shuf/c-0000[01]-of-00002.tfrecord >shuf/c.all
expect_exit 1 cmp -s shuf/a.all shuf/c.all
expect_lines 2 shuf/a-00000-of-00002.tfrecord.idx "shuffled --shards 2 over 5: 2 + 3"
expect_lines 3 shuf/a-00001-of-00002.tfrecord.idx "shuffled --shards 2 over 5: 2 + 3"
# a permutation: the same records, in another order
{ records_hex shuf/a-00000-of-00002.tfrecord; records_hex shuf/a-00001-of-00002.tfrecord; } | sort >shuf/a.sorted
sort idx/hex >shuf/orig.sorted
expect_exit 0 cmp shuf/a.sorted shuf/orig.sorted
pack --from lines --output shuf/l1 --shuffle --seed 1 lines.txt
pack --from lines --output shuf/l2 --shuffle --seed 1 lines.txt
expect_exit 0 cmp shuf/l1-00000-of-00001.tfrecord shuf/l2-00000-of-00001.tfrecord
pack --from lines --output shuf/r --shuffle lines.txt
expect_match 'shuffled with seed [0-9]+' "$T/out" "a random seed is printed"

# ---- nothing left behind; existing output --------------------------------

mkdir fail
expect_exit 1 "$PACK" --from idx --images trunc.idx --labels lab.idx --output fail/x --shards 3
expect_match 'trunc\.idx' "$T/err" "a truncated image file is named"
expect_eq 0 "$(nfiles fail)" "nothing left after a truncated input (--shards)"
expect_exit 1 "$PACK" --from idx --images trunc.idx --labels lab.idx --output fail/x --shard-size 60 -c gzip
expect_eq 0 "$(nfiles fail)" "nothing left after a truncated input (--shard-size)"
expect_exit 1 "$PACK" --from lines --output no-such-dir/x lines.txt
expect_match 'no-such-dir' "$T/err" "a missing output directory is named"
# --shards N counts lines first: a pipe read twice would give empty shards
expect_exit 1 sh -c "printf 'a\\nb\\nc\\n' | '$PACK' --from lines --output fail/p --shards 2 /dev/stdin"
expect_match '/dev/stdin' "$T/err" "a pipe that --shards cannot count is named"
expect_eq 0 "$(nfiles fail)" "nothing written for a pipe with --shards"
expect_exit 0 sh -c "printf 'a\\nb\\nc\\n' | '$PACK' --from lines --output fail/p --shard-size 40 /dev/stdin"
expect_eq 3 "$(cat fail/p-*.idx | wc -l | tr -d ' ')" "a pipe with --shard-size packs every line"
rm -f fail/*

mkdir ex
pack --from idx --images img.idx --labels lab.idx --output ex/d --shards 2
cp ex/d-00000-of-00002.tfrecord ex-saved
expect_exit 1 "$PACK" --from lines --output ex/d --shards 2 lines.txt
expect_match 'ex/d-0000[01]-of-00002\.tfrecord' "$T/err" "an existing shard is named"
expect_exit 0 cmp ex/d-00000-of-00002.tfrecord ex-saved
expect_exit 1 "$PACK" --from lines --output ex/d --shards 3 lines.txt
expect_eq 4 "$(nfiles ex)" "a refused run leaves the old shards alone"
pack --from lines --output ex/d --shards 3 --force lines.txt
expect_eq "ex/d-00000-of-00003.tfrecord ex/d-00000-of-00003.tfrecord.idx ex/d-00001-of-00003.tfrecord ex/d-00001-of-00003.tfrecord.idx ex/d-00002-of-00003.tfrecord ex/d-00002-of-00003.tfrecord.idx" \
	"$(ls -A ex | sed 's|^|ex/|' | tr '\n' ' ' | sed 's/ $//')" "--force replaces the shards and removes the stale -of-00002 ones"
pack --from tfrecord --output ex/d --force --compression gzip ex/d
expect_eq "ex/d-00000-of-00001.tfrecord.gz ex/d-00000-of-00001.tfrecord.gz.idx" \
	"$(ls -A ex | sed 's|^|ex/|' | tr '\n' ' ' | sed 's/ $//')" "re-compressing a prefix in place with --force"
expect_lines 5 ex/d-00000-of-00001.tfrecord.gz.idx "in-place re-compression keeps every record"
# another dataset sharing the prefix's start is not ours to remove
pack --from lines --output ex/d-extra lines.txt
pack --from lines --output ex/d --force lines.txt
expect_exit 0 test -f ex/d-extra-00000-of-00001.tfrecord

# ---- what is not a regular file is never replaced ------------------------

# A FIFO, a character node like /dev/null (made here, root only), a link
# (to a regular file, or dangling) or a directory under a shard's name: each
# refused at the start, --force or not, before the input is read, and left
# as it was; so is a FIFO under the set's commit journal (its read would
# block).
mkdir nonreg
printf 'kept' >nonreg/target
nonreg_cases="fifo link dangling dir"
mknod nonreg/probe c 1 3 2>/dev/null && rm -f nonreg/probe && nonreg_cases="$nonreg_cases device"
for kind in $nonreg_cases; do
	shard=nonreg/n-00000-of-00001.tfrecord
	case $kind in
	fifo) mkfifo $shard ;;
	device) mknod $shard c 1 3 ;;
	link) ln -s target $shard ;;
	dangling) ln -s nothing-here $shard ;;
	dir) mkdir $shard ;;
	esac
	before=$(ls -lA nonreg | sed 's/ [A-Z][a-z][a-z] .* / /')
	for force in "" --force; do
		expect_exit 1 "$PACK" --from lines --output nonreg/n $force lines.txt
		expect_match "$shard: .*not a regular file" "$T/err" "a $kind under a shard's name is refused (${force:-no --force})"
		expect_eq "$before" "$(ls -lA nonreg | sed 's/ [A-Z][a-z][a-z] .* / /')" "the $kind is left as it was (${force:-no --force})"
	done
	rm -rf $shard
done
# an index's name too, and a shard of another count that --force would remove
for name in n-00000-of-00001.tfrecord.idx n-00001-of-00002.tfrecord; do
	mkfifo nonreg/$name
	expect_exit 1 "$PACK" --from lines --output nonreg/n --force lines.txt
	expect_match "nonreg/$name: .*a FIFO" "$T/err" "a FIFO under $name is refused"
	expect_exit 0 test -p nonreg/$name
	rm -f nonreg/$name
done
expect_eq kept "$(cat nonreg/target)" "a link's target is untouched"
expect_eq 1 "$(nfiles nonreg)" "nothing left behind by the refused runs"
mkfifo nonreg/n.commit
expect_exit 1 timeout 60 "$PACK" --from lines --output nonreg/n lines.txt
expect_match 'nonreg/n.commit: .*a FIFO' "$T/err" "a FIFO under the commit journal's name is refused, not read"
expect_exit 0 test -p nonreg/n.commit
rm -rf nonreg

# ---- interrupt -----------------------------------------------------------

# A big input, SIGINT (then SIGTERM) once the first shard is being written
# (a staging file shows the signal handlers are in place): exit 130, and not
# a file left, hidden staging files included. If packing won the race, grow
# the input and try again.
mkdir big
size=100000000
for sig in INT TERM; do
	tries=0
	while :; do
		[ -f big.txt ] && [ "$(wc -c <big.txt)" -ge $size ] || yes abcdefgh | head -c $size >big.txt
		"$PACK" --from lines --output big/b --shards 4 --compression lz4 big.txt >/dev/null 2>"$T/err" &
		pid=$!
		polls=0
		while [ "$(nfiles big)" -eq 0 ] && [ $polls -lt 300 ] && kill -0 $pid 2>/dev/null; do
			sleep 0.1
			polls=$((polls + 1))
		done
		kill -$sig $pid 2>/dev/null
		wait $pid
		rc=$?
		if [ $rc -ne 0 ] || [ $tries -ge 3 ]; then break; fi
		rm -f big/* big/.[!.]*
		size=$((size * 2))
		tries=$((tries + 1))
	done
	expect_eq 130 $rc "SIG$sig exits 130"
	expect_match 'interrupted' "$T/err" "SIG$sig is reported"
	expect_eq 0 "$(nfiles big)" "nothing left after SIG$sig"
done
rm -f big.txt

finish
