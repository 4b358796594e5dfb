#!/bin/sh
# cli_cat.sh — recordio-cat: record counts of the TensorFlow-written golden
# files, --head across files, shard specs (glob, list, PREFIX), the example,
# json, hex and raw formats on known records, payloads that are not Examples,
# SequenceExamples and TensorBoard event files, "_raw" for what the decoder
# does not show, damage in the middle, and usage errors.
. "$(dirname "$0")/cli_lib.sh"

D="$TESTDATA"
MNIST="$D/tfx-mnist.tfrecord"
MIXED="$D/tf-mixed-types.tfrecord"
SINGLES="$D/tf-singles.tfrecord"

# Payload bytes of a plain shard's record: FILE OFFSET LENGTH, as lowercase hex.
payload_hex() {
	od -An -v -tx1 -j "$(($2 + 12))" -N "$3" "$1" | tr -d ' \n'
}

# ---- usage -------------------------------------------------------------------
expect_exit 0 "$CAT" --help
expect_match '^Usage: recordio-cat' "$T/out" "--help on stdout"
expect_match '--format' "$T/out" "--help lists --format"
expect_exit 2 "$CAT"
expect_match "Try 'recordio-cat --help'" "$T/err" "no FILE: try --help"
expect_exit 2 "$CAT" --format xml "$SINGLES"
expect_match "xml" "$T/err" "bad --format named"
expect_exit 2 "$CAT" --head abc "$SINGLES"
expect_exit 2 "$CAT" ""
expect_match "empty FILE argument" "$T/err" "an empty argument is named"
expect_exit 2 "$CAT" --head -1 "$SINGLES"
expect_exit 2 "$CAT" --no-such-option "$SINGLES"
expect_match "Try 'recordio-cat --help'" "$T/err" "unknown option: try --help"
expect_exit 1 "$CAT" "$T/missing.tfrecord"
expect_match "missing.tfrecord" "$T/err" "missing file named"

# ---- counts of the golden files ------------------------------------------------
for fc in tfx-mnist.tfrecord:1000 tfx-penguin-train.tfrecord.gz:234 \
	tfx-external-00001-of-00002.tfrecord.gz:5012 tf-singles.tfrecord:3 tf-mixed-types.tfrecord:1; do
	f=${fc%:*}
	n=${fc#*:}
	expect_exit 0 "$CAT" --count "$D/$f"
	expect_eq "$n" "$(cat "$T/out")" "--count $f"
done
expect_exit 0 "$CAT" --count "$MNIST" "$SINGLES" "$MIXED" "$D/tfx-penguin-train.tfrecord.gz"
expect_eq 1238 "$(cat "$T/out")" "--count over four files"
expect_exit 0 "$CAT" --count "$MNIST"
expect_lines 1 "$T/out" "--count prints one line"

# ---- shard specs -------------------------------------------------------------------
mkdir -p "$T/g" "$T/p"
cp "$MNIST" "$SINGLES" "$MIXED" "$T/g/"
expect_exit 0 "$CAT" --count "$T/g/*.tfrecord"
expect_eq 1004 "$(cat "$T/out")" "--count of a glob"
expect_exit 0 "$CAT" --count "$SINGLES,$MIXED"
expect_eq 4 "$(cat "$T/out")" "--count of a comma list"
cp "$SINGLES" "$T/p/part-00000-of-00002.tfrecord"
cp "$MIXED" "$T/p/part-00001-of-00002.tfrecord"
expect_exit 0 "$CAT" --count "$T/p/part"
expect_eq 4 "$(cat "$T/out")" "--count of a PREFIX"
expect_exit 0 "$CAT" --format hex "$T/p/part"
expect_eq "$(payload_hex "$MIXED" 0 52)" "$(sed -n 4p "$T/out")" "PREFIX: shards in order"
rm "$T/p/part-00001-of-00002.tfrecord"
expect_exit 1 "$CAT" --count "$T/p/part"
expect_match "part-00001-of-00002" "$T/err" "incomplete PREFIX names the missing shard"
# a glob whose pattern picks part of a numbered set reads just that part (it
# was refused, naming shard 3, which exists, as missing); a shard it would
# match that is absent is refused, naming that shard alone
mkdir -p "$T/sub"
for k in 0 1 2 3; do cp "$SINGLES" "$T/sub/train-0000$k-of-00004.tfrecord"; done
expect_exit 0 "$CAT" --count "$T/sub/train-0000[0-2]-of-00004.tfrecord"
expect_eq 9 "$(cat "$T/out")" "a glob of 3 of 4 shards: their records"
rm "$T/sub/train-00001-of-00004.tfrecord"
expect_exit 1 "$CAT" --count "$T/sub/train-0000[0-2]-of-00004.tfrecord"
expect_match "^recordio-cat: $T/sub/train-00001-of-00004\.tfrecord: missing shard: 2 of 4 found$" \
	"$T/err" "a glob's absent shard named"
expect_exit 0 "$CAT" --count "$T/sub/train-0000[023]-of-00004.tfrecord"
expect_eq 9 "$(cat "$T/out")" "a glob leaving the absent shard out"

# ---- --head --------------------------------------------------------------------------
expect_exit 0 "$CAT" --count --head 10 "$MNIST"
expect_eq 10 "$(cat "$T/out")" "--count --head 10"
expect_exit 0 "$CAT" --count --head 5000 "$MNIST" "$SINGLES"
expect_eq 1003 "$(cat "$T/out")" "--head beyond the end"
expect_exit 0 "$CAT" --head 2 --format hex "$MNIST"
expect_lines 2 "$T/out" "--head 2 prints 2 records"
expect_exit 0 "$CAT" --head 1001 --format hex "$MNIST" "$SINGLES"
expect_lines 1001 "$T/out" "--head runs across files"
expect_eq "$(payload_hex "$SINGLES" 0 24)" "$(tail -n 1 "$T/out")" "--head: the last record is the next file's first"
expect_exit 0 "$CAT" --head 0 "$MNIST"
expect_lines 0 "$T/out" "--head 0 prints nothing"

# ---- hex --------------------------------------------------------------------------
# hand-made shards: an empty record; "hello" and "world"
printf '\000\000\000\000\000\000\000\000\051\003\230\007\330\352\202\242' >"$T/empty.tfrecord"
printf '\005\000\000\000\000\000\000\000\352\262\004\076hello\273\037\034\031' >"$T/hw.tfrecord"
printf '\005\000\000\000\000\000\000\000\352\262\004\076world\055\116\037\245' >>"$T/hw.tfrecord"
expect_exit 0 "$CAT" --format hex "$T/empty.tfrecord"
expect_lines 1 "$T/out" "hex: one line for the empty record"
expect_eq "" "$(cat "$T/out")" "hex: the empty record is an empty line"
expect_exit 0 "$CAT" --format hex "$T/hw.tfrecord"
expect_eq "68656c6c6f
776f726c64" "$(cat "$T/out")" "hex of hello, world"
expect_exit 0 "$CAT" --format hex "$MIXED"
expect_eq "$(payload_hex "$MIXED" 0 52)" "$(cat "$T/out")" "hex of tf-mixed-types"
expect_exit 0 "$CAT" -f hex "$SINGLES"
expect_eq "$(payload_hex "$SINGLES" 0 24)" "$(sed -n 1p "$T/out")" "hex of tf-singles record 0"
expect_eq "$(payload_hex "$SINGLES" 40 29)" "$(sed -n 2p "$T/out")" "hex of tf-singles record 1"
expect_exit 0 "$CAT" --format hex "$MNIST"
expect_lines 1000 "$T/out" "hex: 1000 lines for mnist"
expect_eq 6374 "$(sed -n 1000p "$T/out" | tr -d '\n' | wc -c | tr -d ' ')" "hex: 3187 bytes, 6374 digits"

# ---- raw ----------------------------------------------------------------------------
expect_exit 0 "$CAT" --format raw "$T/hw.tfrecord"
expect_eq "hello
world" "$(cat "$T/out")" "raw: payloads, one a line"

# ---- example (the default) -------------------------------------------------------------
expect_exit 0 "$CAT" "$MIXED"
expect_match "^record 0 \(.*tf-mixed-types.tfrecord, offset 0, 52 bytes\)$" "$T/out" "example: record line"
expect_match "^  answer: int64\[1\] 42$" "$T/out" "example: answer 42"
expect_match "^  pi: float\[1\] 3\.14$" "$T/out" "example: pi 3.14"
expect_match '^  name: bytes\[1\] "ABC"$' "$T/out" "example: name ABC"
expect_exit 0 "$CAT" "$SINGLES"
expect_match '^  int_feature: int64\[1\] 42$' "$T/out" "singles: int_feature"
expect_match '^  float_feature: float\[1\] 3\.14$' "$T/out" "singles: float_feature"
expect_match '^  byte_feature: bytes\[1\] "@ABCD"$' "$T/out" "singles: byte_feature"
expect_match "^record 2 \(.*, offset 85, 29 bytes\)$" "$T/out" "singles: record 2 offset"
expect_exit 0 "$CAT" --head 1 "$MNIST"
expect_match '^  image_class: int64\[1\] 9$' "$T/out" "mnist record 0 is a 9"
expect_match '^  image_floats: float\[784\]( -0\.5){8} \.\.\.$' "$T/out" "mnist floats: 8 values then ..."
expect_exit 0 "$CAT" --format example "$T/hw.tfrecord"
expect_match "^record 0 \(.*, offset 0, 5 bytes\): not a tf.train.Example$" "$T/out" "raw payload noted"
expect_match '^  text: "hello"$' "$T/out" "raw payload shown as text"
expect_exit 0 "$CAT" "$T/empty.tfrecord"
expect_match "^  \(no features\)$" "$T/out" "an empty payload is an empty Example"
expect_exit 0 "$CAT" "$D/tfx-external-00001-of-00002.tfrecord.gz"
expect_match ": none\[0\]$" "$T/out" "a Feature with no kind set"

# ---- json ----------------------------------------------------------------------------
expect_exit 0 "$CAT" --format json "$MIXED"
expect_eq '{"answer": {"int64": [42]}, "pi": {"float": [3.1400001]}, "name": {"bytes": ["QUJD"]}}' \
	"$(cat "$T/out")" "json of tf-mixed-types"
expect_exit 0 "$CAT" --format json "$SINGLES"
expect_eq '{"int_feature": {"int64": [42]}}
{"float_feature": {"float": [3.1400001]}}
{"byte_feature": {"bytes": ["QEFCQ0Q="]}}' "$(cat "$T/out")" "json of tf-singles"
expect_exit 0 "$CAT" --format json "$T/hw.tfrecord" "$T/empty.tfrecord"
expect_eq '{"_raw": "aGVsbG8="}
{"_raw": "d29ybGQ="}
{}' "$(cat "$T/out")" "json of raw payloads and of an empty Example"
expect_exit 0 "$CAT" --format json "$MNIST"
expect_lines 1000 "$T/out" "json: one line per record"
expect_match '"image_floats": \{"float": \[-0\.5, -0\.5, ' "$T/out" "json: mnist floats"
expect_match '^\{"image_class": \{"int64": \[9\]\}, ' "$T/out" "json: mnist class"
expect_exit 0 "$CAT" --format json "$D/tfx-external-00001-of-00002.tfrecord.gz"
expect_lines 5012 "$T/out" "json: external, one line per record"
expect_match '\{"none": \[\]\}' "$T/out" "json: a Feature with no kind set"
if command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    ex = json.loads(line)
    for name, v in ex.items():
        assert len(v) == 1 and list(v)[0] in ("bytes", "float", "int64", "none"), v
    n += 1
assert n == 5012, n
' "$T/out"; then pass; else fail "json output does not parse as JSON"; fi
fi

# floats that JSON has no numbers for: a hand-made Example {f: float [inf, -inf, nan]}
printf '\031\000\000\000\000\000\000\000\213\361\010\050\012\027\012\025\012\001\146\022\020\022\016\012\014\000\000\200\177\000\000\200\377\000\000\300\177\053\252\241\361' >"$T/inf.tfrecord"
expect_exit 0 "$CAT" --format json "$T/inf.tfrecord"
expect_eq '{"f": {"float": ["Infinity", "-Infinity", "NaN"]}}' "$(cat "$T/out")" "json: inf, -inf, nan"
expect_exit 0 "$CAT" "$T/inf.tfrecord"
expect_match '^  f: float\[3\] inf -inf nan$' "$T/out" "example: inf, -inf, nan"

# ---- SequenceExample (TensorFlow-written: tests/data/make_tf_files.py) ---------------------
SEQ="$D/tf-sequence-example.tfrecord"
SEQ0='{"_type": "SequenceExample", "context": {"id": {"bytes": ["c2VxLTA="]}, "length": {"int64": [3]}, "weight": {"float": [0.5]}}, "feature_lists": {"tokens": [{"bytes": ["dGhl"]}, {"bytes": ["Y2F0"]}, {"bytes": ["c2F0", "IQ=="]}], "scores": [{"float": [0.25]}, {"float": ["NaN", "Infinity"]}, {"float": ["-Infinity", -0]}], "ids": [{"int64": [1]}, {"int64": [2, 3]}, {"int64": [-1, 9223372036854775807]}]}}'
SEQ1='{"_type": "SequenceExample", "context": {"id": {"bytes": ["c2VxLTE="]}, "length": {"int64": [0]}}, "feature_lists": {"tokens": [], "unset": [{"none": []}]}}'
SEQ2='{"_type": "SequenceExample", "context": {}, "feature_lists": {"x": [{"float": [1.5]}, {"float": [2.5]}]}}'
for f in "$SEQ" "$SEQ.gz"; do
	expect_exit 0 "$CAT" --format json "$f"
	expect_eq "$SEQ0
$SEQ1
$SEQ2" "$(cat "$T/out")" "json of $(basename "$f"): context and every feature list, every value"
done
expect_exit 0 "$CAT" "$SEQ"
expect_match "^record 0 \(.*, offset 0, 200 bytes\): tf\.train\.SequenceExample$" "$T/out" \
	"example: a SequenceExample is named"
expect_match '^    length: int64\[1\] 3$' "$T/out" "example: context feature"
expect_match '^    tokens: 3 steps$' "$T/out" "example: a feature list and its steps"
expect_match '^      \[2\] bytes\[2\] "sat" "!"$' "$T/out" "example: a step's values"
expect_match '^      \[1\] float\[2\] nan inf$' "$T/out" "example: float step"
expect_match '^      \[2\] int64\[2\] -1 9223372036854775807$' "$T/out" "example: int64 step"
expect_match '^    tokens: 0 steps$' "$T/out" "example: an empty list"
expect_match '^      \[0\] none\[0\]$' "$T/out" "example: a step with no kind"
expect_match '^    \(no features\)$' "$T/out" "example: no context"

# ---- parts the decoder does not show are kept in "_raw" -----------------------------------
# Example {k: int64 [1]} followed by an unknown field 3 = 5
printf '\020\000\000\000\000\000\000\000\225\373\376\030\012\014\012\012\012\001\153\022\005\032\003\012\001\001\030\005\234\133\266\337' >"$T/unknown.tfrecord"
expect_exit 0 "$CAT" --format json "$T/unknown.tfrecord"
expect_eq '{"k": {"int64": [1]}, "_raw": "CgwKCgoBaxIFGgMKAQEYBQ=="}' "$(cat "$T/out")" \
	"json: an unknown field keeps the whole payload in _raw"
expect_exit 0 "$CAT" "$T/unknown.tfrecord"
expect_match '^  \(1 more part not shown: unknown fields or overridden values; --format json keeps them in "_raw"\)$' \
	"$T/out" "example: an unknown field is mentioned"
# Example {"\xff": int64 [1]}: a name that is not UTF-8 cannot round-trip through a JSON string
printf '\016\000\000\000\000\000\000\000\305\345\151\077\012\014\012\012\012\001\377\022\005\032\003\012\001\001\012\152\052\016' >"$T/ff.tfrecord"
expect_exit 0 "$CAT" --format json "$T/ff.tfrecord"
expect_eq '{"\u00ff": {"int64": [1]}, "_raw": "CgwKCgoB/xIFGgMKAQE="}' "$(cat "$T/out")" \
	"json: a name that is not UTF-8 adds _raw"
expect_exit 0 "$CAT" --format json "$MIXED" "$SEQ"
if grep -q '_raw' "$T/out"; then fail "json: no _raw for records decoded whole"; else pass; fi

# ---- TensorBoard event files ----------------------------------------------------------
EV="$D/events.out.tfevents.tb-simple-value"
expect_exit 0 "$CAT" --format json "$EV"
expect_lines 4 "$T/out" "json of an event file: one line per event"
expect_match '^\{"_type": "Event", "wall_time": [0-9.e+]+, "step": 0, "file_version": "brain.Event:2", "_raw": "' \
	"$T/out" "json: the file header event"
expect_eq '{"_type": "Event", "wall_time": 1700000000, "step": 0, "summary": [{"tag": "loss", "value": 2}]}
{"_type": "Event", "wall_time": 1700000010, "step": 10, "summary": [{"tag": "loss", "value": 1}]}
{"_type": "Event", "wall_time": 1700000020, "step": 20, "summary": [{"tag": "loss", "value": 0.5}]}' \
	"$(sed 1d "$T/out")" "json: simple_value events, whole (no _raw)"
expect_exit 0 "$CAT" "$EV"
expect_match '^record 2 \(.*, offset 128, 26 bytes\): TensorBoard event$' "$T/out" "example: an event"
expect_match '^  step 10, wall time 1700000010$' "$T/out" "example: step and wall time"
expect_match '^  "loss": 1$' "$T/out" "example: a scalar"
expect_exit 0 "$CAT" --format json "$D/events.out.tfevents.tf-2-x"
expect_lines 21 "$T/out" "json of a TF 2 event file"
expect_match '^\{"_type": "Event", "wall_time": [0-9.e+]+, "step": 9, "summary": \[\{"tag": "loss", "value": 0\.10000000149011612\}\], "_raw": "' \
	"$T/out" "json: a TF 2 scalar (a tensor, metadata kept in _raw)"

# ---- round trips through recordio-pack (when it is built) --------------------------------
if [ -x "$BIN/recordio-pack" ]; then
	printf 'alpha\nbeta\n\ngamma with spaces\n' >"$T/lines.txt"
	for c in none gzip zlib lz4; do
		expect_exit 0 "$BIN/recordio-pack" --quiet --from lines --output "$T/rt-$c" --shards 3 \
			--compression $c "$T/lines.txt"
		expect_exit 0 "$CAT" --count "$T/rt-$c"
		expect_eq 4 "$(cat "$T/out")" "pack lines ($c): count"
		expect_exit 0 "$CAT" --format raw "$T/rt-$c"
		if cmp -s "$T/lines.txt" "$T/out"; then pass; else fail "pack lines ($c) | cat raw differs"; fi
	done
	printf 'x,y,label\n1.5,,3\n2.5,7,4\n' >"$T/t.csv"
	expect_exit 0 "$BIN/recordio-pack" --quiet --from csv --label label --output "$T/csv" "$T/t.csv"
	expect_exit 0 "$CAT" --format json "$T/csv"
	expect_match '"y": \{"float": \["NaN"\]\}' "$T/out" "json: an empty CSV cell is NaN"
	expect_match '"label": \{"int64": \[4\]\}' "$T/out" "json: CSV label"
fi

# ---- damage in the middle ---------------------------------------------------------------
# tfx-mnist records are 3187 bytes of data, 3203 framed: record 2 starts at 6406;
# flip a data byte
cp "$MNIST" "$T/bad.tfrecord"
printf '\377' | dd of="$T/bad.tfrecord" bs=1 seek=$((6406 + 12 + 100)) conv=notrunc 2>/dev/null
expect_exit 1 "$CAT" --format hex "$T/bad.tfrecord"
expect_lines 2 "$T/out" "records before the damage are printed"
expect_match "bad\.tfrecord: offset 6406 \(record 2\): corrupted record \(data CRC mismatch\)" \
	"$T/err" "damage named with file and offset"
expect_lines 1 "$T/err" "one error line"
expect_exit 1 "$CAT" --count "$T/bad.tfrecord"
expect_lines 0 "$T/out" "--count of a damaged shard prints no count"
expect_exit 0 "$CAT" --count --head 2 "$T/bad.tfrecord"
expect_eq 2 "$(cat "$T/out")" "--head stops before the damage"
# a truncated file
head -c 3300 "$MNIST" >"$T/short.tfrecord"
expect_exit 1 "$CAT" --format hex "$T/short.tfrecord"
expect_lines 1 "$T/out" "truncated: the whole record before it printed"
expect_match "short\.tfrecord: offset 3203 \(record 1\): truncated record" "$T/err" "truncated named"

finish
