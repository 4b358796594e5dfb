#!/bin/sh
# train.sh — recordio-train's speed and quality on this machine, against its
# own limits, in one run (figures, never pass/fail):
#   a. OpenBLAS's sgemm peak (1024^3) with 1 and 2 threads, and its rate on
#      the exact GEMMs of one step of 784-256-128-10 at batch 128
#      (bench/sgemm_peak.c);
#   b. samples/s on Fashion-MNIST (lz4 shards, buffer shuffle) with
#      784-256-128-10 and batch 128 per rank: 1 rank with 1 OpenBLAS
#      thread, 1 rank with 2 threads, 2 ranks with 1 thread each; scaling
#      from 1 to 2 ranks (aim >= 1.8x);
#   c. each run's step time split into data wait (aim < 1%), GEMMs,
#      allreduce (exposed), optimizer, and the rest (elementwise ops, loss);
#      the GEMMs' achieved GFLOP/s against the sgemm peak, and samples/s
#      against the GEMM-bound rate (the peak spent on nothing but the
#      step's GEMMs; aim >= 85%);
#   d. quality: test accuracy per epoch over 20 epochs on 2 ranks (aim >=
#      0.89; the dataset's published MLP baselines are 0.87-0.88);
#   e. when PyTorch is installed (pip install torch), the same model, batch
#      and optimizer in PyTorch DistributedDataParallel (gloo, 1 and 2
#      processes, bench/ddp_baseline.py).
# Samples/s: the median epoch and the slowest of EPOCHS (default 8), every
# epoch counted (the first too); the time split is the median epoch's. The
# last column is the mean speed of epochs 4+ against epochs 1-3: a run that
# slows as training goes on (denormal weights did, by about a quarter, before
# the CPU path flushed them to zero) shows below 1.
#
# Usage: bench/train.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: EPOCHS, BENCH_DIR (scratch, default /tmp/recordio-bench-train),
#      QUALITY_ARGS (the 20-epoch run's optimizer options).
set -eu
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
B=${1:-$RIO_TOP/build-bench}
[ -x "$B/recordio-train" ] || rio_build "$B" --disable-shared CFLAGS="-O2 -g"
make -C "$B" -s bench/sgemm_peak >/dev/null
EPOCHS=${EPOCHS:-8}
W=${BENCH_DIR:-/tmp/recordio-bench-train}
QUALITY_ARGS=${QUALITY_ARGS:---optimizer sgd --lr 0.05 --momentum 0.9 --weight-decay 0.0001 --schedule cosine --warmup-epochs 1}
FM=/usr/share/datasets/fashion-mnist
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader

if [ ! -f "$W/train-00003-of-00004.tfrecord.lz4" ]; then
	"$B/recordio-pack" -q -f --from idx --images "$FM/train-images-idx3-ubyte.gz" \
		--labels "$FM/train-labels-idx1-ubyte.gz" --output "$W/train" --shards 4 --compression lz4
	"$B/recordio-pack" -q -f --from idx --images "$FM/t10k-images-idx3-ubyte.gz" \
		--labels "$FM/t10k-labels-idx1-ubyte.gz" --output "$W/test" --shards 2 --compression lz4
fi

# The kernels OpenBLAS runs, the same for sgemm_peak and the trainer: those
# the CPU's flags allow (recordio-train makes this choice itself when
# OpenBLAS's own detection falls back to Prescott, as on VMs that hide the
# CPU model; here it is made once, for both).
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	flags=$(grep -m1 '^flags' /proc/cpuinfo)
	has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
	if has avx512f && has avx512bw && has avx512vl; then export OPENBLAS_CORETYPE=SkylakeX
	elif has avx2 && has fma; then export OPENBLAS_CORETYPE=Haswell
	fi
fi
echo "== a. OpenBLAS sgemm on this machine ($(nproc) cores, ${OPENBLAS_CORETYPE:-detected} kernels)"
"$B/bench/sgemm_peak" 1 128 | tee "$W/sgemm1.json"
"$B/bench/sgemm_peak" 2 128 | tee "$W/sgemm2.json"

train() { # NP THREADS METRICS [ARGS...]
	np=$1 th=$2 m=$3; shift 3
	mpirun -np "$np" "$B/recordio-train" --train "$W/train" --test "$W/test" --x image --y label \
		--hidden 256,128 --batch 128 --threads "$th" --metrics "$m" --quiet "$@"
}

echo "== b, c. Fashion-MNIST, 784-256-128-10, batch 128 per rank, $EPOCHS epochs"
train 1 1 "$W/np1t1.json" --epochs "$EPOCHS"
train 1 2 "$W/np1t2.json" --epochs "$EPOCHS"
train 2 1 "$W/np2t1.json" --epochs "$EPOCHS"
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
def lines(name):
    return [json.loads(l) for l in open(f"{w}/{name}")]
s1, s2 = json.load(open(f"{w}/sgemm1.json")), json.load(open(f"{w}/sgemm2.json"))
flops_per_sample = s1["step_flops"] / s1["batch"]
print(f"sgemm peak: {s1['peak_gflops']:.1f} GFLOP/s (1 thread), {s2['peak_gflops']:.1f} (2 threads); "
      f"the step's own shapes: {s1['step_gflops']:.1f} and {s2['step_gflops']:.1f}")
print(f"{'run':<26}{'median/s':>10}{'slowest/s':>10}{'4+ vs 1-3':>10}{'wait':>8}{'gemm':>8}"
      f"{'allred':>8}{'optim':>8}{'rest':>8}{'GEMM GF/s':>11}{'of peak':>9}{'of bound':>10}")
median = {}
for name, label, np_, peak in (("np1t1", "1 rank, 1 thread", 1, s1["peak_gflops"]),
                               ("np1t2", "1 rank, 2 threads", 1, s2["peak_gflops"]),
                               ("np2t1", "2 ranks, 1 thread each", 2, s1["peak_gflops"])):
    eps = lines(f"{name}.json")           # every epoch, the first too
    by_speed = sorted(eps, key=lambda x: x["samples_per_s"])
    e = by_speed[(len(by_speed) - 1) // 2]  # the median (the lower one of an even count)
    slowest = by_speed[0]
    median[name] = e
    early, late = eps[:3], eps[3:]
    speed = lambda es: sum(x["samples_per_s"] for x in es) / len(es)
    ratio = f"{speed(late) / speed(early):>10.2f}" if late else f"{'n/a':>10}"
    sec = e["seconds"]
    parts = [e["data_wait_seconds"], e["gemm_seconds"], e["allreduce_seconds"], e["optimizer_seconds"]]
    rest = sec - sum(parts)
    bound = np_ * peak * 1e9 / flops_per_sample
    print(f"{label:<26}{e['samples_per_s']:>10.0f}{slowest['samples_per_s']:>10.0f}{ratio}"
          + "".join(f"{100*p/sec:>7.1f}%" for p in parts + [rest])
          + f"{e['gemm_gflops']:>11.1f}{100*e['gemm_gflops']/peak:>8.0f}%{100*e['samples_per_s']/bound:>9.0f}%")
    print(f"{'':<26}epochs: " + " ".join(f"{x['samples_per_s']:.0f}" for x in eps))
print(f"scaling 1 -> 2 ranks (1 thread each, medians): "
      f"{median['np2t1']['samples_per_s']/median['np1t1']['samples_per_s']:.2f}x"
      f"   (2 ranks against 1 rank on 2 threads: "
      f"{median['np2t1']['samples_per_s']/median['np1t2']['samples_per_s']:.2f}x)")
PY

echo "== d. quality: 2 ranks, 20 epochs ($QUALITY_ARGS)"
# shellcheck disable=SC2086
train 2 1 "$W/quality.json" --epochs 20 $QUALITY_ARGS
python3 - "$W/quality.json" <<'PY'
import json, sys
eps = [json.loads(l) for l in open(sys.argv[1])]
print("test accuracy by epoch:", " ".join(f"{e['test_accuracy']:.4f}" for e in eps))
best = max(eps, key=lambda e: e["test_accuracy"])
print(f"final {eps[-1]['test_accuracy']:.4f}, best {best['test_accuracy']:.4f} (epoch {best['epoch']}); "
      f"aim >= 0.89; {sum(e['seconds'] for e in eps):.1f} s of training")
PY

echo "== e. PyTorch DistributedDataParallel, same model and batch"
if python3 -c 'import torch' 2>/dev/null; then
	for np in 1 2; do
		python3 "$RIO_TOP/bench/ddp_baseline.py" --procs $np --epochs "$EPOCHS" --threads 1
	done
else
	echo "PyTorch not installed (pip install torch): skipped"
fi
