#!/bin/sh
# cli_info.sh — recordio-info: record counts, sizes, compression and the
# feature schema of the golden files (text and --json), totals over several
# shards and a PREFIX, raw payloads, damage and usage errors.
. "$(dirname "$0")/cli_lib.sh"

INFO="$BIN/recordio-info"
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

# ---- damage ------------------------------------------------------------------------
cp "$MNIST" "$T/bad.tfrecord"
printf '\000' | dd of="$T/bad.tfrecord" bs=1 seek=$((4 * 3203 + 9)) conv=notrunc 2>/dev/null
expect_exit 1 "$INFO" "$T/bad.tfrecord"
expect_match "bad\.tfrecord: offset 12812 \(record 4\): corrupted record \(length CRC mismatch\)" \
	"$T/err" "damage named"

finish
