#!/bin/sh
# python.sh — the Python package's loader against tf.data and PyTorch's
# DataLoader, from Python: decoded Fashion-MNIST (image float32 in [0,1],
# label int64), batch 128, shuffle buffer 10000, every batch touched
# (bench/python.py runs one of them and prints JSON). For each shuffle mode
# (none, buffer, global) it prints records/s and peak RSS of each, and the
# ratios (aim: recordio >= 4x tf.data and >= 10x the DataLoader in
# records/s, <= 1/5 of tf.data's memory). The median of RUNS runs (records/s;
# the largest peak RSS of them); figures,
# never pass/fail.
#
# Usage: bench/python.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: RUNS (default 3), EPOCHS (default 2; the DataLoader runs 1),
#      BENCH_DIR (default /tmp/recordio-bench-python),
#      TF_PYTHON (a python3 with tensorflow; default python3; tf.data is
#      skipped when it cannot import it), FASHION_MNIST (the IDX files,
#      default Debian's /usr/share/datasets/fashion-mnist)
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-pack
RUNS=${RUNS:-3}
EPOCHS=${EPOCHS:-2}
W=${BENCH_DIR:-/tmp/recordio-bench-python}
TF_PYTHON=${TF_PYTHON:-python3}
mkdir -p "$W"

"$B/recordio-pack" --from idx --images "$FM/train-images-idx3-ubyte.gz" \
	--labels "$FM/train-labels-idx1-ubyte.gz" -o "$W/train" -n 4 -f -q

# the package, in a virtual environment over Debian's python3 (NumPy, torch)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
venv="$W/venv"
[ -x "$venv/bin/python" ] || "$PY" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-build-isolation --no-deps --force-reinstall "$RIO_TOP/python" \
	>"$W/pip.out" 2>&1 || { tail -20 "$W/pip.out"; exit 1; }
have_tf=1
"$TF_PYTHON" -c "import tensorflow" >/dev/null 2>&1 || have_tf=0
have_torch=1
"$venv/bin/python" -c "import torch" >/dev/null 2>&1 || have_torch=0

cat "$W"/train-*.tfrecord >/dev/null # page cache
# median KIND SHUFFLE PYTHON EPOCHS: the median of RUNS runs, as "records_per_s peak_rss_mib"
median() {
	i=0
	: >"$W/runs"
	while [ $i -lt "$RUNS" ]; do
		(cd "$W" && "$3" "$RIO_TOP/bench/python.py" "$1" "$2" "$W/train" "$4" 2>/dev/null) \
			| tail -1 >>"$W/runs"
		i=$((i + 1))
	done
	"$venv/bin/python" - "$W/runs" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rates = sorted(r["records_per_s"] for r in runs)
print("%.0f %.0f" % (rates[(len(rates) - 1) // 2], max(r["peak_rss_mib"] for r in runs)))
PY
}

printf '%-8s %-22s %-22s %-22s %s\n' shuffle "recordio rec/s (MiB)" "tf.data rec/s (MiB)" \
	"DataLoader rec/s (MiB)" "ratios: x tf.data, x DataLoader, memory / tf.data"
for mode in none buffer global; do
	set -- $(median recordio $mode "$venv/bin/python" "$EPOCHS")
	r=$1 rm=$2
	t=- tm=- d=- dm=-
	if [ $have_tf = 1 ]; then set -- $(median tfdata $mode "$TF_PYTHON" "$EPOCHS"); t=$1 tm=$2; fi
	if [ $have_torch = 1 ] && [ $mode != buffer ]; then
		set -- $(median torch $mode "$venv/bin/python" 1); d=$1 dm=$2
	fi
	ratios=$("$venv/bin/python" -c "
import sys
r, rm, t, tm, d = sys.argv[1:]
f = lambda a, b: '%.1fx' % (float(a) / float(b)) if b != '-' else 'n/a'
print(f(r, t), f(r, d), ('%.2f' % (float(rm) / float(tm))) if tm != '-' else 'n/a')
" "$r" "$rm" "$t" "$tm" "$d")
	printf '%-8s %-22s %-22s %-22s %s\n' $mode "$r ($rm)" "$t ($tm)" "$d ($dm)" "$ratios"
done
echo "(tf.data global: shuffle over the whole 60000 records; the DataLoader has no buffer mode:"
echo " shuffle=True is its global shuffle. Peak RSS includes each framework's imports; the"
echo " DataLoader's is its main process plus its largest worker.)"
