#!/bin/sh
# cli_tensorflow.sh — TensorFlow interoperability, both directions, judged by
# TensorFlow itself: shards from recordio-pack (lines, idx; none, gzip, zlib,
# and lz4 through `lz4 -d`) read in tf.data.TFRecordDataset as the expected
# payloads; files from tf.io.TFRecordWriter (raw payloads, Examples with every
# kind of feature) pass recordio-verify and agree with recordio-cat (count,
# hex, json), recordio-index and recordio-pack --from tfrecord.
#
# The work is in tests/tf_interop.py: one python process, so TensorFlow is
# imported once; it prints "PASS name" / "FAIL name: why" per check, which are
# counted here. python3 is the first on PATH: scripts/test.sh puts the
# virtual environment it installs TensorFlow into (build-python/venv)
# first. Skips (77) without python3 or TensorFlow, and says which python3.
. "$(dirname "$0")/cli_lib.sh"

PY="$(dirname "$0")/tf_interop.py"

if ! command -v python3 >/dev/null 2>&1; then
	echo "$(basename "$0"): SKIP: python3 not found"
	rm -rf "$T"
	exit 77
fi

for t in pack cat verify index; do
	if [ -x "$BIN/recordio-$t" ]; then pass; else fail "$BIN/recordio-$t not built"; fi
done

TF_CPP_MIN_LOG_LEVEL=3 TF_ENABLE_ONEDNN_OPTS=0 \
	python3 "$PY" "$BIN" "$T" "$TESTDATA" >"$T/py.out" 2>"$T/py.err"
rc=$?
if [ "$rc" -eq 77 ]; then
	echo "$(basename "$0"): $(grep '^SKIP' "$T/py.out" || echo 'SKIP: tf_interop.py asked to skip')"
	rm -rf "$T"
	exit 77
fi

while IFS= read -r line; do
	case $line in
	PASS\ *) pass ;;
	FAIL\ *) fail "${line#FAIL }" ;;
	NOTE:*) echo "$line" ;;
	"  "*) echo "$line" >&2 ;; # the indented detail of a failure
	esac
done <"$T/py.out"

expect_match '^DONE ' "$T/py.out" "tf_interop.py ran to its end"
expect_eq 0 "$rc" "tf_interop.py exit status"
if [ "$rc" -ne 0 ]; then tail -20 "$T/py.err" | sed 's/^/  python stderr: /' >&2; fi
finish
