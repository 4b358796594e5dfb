#!/bin/sh
# cli_info.sh — recordio-info: record counts, sizes, compression and the
# feature schema of the golden files (text and --json), totals over several
# shards and a PREFIX, raw payloads, SequenceExample feature lists,
# TensorBoard event files, records the decoder does not fully show, damage
# and usage errors.
. "$(dirname "$0")/cli_lib.sh"

D="$TESTDATA"
MNIST="$D/tfx-mnist.tfrecord"
EXT="$D/tfx-external-00001-of-00002.tfrecord.gz"
PENGUIN="$D/tfx-penguin-train.tfrecord.gz"

# ---- usage -------------------------------------------------------------------
expect_exit 0 "$INFO" --help
expect_match '^Usage: recordio-info' "$T/out" "--help on stdout"
expect_exit 2 "$INFO"
expect_match "Try 'recordio-info --help'" "$T/err" "no FILE"
expect_exit 2 "$INFO" --bogus "$MNIST"
expect_exit 1 "$INFO" "$T/missing.tfrecord"
expect_match "missing\.tfrecord" "$T/err" "missing file named"

# ---- text ----------------------------------------------------------------------------
expect_exit 0 "$INFO" "$MNIST"
expect_match "^shard +records +bytes +stream +compression$" "$T/out" "header line"
expect_match "tfx-mnist\.tfrecord +1000 +3\.1 MiB +3\.1 MiB +none$" "$T/out" "mnist shard line"
expect_match "^record sizes: 3187\.\.3187 bytes" "$T/out" "mnist record sizes"
expect_match "^features \(in 1000 of 1000 records parsed as Examples\):$" "$T/out" "features header"
expect_match "^  image_class +int64 +length 1\.\.1 +in 1000 records$" "$T/out" "image_class"
expect_match "^  image_floats +float +length 784\.\.784 +in 1000 records$" "$T/out" "image_floats"

expect_exit 0 "$INFO" "$PENGUIN"
expect_match "tfx-penguin-train\.tfrecord\.gz +234 +4\.9 KiB +34\.7 KiB +gzip$" "$T/out" "penguin shard line"
for f in body_mass_g culmen_depth_mm culmen_length_mm flipper_length_mm; do
	expect_match "^  $f +float +length 1\.\.1 +in 234 records$" "$T/out" "penguin $f"
done
expect_match "^  species +int64 +length 1\.\.1 +in 234 records$" "$T/out" "penguin species"

expect_exit 0 "$INFO" "$EXT"
expect_match "\.gz +5012 .* gzip$" "$T/out" "external shard line"
expect_match "^  company +bytes\|none +length 0\.\.1 \(bytes per value [0-9]+\.\.[0-9]+\) +in 5012 records$" \
	"$T/out" "a feature that is bytes or unset"
expect_match "^  pickup_census_tract +none +length 0\.\.0 +in 5012 records$" "$T/out" "a feature never set"
expect_match "^  trip_start_timestamp +int64 +length 1\.\.1 +in 5012 records$" "$T/out" "an int64 feature"
expect_eq 18 "$(grep -c '^  [a-z_]* ' "$T/out")" "external: 18 features"

# several shards: a line each, a total, and the union of the features
expect_exit 0 "$INFO" "$D/tf-singles.tfrecord" "$D/tf-mixed-types.tfrecord"
expect_match "^total \(2 shards\) +4 +198 B +198 B$" "$T/out" "total line"
expect_match "^features \(in 4 of 4 records parsed as Examples\):$" "$T/out" "4 Examples"
expect_match "^  int_feature +int64 +length 1\.\.1 +in 1 record$" "$T/out" "int_feature in 1 record"
expect_match "^  name +bytes +length 1\.\.1 \(bytes per value 3\.\.3\) +in 1 record$" "$T/out" "name"
expect_match "^  byte_feature +bytes +length 1\.\.1 \(bytes per value 5\.\.5\) +in 1 record$" "$T/out" \
	"byte_feature"

# a PREFIX
mkdir -p "$T/p"
cp "$MNIST" "$T/p/m-00000-of-00002.tfrecord"
cp "$MNIST" "$T/p/m-00001-of-00002.tfrecord"
expect_exit 0 "$INFO" "$T/p/m"
expect_match "^total \(2 shards\) +2000 " "$T/out" "PREFIX total"
expect_match "^  image_class +int64 +length 1\.\.1 +in 2000 records$" "$T/out" "PREFIX features"

# raw payloads
printf '\005\000\000\000\000\000\000\000\352\262\004\076hello\273\037\034\031' >"$T/hw.tfrecord"
printf '\005\000\000\000\000\000\000\000\352\262\004\076world\055\116\037\245' >>"$T/hw.tfrecord"
expect_exit 0 "$INFO" "$T/hw.tfrecord"
expect_match "^payloads are not tf.train.Example: raw records, sizes 5\.\.5$" "$T/out" "raw payloads"
expect_exit 0 "$INFO" "$T/hw.tfrecord" "$D/tf-singles.tfrecord"
expect_match "^features \(in 3 of 5 records parsed as Examples\):$" "$T/out" "mixed: 3 of 5"
expect_match "^2 records are not Examples" "$T/out" "mixed: 2 raw"
: >"$T/zero.tfrecord"
expect_exit 0 "$INFO" "$T/zero.tfrecord"
expect_match "^no records$" "$T/out" "an empty shard"

# ---- --json -------------------------------------------------------------------------
expect_exit 0 "$INFO" --json "$D/tf-singles.tfrecord" "$PENGUIN"
expect_match '"total": \{"shards": 2, "records": 237, ' "$T/out" "json total"
expect_match '\{"name": "species", "kinds": \["int64"\], "min_length": 1, "max_length": 1, "records": 234\}' \
	"$T/out" "json species"
expect_match '"compression": "gzip"' "$T/out" "json compression"
if command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["records"] for s in d["shards"]] == [3, 234], d["shards"]
assert d["shards"][1]["file_bytes"] < d["shards"][1]["stream_bytes"]
assert d["examples"] == 237 and d["raw_records"] == 0
f = {x["name"]: x for x in d["features"]}
assert len(f) == 8, sorted(f)
assert f["byte_feature"]["min_value_bytes"] == 5
' "$T/out"; then pass; else fail "info --json does not parse or is wrong"; fi
	expect_exit 0 "$INFO" --json "$EXT"
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in d["features"]}
assert f["company"]["kinds"] == ["bytes", "none"], f["company"]
assert f["pickup_census_tract"]["kinds"] == ["none"]
assert d["total"]["records"] == 5012
' "$T/out"; then pass; else fail "info --json of external is wrong"; fi
fi

# ---- SequenceExample (TensorFlow-written) -------------------------------------------
SEQ="$D/tf-sequence-example.tfrecord"
for f in "$SEQ" "$SEQ.gz"; do
	expect_exit 0 "$INFO" "$f"
	expect_match "^context features \(in 3 of 3 records parsed as SequenceExamples\):$" "$T/out" \
		"$(basename "$f"): context header"
	expect_match "^  length +int64 +length 1\.\.1 +in 2 records$" "$T/out" "context: length"
	expect_match "^  id +bytes +length 1\.\.1 \(bytes per value 5\.\.5\) +in 2 records$" "$T/out" "context: id"
	expect_match "^feature lists \(in 3 of 3 records parsed as SequenceExamples\):$" "$T/out" \
		"feature lists header"
	expect_match "^  tokens +bytes +steps 0\.\.3, values per step 1\.\.2 +in 2 records$" "$T/out" "list tokens"
	expect_match "^  ids +int64 +steps 3\.\.3, values per step 1\.\.2 +in 1 record$" "$T/out" "list ids"
	expect_match "^  scores +float +steps 3\.\.3, values per step 1\.\.2 +in 1 record$" "$T/out" "list scores"
	expect_match "^  unset +none +steps 1\.\.1, values per step 0\.\.0 +in 1 record$" "$T/out" "list unset"
	expect_match "^  x +float +steps 2\.\.2, values per step 1\.\.1 +in 1 record$" "$T/out" "list x"
	if grep -q "not Examples\|unknown fields" "$T/out"; then fail "no raw or partial records"; else pass; fi
done
expect_exit 0 "$INFO" --json "$SEQ.gz"
if command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sequence_examples"] == 3 and d["examples"] == 0 and d["raw_records"] == 0, d
assert d["records_not_fully_decoded"] == 0
l = {x["name"]: x for x in d["feature_lists"]}
assert sorted(l) == ["ids", "scores", "tokens", "unset", "x"], sorted(l)
assert l["tokens"] == {"name": "tokens", "kinds": ["bytes"], "min_steps": 0, "max_steps": 3,
                       "records": 2, "min_step_length": 1, "max_step_length": 2}, l["tokens"]
assert l["unset"]["kinds"] == ["none"]
f = {x["name"]: x for x in d["features"]}
assert sorted(f) == ["id", "length", "weight"], sorted(f)
assert d["tensorboard"] is None
' "$T/out"; then pass; else fail "info --json of a SequenceExample file is wrong"; fi
fi

# ---- records with parts the decoder does not show ----------------------------------
printf '\020\000\000\000\000\000\000\000\225\373\376\030\012\014\012\012\012\001\153\022\005\032\003\012\001\001\030\005\234\133\266\337' >"$T/unknown.tfrecord"
expect_exit 0 "$INFO" "$T/unknown.tfrecord"
expect_match '^1 record holds unknown fields or overridden values \(recordio-cat --format json keeps them in "_raw"\)$' \
	"$T/out" "a record with an unknown field is counted"
expect_exit 0 "$INFO" --json "$T/unknown.tfrecord"
expect_match '"records_not_fully_decoded": 1,' "$T/out" "json: records not fully decoded"

# ---- TensorBoard event files ----------------------------------------------------------
EV2="$D/events.out.tfevents.tf-2-x"
EV1="$D/events.out.tfevents.tb-simple-value"
expect_exit 0 "$INFO" "$EV2"
expect_match "^TensorBoard event file: 21 events, steps 0-9, tags: accuracy \(10\), loss \(10\)$" \
	"$T/out" "a TF 2 event file is recognised"
if grep -q "not tf.train.Example" "$T/out"; then fail "events are not raw payloads"; else pass; fi
expect_exit 0 "$INFO" "$EV1" "$EV2"
expect_match "^TensorBoard event files \(2\): 25 events, steps 0-20, tags: accuracy \(10\), loss \(13\)$" \
	"$T/out" "two event files"
expect_exit 0 "$INFO" --json "$EV2"
if command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["shards"][0]["tensorboard"] is True
assert d["events"] == 21 and d["raw_records"] == 0 and d["examples"] == 0, d
tb = d["tensorboard"]
assert tb == {"files": 1, "events": 21, "min_step": 0, "max_step": 9, "untracked_tags": 0,
              "tags": [{"name": "accuracy", "values": 10, "scalars": 10},
                       {"name": "loss", "values": 10, "scalars": 10}]}, tb
' "$T/out"; then pass; else fail "info --json of an event file is wrong"; fi
fi
# an event file's records given in another file are not taken for events
# (only a file whose first record is the header is an event file)
expect_exit 0 "$BIN/recordio-pack" --quiet --from tfrecord --output "$T/evp" "$EV1"
expect_exit 0 "$INFO" "$T/evp-00000-of-00001.tfrecord"
expect_match "^TensorBoard event file: 4 events" "$T/out" "a repacked event file is still one"

# ---- damage ------------------------------------------------------------------------
cp "$MNIST" "$T/bad.tfrecord"
printf '\000' | dd of="$T/bad.tfrecord" bs=1 seek=$((4 * 3203 + 9)) conv=notrunc 2>/dev/null
expect_exit 1 "$INFO" "$T/bad.tfrecord"
expect_match "bad\.tfrecord: offset 12812 \(record 4\): corrupted record \(length CRC mismatch\)" \
	"$T/err" "damage named"

finish
