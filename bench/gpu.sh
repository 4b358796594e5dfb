#!/bin/sh
# gpu.sh — the GPU path on a machine with a CUDA device, in one run (figures,
# never pass/fail, except that the two CUDA test programs must pass there):
#   a. the device (nvidia-smi);
#   b. tests/test_loader_cuda (the loader's pinned batch memory and the
#      asynchronous host-to-device copy of every batch's columns) and
#      tests/test_train_math_cuda (every cuBLAS/kernel operation of the
#      trainer against the CPU backend) must exit 0 here, not skip;
#   c. the loader alone on Fashion-MNIST (lz4 shards, decoded to u8 and
#      i64 columns, read every epoch or decompressed once into memory):
#      the rate the input pipeline can feed;
#   d. recordio-train on one rank, on the same shards, --device cpu (every
#      core to OpenBLAS) against --device cuda, for the default model
#      (784-256-128-10, batch 128) and a wide one (784-4096-4096-10, batch
#      1024), each also on --synthetic batches (made in memory: no input
#      pipeline); samples/s of the median epoch, the data wait (the share
#      of the step the rank waited for its next batch: the GPU idle on
#      data) and, while the cuda runs go, the GPU's busy share sampled by
#      nvidia-smi every 100 ms (median of the samples); then --precision
#      bf16 on the device (cublasGemmEx, bf16 operands, fp32 accumulation);
#   e. the peer: PyTorch on the same GPU (bench/gpu_torch.py), where
#      python3 has torch with CUDA, and our ratio to it;
#   f. a diverging run on both devices: the steps skipped for NaNs.
# Usage: bench/gpu.sh [BUILD_DIR]   (a build configured --with-cuda; default
#        build/). Env: EPOCHS (default 5), FMNIST (the dataset's .gz files,
#        default /usr/share/datasets/fashion-mnist), BENCH_DIR (scratch,
#        default /tmp/recordio-bench-gpu), WORKERS (loader threads, 4).
# Runs as one process without mpirun (an MPI singleton); the figures of one
# run on an H200 are in doc/gpu.md.
set -eu
B=$(cd "${1:-build}" && pwd)
EPOCHS=${EPOCHS:-5}
WORKERS=${WORKERS:-4}
FMNIST=${FMNIST:-/usr/share/datasets/fashion-mnist}
W=${BENCH_DIR:-/tmp/recordio-bench-gpu}
unset OPENBLAS_CORETYPE
mkdir -p "$W"

echo "== a. the device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
echo "host: $(nproc) CPUs"

echo "== b. the CUDA tests (must pass here, not skip)"
for t in test_loader_cuda test_train_math_cuda; do
	rc=0
	(cd "$W" && "$B/tests/$t") >"$W/$t.log" 2>&1 || rc=$?
	tail -3 "$W/$t.log"
	echo "$t: exit $rc"
	[ $rc -eq 0 ] || { cat "$W/$t.log"; exit 1; }
done

echo "== c. Fashion-MNIST shards and the loader alone"
if [ ! -f "$W/fm/train-00000-of-00004.tfrecord.lz4" ]; then
	rm -rf "$W/fm" && mkdir -p "$W/fm"
	"$B/recordio-pack" --from idx --images "$FMNIST/train-images-idx3-ubyte.gz" \
		--labels "$FMNIST/train-labels-idx1-ubyte.gz" --output "$W/fm/train" --shards 4 \
		--compression lz4 >/dev/null
	"$B/recordio-pack" --from idx --images "$FMNIST/t10k-images-idx3-ubyte.gz" \
		--labels "$FMNIST/t10k-labels-idx1-ubyte.gz" --output "$W/fm/test" --shards 2 \
		--compression lz4 >/dev/null
fi
for bs in 128 1024; do
	for cache in 0 1G; do
		"$B/recordio-bench" -J -e 3 -b $bs -s buffer -w "$WORKERS" --cache $cache \
			-d image:u8:784,label:i64:1 "$W/fm/train" >"$W/bench-$bs-$cache.json"
		python3 - "$W/bench-$bs-$cache.json" $bs $cache <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"loader, batch {sys.argv[2]}, --cache {sys.argv[3]}: {j['records_per_s']:.0f} records/s "
      f"decoded ({j['io']}, {j['workers']} workers, 3 epochs)")
PY
	done
done

# run NAME DEVICE ARGS...: one training run, its metrics in $W/NAME.json
run() {
	name=$1 dev=$2; shift 2
	smi=""
	if [ "$dev" = cuda ]; then
		nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 \
			>"$W/$name.util" 2>/dev/null &
		smi=$!
	fi
	rc=0
	"$B/recordio-train" --device "$dev" --epochs "$EPOCHS" --workers "$WORKERS" --quiet \
		--metrics "$W/$name.json" "$@" >"$W/$name.log" 2>&1 || rc=$?
	[ -z "$smi" ] || kill "$smi" 2>/dev/null || :
	[ $rc -eq 0 ] || { echo "$name: exit $rc"; cat "$W/$name.log"; return 1; }
	python3 - "$W/$name" "$name" <<'PY'
import json, os, statistics, sys
base, name = sys.argv[1], sys.argv[2]
eps = [json.loads(l) for l in open(base + ".json")]
rate = statistics.median(e["samples_per_s"] for e in eps)
wait = statistics.median(e["data_wait_fraction"] for e in eps)
acc = eps[-1]["test_accuracy"]
acc = "n/a   " if acc is None else f"{acc:.4f}"
util = ""
if os.path.exists(base + ".util"):
    u = [int(x) for x in open(base + ".util").read().split() if x.isdigit()]
    if u:
        util = f"  GPU busy {statistics.median(u)}% (median of {len(u)} samples)"
per = " ".join(f"{e['samples_per_s']:.0f}" for e in eps)
print(f"{name:24s} {rate:10.0f} samples/s  data wait {100 * wait:5.2f}%  "
      f"test acc {acc}{util}\n{'':24s} every epoch: {per}")
PY
}

DATA="--train $W/fm/train --test $W/fm/test --x image --y label"
echo "== d. recordio-train, 1 rank, $EPOCHS epochs (median epoch)"
for model in "256,128 128" "4096,4096 1024"; do
	set -- $model
	h=$1 b=$2
	echo "-- 784-$(echo "$h" | tr , -)-10, batch $b"
	run "cpu-$h" cpu $DATA --hidden "$h" --batch "$b"
	run "cuda-$h" cuda $DATA --hidden "$h" --batch "$b"
	run "cuda-synth-$h" cuda --synthetic --hidden "$h" --batch "$b"
	run "cuda-bf16-$h" cuda $DATA --hidden "$h" --batch "$b" --precision bf16
	python3 - "$W" "$h" <<'PY'
import json, statistics, sys
w, h = sys.argv[1], sys.argv[2]
rate = lambda n: statistics.median(json.loads(l)["samples_per_s"] for l in open(f"{w}/{n}.json"))
print(f"{'':24s} cuda bf16 / fp32: {rate('cuda-bf16-' + h) / rate('cuda-' + h):.2f}x; "
      f"cuda fp32 / cpu: {rate('cuda-' + h) / rate('cpu-' + h):.1f}x")
PY
done

echo "== e. the peer: PyTorch on the same GPU, the same models and batches, its data"
echo "   in GPU memory (no input pipeline), fp32 and bf16 autocast, $EPOCHS epochs"
# PyTorch brings its own libraries: LD_LIBRARY_PATH, where it was set for
# this build's, is not passed on to it
if env -u LD_LIBRARY_PATH python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	for model in "256,128 128" "4096,4096 1024"; do
		set -- $model
		for p in fp32 bf16; do
			flag=""; ours="cuda-$1"
			[ $p = fp32 ] || { flag=--bf16; ours="cuda-bf16-$1"; }
			env -u LD_LIBRARY_PATH python3 "$(dirname "$0")/gpu_torch.py" --hidden "$1" --batch "$2" --epochs "$EPOCHS" \
				--fmnist "$FMNIST" $flag | tee "$W/torch-$1-$p.txt"
			python3 - "$W/$ours.json" "$W/torch-$1-$p.txt" <<'PY'
import json, re, statistics, sys
ours = statistics.median(json.loads(l)["samples_per_s"] for l in open(sys.argv[1]))
theirs = float(re.search(r": (\d+) samples/s", open(sys.argv[2]).read()).group(1))
print(f"   recordio-train / PyTorch: {ours / theirs:.2f}x ({ours:.0f} against {theirs:.0f} samples/s)")
PY
		done
	done
else
	echo "   skipped: no python3 torch with CUDA here"
fi

echo "== f. a diverging run (--lr 1e6), 1 rank: the steps skipped for a NaN or an"
echo "   infinity, on the CPU and on the device (one rank's gradients are checked"
echo "   on the GPU, never copied to the host)"
for dev in cpu cuda; do
	"$B/recordio-train" --device $dev --epochs 2 --quiet --train "$W/fm/train" --x image \
		--y label --hidden 64,64 --batch 50 --lr 1e6 --metrics "$W/diverge-$dev.json" \
		>"$W/diverge-$dev.log" 2>&1 || { echo "diverge $dev: exit $?"; cat "$W/diverge-$dev.log"; exit 1; }
	python3 - "$W/diverge-$dev.json" $dev <<'PY'
import json, sys
eps = [json.loads(l) for l in open(sys.argv[1])]
print(f"{sys.argv[2]:5s} skipped_steps per epoch: {[e['skipped_steps'] for e in eps]}, "
      f"train_loss {[e['train_loss'] for e in eps]}")
PY
done
