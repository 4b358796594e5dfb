#!/bin/sh
# train.sh — recordio-train's speed and quality on this machine, against its
# own limits, in one run (figures, never pass/fail):
#   a. OpenBLAS's sgemm peak (1024^3) with 1 and 2 threads, and the
#      GEMM-only rate: the exact GEMMs of one step of 784-256-128-10 at
#      batch 128 (bench/sgemm_peak.c), back to back, as samples/s; one
#      copy alone, and one copy per rank side by side (two processes, one
#      thread each) summed over the copies: what the trainer would reach if
#      a step were nothing but its GEMMs;
#   b. samples/s with 784-256-128-10 and batch 128 per rank, on
#      Fashion-MNIST (lz4 shards, buffer shuffle) and on --synthetic data
#      (made in memory: no input pipeline): 1 rank with 1 OpenBLAS thread,
#      1 rank with 2 threads (real data), 2 ranks with 1 thread each;
#      The 2-rank runs sum gradients in shared memory (--reduce auto: shm);
#      they are run again with Open MPI's allreduce (--reduce mpi);
#   c. each run's step time split into data wait, GEMMs, exposed allreduce
#      (time reducing or waiting for the sums: inside MPI, or the rank's
#      share of the shared-memory sum), elementwise (the rest: bias, ReLU, loss passes)
#      and optimizer; samples/s against the GEMM-only rate of as many
#      copies as ranks (aim >= 0.85), and the speedup from 1 to 2 ranks
#      against the GEMM-only rate's own speedup from 1 to 2 copies (aim >=
#      0.95: the cores share memory bandwidth, so 2 copies do not give 2x);
#   d. quality: test accuracy per epoch over 20 epochs on 2 ranks (aim >=
#      0.89; the dataset's published MLP baselines are 0.87-0.88);
#   e. when PyTorch is installed (pip install torch), the same model, batch
#      and optimizer in PyTorch DistributedDataParallel (gloo, 1 and 2
#      processes, bench/ddp_baseline.py);
#   f. --precision bf16 against fp32 on 784-256-128-10 and the wide
#      784-4096-4096-4096-10, each against its own GEMM-only rate (the bf16
#      GEMMs alone, oneDNN, as the bf16 ceiling), with the kernels each run
#      used, bf16 also with oneDNN held to AVX512_BF16 (no AMX):
#      bench/precision.sh (PRECISION=skip leaves it out).
# Rounds: the machine's speed drifts by several % over minutes, and the
# aims are ratios of runs made minutes apart, so the GEMM-only rates and
# the 1- and 2-rank runs on real and --synthetic data are made in ROUNDS
# (default 3) rounds, each round all of them in turn (GEMM_SECONDS / ROUNDS
# for each GEMM-only rate); a figure is the median over its rounds, and the
# speedup is also given round by round. Each round's start and end also
# time a cache line's round trip between CPUs 0 and 1 (bench/core_rtt): the
# development VM's host moves its two vCPUs between places that share a
# cache (75-120 ns) and places that do not (400-850 ns), where every
# gradient sum crosses between them and the exposed sum at 2 ranks goes
# from ~3 % to ~10 % (it can change within a round, so the two timings
# only bracket it). A round whose 2-rank run (real or --synthetic) spent
# 5 % or more of its step on the exposed sum is named in a note with its
# round trips.
# Samples/s: the median epoch (never the best) and the slowest of EPOCHS
# (default 8) epochs of every round, every epoch counted (the first too);
# the split is the median epoch's. The "4+/1-3" column is the mean speed
# of epochs 4+ against epochs 1-3: a run that slows as training goes on
# (denormal weights did, by about a quarter, before the CPU path flushed
# them to zero) shows below 1.
#
# Usage: bench/train.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: EPOCHS, ROUNDS, GEMM_SECONDS (default 10), BENCH_DIR (scratch, default
#      /tmp/recordio-bench-train), QUALITY_ARGS (the 20-epoch run's
#      optimizer options; QUALITY_ARGS=skip leaves d. out).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
make -C "$B" -s bench/sgemm_peak bench/core_rtt >/dev/null
EPOCHS=${EPOCHS:-8}
W=${BENCH_DIR:-/tmp/recordio-bench-train}
QUALITY_ARGS=${QUALITY_ARGS:---optimizer sgd --lr 0.05 --momentum 0.9 --weight-decay 0.0001 --schedule cosine --warmup-epochs 1}
mkdir -p "$W"
mpi_local_env
pack_fashion_mnist train "$W/train"
pack_fashion_mnist test "$W/test"

# The kernels OpenBLAS runs, the same for sgemm_peak and the trainer: those
# the CPU's flags allow (recordio-train makes this choice itself when
# OpenBLAS's own detection falls back to Prescott, as on VMs that hide the
# CPU model; here it is made once, for both).
USER_CORETYPE=${OPENBLAS_CORETYPE:-} # f. chooses its own when unset
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
GS=${GEMM_SECONDS:-10}
ROUNDS=${ROUNDS:-3}
GSR=$(awk -v s="$GS" -v r="$ROUNDS" 'BEGIN {printf "%g", s / r}')
# the GEMM-only rate of one round: 1 copy, then 2 copies side by side
gemm_round() { # ROUND
	"$B/bench/sgemm_peak" 1 128 "$GSR" >"$W/gemm1-$1.json"
	"$B/bench/sgemm_peak" 1 128 "$GSR" >"$W/gemm2a-$1.json" &
	"$B/bench/sgemm_peak" 1 128 "$GSR" >"$W/gemm2b-$1.json"
	wait
}
echo "GEMM-only rate, 1 copy on 2 threads, ${GS} s:"
"$B/bench/sgemm_peak" 2 128 "$GS" | tee "$W/gemm1t2.json"

train() { # NP THREADS METRICS [ARGS...]
	np=$1 th=$2 m=$3; shift 3
	# a rank of several threads must not be bound to one core (mpirun
	# binds each rank to a core when there are two or fewer)
	bind=""
	[ "$th" -eq 1 ] || bind="--bind-to none"
	mpirun -np "$np" $bind "$B/recordio-train" --train "$W/train" --test "$W/test" --x image --y label \
		--hidden 256,128 --batch 128 --threads "$th" --metrics "$m" --quiet "$@"
}

echo "== b, c. 784-256-128-10, batch 128 per rank, $EPOCHS epochs: Fashion-MNIST and --synthetic"
echo "   $ROUNDS rounds, each: the GEMM-only rate (1 copy, 2 copies side by side, ${GSR} s each),"
echo "   then real and --synthetic data on 1 and 2 ranks; the ratios are of the medians over"
echo "   the rounds (the machine's speed drifts by several % over minutes)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	# what a cache line costs to move between the two ranks' CPUs, at
	# the round's start and end (the host moves the vCPUs)
	"$B/bench/core_rtt" >"$W/rtt-$r-start.json"
	gemm_round "$r"
	train 1 1 "$W/np1t1-$r.json" --epochs "$EPOCHS"
	train 2 1 "$W/np2t1-$r.json" --epochs "$EPOCHS"
	train 1 1 "$W/syn1t1-$r.json" --epochs "$EPOCHS" --synthetic
	train 2 1 "$W/syn2t1-$r.json" --epochs "$EPOCHS" --synthetic
	"$B/bench/core_rtt" >"$W/rtt-$r-end.json"
	r=$((r + 1))
done
train 1 2 "$W/np1t2.json" --epochs "$EPOCHS"
# the same 2-rank runs with Open MPI's allreduce instead of the shared-memory
# reduction (--reduce auto picks shm on one host)
train 2 1 "$W/np2mpi.json" --epochs "$EPOCHS" --reduce mpi
train 2 1 "$W/syn2mpi.json" --epochs "$EPOCHS" --synthetic --reduce mpi
python3 - "$W" "$ROUNDS" <<'PY'
import json, statistics, sys
w, rounds = sys.argv[1], range(1, int(sys.argv[2]) + 1)
def load(name):
    return json.load(open(f"{w}/{name}.json"))
def lines(name):
    return [json.loads(l) for l in open(f"{w}/{name}.json")]
def median_epoch(eps):
    by_speed = sorted(eps, key=lambda x: x["samples_per_s"])
    return by_speed[(len(by_speed) - 1) // 2]  # the lower one of an even count
s1, s2 = load("sgemm1"), load("sgemm2")
g1r = [load(f"gemm1-{r}")["step_samples_per_s"] for r in rounds]
g2r = [load(f"gemm2a-{r}")["step_samples_per_s"] + load(f"gemm2b-{r}")["step_samples_per_s"]
       for r in rounds]
g1, g2 = statistics.median(g1r), statistics.median(g2r)
g1t2 = load("gemm1t2")["step_samples_per_s"]
print(f"sgemm peak: {s1['peak_gflops']:.1f} GFLOP/s (1 thread), {s2['peak_gflops']:.1f} (2 threads)")
print(f"GEMM-only rate (median of the rounds): {g1:.0f} samples/s (1 copy), {g2:.0f} (2 copies "
      f"side by side, summed; {g2 / g1:.2f}x), {g1t2:.0f} (1 copy, 2 threads)")
print("   rounds, 1 copy: " + " ".join(f"{x:.0f}" for x in g1r)
      + "; 2 copies: " + " ".join(f"{x:.0f}" for x in g2r))
print(f"{'run':<28}{'median/s':>10}{'slowest':>9}{'4+/1-3':>7}{'wait':>7}{'gemm':>7}"
      f"{'allred':>7}{'elemw':>7}{'optim':>7}{'GEMM GF/s':>10}{'of GEMM-only':>13}")
median = {}
for name, label, bound, interleaved in (
        ("np1t1", "real, 1 rank, 1 thread", g1, True),
        ("np1t2", "real, 1 rank, 2 threads", g1t2, False),
        ("np2t1", "real, 2 ranks, 1 thread", g2, True),
        ("syn1t1", "synthetic, 1 rank", g1, True),
        ("syn2t1", "synthetic, 2 ranks", g2, True),
        ("np2mpi", "real, 2 ranks, MPI allred.", g2, False),
        ("syn2mpi", "synthetic, 2 ranks, MPI", g2, False)):
    runs = [lines(f"{name}-{r}") for r in rounds] if interleaved else [lines(name)]
    eps = [e for run in runs for e in run]  # every epoch of every round, the first too
    e = median_epoch(eps)
    median[name] = e["samples_per_s"]
    if interleaved:
        median[name, "rounds"] = [median_epoch(run)["samples_per_s"] for run in runs]
    speed = lambda es: sum(x["samples_per_s"] for x in es) / len(es)
    late = [speed(run[3:]) / speed(run[:3]) for run in runs if run[3:]]
    ratio = f"{sum(late) / len(late):>7.2f}" if late else f"{'n/a':>7}"
    sec = e["seconds"]
    wait, gemm, allred, optim = (e["data_wait_seconds"], e["gemm_seconds"],
                                 e["allreduce_seconds"], e["optimizer_seconds"])
    elem = sec - wait - gemm - allred - optim
    slowest = min(x["samples_per_s"] for x in eps)
    print(f"{label:<28}{e['samples_per_s']:>10.0f}{slowest:>9.0f}{ratio}"
          + "".join(f"{100 * p / sec:>6.1f}%" for p in (wait, gemm, allred, elem, optim))
          + f"{e['gemm_gflops']:>10.1f}{e['samples_per_s'] / bound:>13.2f}")
    for i, run in enumerate(runs):
        which = f"round {i + 1}" if interleaved else "epochs"
        print(f"{'':<28}{which}: " + " ".join(f"{x['samples_per_s']:.0f}" for x in run))
gs = g2 / g1
for kind, a, b in (("real", "np1t1", "np2t1"), ("synthetic", "syn1t1", "syn2t1")):
    sp = median[b] / median[a]
    each = [(y / x) / (q / p) for x, y, p, q in
            zip(median[a, "rounds"], median[b, "rounds"], g1r, g2r)]
    print(f"{kind}: 1 -> 2 ranks {sp:.3f}x, against the GEMM-only rate's {gs:.3f}x: {sp / gs:.3f} "
          f"(aim >= 0.95; each round: " + " ".join(f"{x:.3f}" for x in each)
          + f"); samples/s of GEMM-only: {median[a] / g1:.3f} at 1 rank, "
          f"{median[b] / g2:.3f} at 2 (aim >= 0.85)")
print(f"the input pipeline costs {100 * (1 - median['np1t1'] / median['syn1t1']):.1f}% of the "
      f"speed at 1 rank, {100 * (1 - median['np2t1'] / median['syn2t1']):.1f}% at 2")
rtt = {r: [load(f"rtt-{r}-{at}")["round_trip_ns"] for at in ("start", "end")] for r in rounds}
print("a cache line's round trip between CPUs 0 and 1 (bench/core_rtt), each round's start "
      "and end: " + ", ".join(f"{a:.0f}/{b:.0f} ns" for a, b in rtt.values()))
# ranks waiting for each other at every step, on synthetic data too: on
# the development VM, when its host had put the two vCPUs where they share
# no cache, and every gradient sum crosses between them (doc/performance.md)
held = [(r, name, 100 * e["allreduce_seconds"] / e["seconds"])
        for name in ("np2t1", "syn2t1") for r in rounds
        for e in [median_epoch(lines(f"{name}-{r}"))]]
held = [h for h in held if h[2] >= 5]
if held:
    print("note: exposed sums of 5 % or more at 2 ranks (" + ", ".join(
          f"round {r} {'real' if n == 'np2t1' else 'synthetic'} {p:.1f}%, round trip "
          + "/".join(f"{x:.0f}" for x in rtt[r]) + " ns" for r, n, p in held)
          + "): the ranks waited for each other's sums; on the 2-vCPU VM of doc/performance.md "
          "that went with its host placing the vCPUs apart (round trips of 400-850 ns, "
          "against 75-120), which can also change within a round")
PY

if [ "$QUALITY_ARGS" = skip ]; then
	echo "== d. quality: skipped (QUALITY_ARGS=skip)"
else
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
fi

echo "== e. PyTorch DistributedDataParallel, same model and batch"
# the first python3 with torch: the one on PATH, else Debian's (python3-torch)
TORCH_PY=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import torch' 2>/dev/null; then TORCH_PY=$py; break; fi
done
if [ -n "$TORCH_PY" ]; then
	for np in 1 2; do
		"$TORCH_PY" "$RIO_TOP/bench/ddp_baseline.py" --procs $np --epochs "$EPOCHS" --threads 1
	done
else
	echo "PyTorch not installed (apt-get install python3-torch, or pip install torch): skipped"
fi

if [ "${PRECISION:-}" = skip ]; then
	echo "== f. --precision bf16: skipped (PRECISION=skip)"
else
	echo "== f. --precision bf16 against fp32 (bench/precision.sh)"
	if [ -n "$USER_CORETYPE" ]; then
		OPENBLAS_CORETYPE=$USER_CORETYPE sh "$RIO_TOP/bench/precision.sh" "$B"
	else
		env -u OPENBLAS_CORETYPE sh "$RIO_TOP/bench/precision.sh" "$B"
	fi
fi
