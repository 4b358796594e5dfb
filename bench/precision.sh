#!/bin/sh
# precision.sh — recordio-train --precision bf16 against fp32 on this
# machine, each against its own ceiling, in one run (figures, never
# pass/fail; bench/train.sh runs it as its part f.):
#   - the GEMM-only rates (bench/gemm_only): a step's GEMMs alone, at the
#     trainer's shapes and layouts, fp32 (OpenBLAS) and bf16 (oneDNN, bf16
#     operands, fp32 accumulation), one copy, and one copy per rank side by
#     side (two processes, one thread each) summed over the copies;
#   - recordio-train on Fashion-MNIST (lz4 shards, buffer shuffle), batch
#     128 per rank, one thread per rank, 1 and 2 ranks, fp32 and bf16;
#   - for two models: 784-256-128-10 and the wide 784-4096-4096-4096-10;
#   - the ratios: each run's samples/s against its own precision's
#     GEMM-only rate of as many copies as ranks, taken in the same round
#     (the median of the rounds' ratios: this VM's AMX rate drifts by a
#     third between rounds) (aims: bf16 >= 0.85 on the
#     wide model, >= 0.75 on the small one), bf16 against fp32 (aim >= 1.6),
#     and the step split into GEMMs, allreduce, optimizer and the rest,
#     with the bytes the optimizer's pass moves a step on a rank (half of
#     them on 2 ranks where the update is sharded) and at what rate
#     (memory-bound: on the wide model it moves 0.8 GB a step).
# fp32 runs with OpenBLAS's fastest kernels for this CPU: with
# OPENBLAS_CORETYPE unset, the faster for the small model's GEMM-only rate
# of those the CPU's flags allow (Cooperlake needs avx512_bf16; SkylakeX,
# Haswell), exported for every fp32 run; OPENBLAS_CORETYPE set is kept.
# bf16 runs twice: with the CPU's best kernels (AMX where it has it:
# "bf16"), and with oneDNN held to AVX512_BF16 ("bf16-avx512":
# ONEDNN_MAX_CPU_ISA=$CAPPED_ISA, default AVX512_CORE_BF16), the
# instruction set issue 26's aims were set on (AMD Zen 4), against its own
# GEMM-only rate taken under the same cap; CAPPED_ISA= (empty) leaves it
# out. Each run prints the kernels it used (OpenBLAS's core, oneDNN's
# implementations: brg:avx512_core_amx... or brg:avx512_core_bf16...). Rounds: every figure is the median of ROUNDS rounds
# (default 3), each round running all of them in turn; the machine's load
# (uptime) is printed at the start and the end.
#
# Usage: bench/precision.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: ROUNDS, GEMM_SECONDS (each GEMM-only rate, default 2), STEPS_SMALL
#      (default 1000), STEPS_WIDE (default 60): the trainer's steps per run
#      (--max-steps, over as many epochs as that takes: 1000 steps of the
#      small model are 2.1 epochs on 1 rank, 4.3 on 2), BENCH_DIR (scratch,
#      default /tmp/recordio-bench-precision), CAPPED_ISA (above).
# Takes about 8 minutes on an idle machine (3 rounds).
# A run's figure is its median epoch (its metrics' lines by samples/s),
# as bench/train.sh's: the small model's first epoch also makes the oneDNN
# primitives and fills the loader's cache (the shards decoded by its
# threads, on the ranks' cores), and on 2 ranks it was the whole run (234
# steps, a quarter of a second) until --epochs 1 stopped cutting the runs
# short. The wide model's 60 steps are part of one epoch, the first.
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
make -C "$B" -s bench/gemm_only >/dev/null
W=${BENCH_DIR:-/tmp/recordio-bench-precision}
ROUNDS=${ROUNDS:-3}
GS=${GEMM_SECONDS:-2}
CAPPED_ISA=${CAPPED_ISA-AVX512_CORE_BF16}
PRECISIONS="fp32 bf16${CAPPED_ISA:+ bf16-avx512}"
mkdir -p "$W"
rm -f "$W"/*.json
mpi_local_env
pack_fashion_mnist train "$W/train"
echo "load at the start: $(uptime)"

if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	flags=$(grep -m1 '^flags' /proc/cpuinfo)
	has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
	cands=""
	if has avx512f && has avx512bw && has avx512vl; then
		! has avx512_bf16 || cands="Cooperlake"
		cands="$cands SkylakeX"
	fi
	! has avx2 || cands="$cands Haswell"
	best="" best_rate=0
	for k in $cands; do
		rate=$(OPENBLAS_CORETYPE=$k "$B/bench/gemm_only" fp32 1 128 1 784-256-128-10 |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["step_samples_per_s"])')
		echo "OpenBLAS $k: fp32 GEMM-only $rate samples/s (784-256-128-10, 1 thread)"
		if python3 -c "import sys; sys.exit(0 if $rate > $best_rate else 1)"; then
			best=$k best_rate=$rate
		fi
	done
	[ -z "$best" ] || export OPENBLAS_CORETYPE=$best
fi
echo "fp32 runs with OpenBLAS ${OPENBLAS_CORETYPE:-detected} kernels"

# as_run RUN CMD...: CMD for a run of RUN (fp32, bf16, bf16-avx512): the
# last with oneDNN held to $CAPPED_ISA (the ranks inherit it from mpirun)
as_run() {
	case $1 in
	bf16-avx512) shift; ONEDNN_MAX_CPU_ISA=$CAPPED_ISA "$@" ;;
	*) shift; "$@" ;;
	esac
}

train() { # NP RUN SIZES STEPS METRICS
	as_run "$2" mpirun -np "$1" "$B/recordio-train" --train "$W/train" --x image --y label \
		--hidden "$(echo "$3" | cut -d- -f2- | rev | cut -d- -f2- | rev | tr - ,)" \
		--batch 128 --threads 1 --precision "${2%-avx512}" --max-steps "$4" --epochs 100 \
		--metrics "$5" >"$5.out"
	# the first line's "cpu (OpenBLAS ... kernels, ...), bf16 GEMMs (oneDNN ...)"
	sed -n 's/.*, \(cpu (.*\)$/\1/p' "$5.out" | head -1 | sed 's/, gradients summed.*//' \
		>"$5.kernels"
}

gemm_only() { # RUN SIZES ROUND TAG
	as_run "$1" "$B/bench/gemm_only" "${1%-avx512}" 1 128 "$GS" "$2" >"$W/g1-$4-$1-$3.json"
	as_run "$1" "$B/bench/gemm_only" "${1%-avx512}" 1 128 "$GS" "$2" >"$W/g2a-$4-$1-$3.json" &
	as_run "$1" "$B/bench/gemm_only" "${1%-avx512}" 1 128 "$GS" "$2" >"$W/g2b-$4-$1-$3.json"
	wait
}

MODELS="small:784-256-128-10:${STEPS_SMALL:-1000} wide:784-4096-4096-4096-10:${STEPS_WIDE:-60}"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for m in $MODELS; do
		tag=${m%%:*} rest=${m#*:}
		sizes=${rest%%:*} steps=${rest#*:}
		for p in $PRECISIONS; do
			gemm_only $p "$sizes" $r "$tag"
			train 1 $p "$sizes" "$steps" "$W/t1-$tag-$p-$r.json"
			train 2 $p "$sizes" "$steps" "$W/t2-$tag-$p-$r.json"
		done
	done
	echo "round $r done: $(uptime)"
	r=$((r + 1))
done

python3 - "$W" "$ROUNDS" "$MODELS" "$PRECISIONS" "$CAPPED_ISA" <<'PY'
import json, statistics, sys
w, rounds, models = sys.argv[1], range(1, int(sys.argv[2]) + 1), sys.argv[3].split()
precisions, capped = sys.argv[4].split(), sys.argv[5]
def load(name):
    return json.loads(open(f"{w}/{name}").read().splitlines()[-1])
def median_epoch(name):  # a run's median epoch by samples/s
    e = sorted((json.loads(x) for x in open(f"{w}/{name}").read().splitlines()),
               key=lambda x: x["samples_per_s"])
    return e[(len(e) - 1) // 2]
med = statistics.median
for m in models:
    tag, sizes, steps = m.split(":")
    print(f"== {sizes}, batch 128 per rank, 1 thread per rank, {steps} steps a run, "
          f"medians of {len(rounds)} rounds")
    print(f"{'run':<19}{'samples/s':>11}{'GEMM-only':>11}{'of it':>7}{'gemm':>7}{'allred':>7}"
          f"{'optim':>7}{'rest':>7}  kernels")
    got, ratio, rounds_of = {}, {}, {}
    for p in precisions:
        g1 = [load(f"g1-{tag}-{p}-{r}.json") for r in rounds]
        g2 = [load(f"g2a-{tag}-{p}-{r}.json")["step_samples_per_s"]
              + load(f"g2b-{tag}-{p}-{r}.json")["step_samples_per_s"] for r in rounds]
        ceil = {1: med(x["step_samples_per_s"] for x in g1), 2: med(g2)}
        # each round's run against its own round's ceiling (the machine's
        # rate drifts by a third from one round to the next): the median
        # of those ratios, not a ratio of medians taken in different rounds
        per_round = {1: [x["step_samples_per_s"] for x in g1], 2: g2}
        for n in (1, 2):
            runs = [median_epoch(f"t{n}-{tag}-{p}-{r}.json") for r in rounds]
            ratios = [x["samples_per_s"] / c for x, c in zip(runs, per_round[n])]
            rounds_of[p, n] = runs
            e = sorted(runs, key=lambda x: x["samples_per_s"])[(len(runs) - 1) // 2]
            s = e["samples_per_s"]
            got[p, n] = s
            sec = e["seconds"]
            parts = [e["gemm_seconds"], e["allreduce_seconds"], e["optimizer_seconds"]]
            rest = sec - sum(parts) - e["data_wait_seconds"]
            kern = open(f"{w}/t{n}-{tag}-{p}-1.json.kernels").read().strip()
            print(f"{p + ', ' + str(n) + ' rank' + ('s' if n > 1 else ''):<19}{s:>11.0f}"
                  f"{ceil[n]:>11.0f}{med(ratios):>7.2f}"
                  + "".join(f"{100 * x / sec:>6.1f}%" for x in parts + [rest])
                  + f"  {kern}")
            # the optimizer's pass (SGD with momentum) moves 20 bytes a
            # parameter (reads the gradient, parameter and velocity, writes
            # the last two), 22 under bf16 (and the bf16 weight): its rate
            # says how close to the memory's it runs
            dims = [int(x) for x in sizes.split("-")]
            nparams = sum((dims[i] + 1) * dims[i + 1] for i in range(len(dims) - 1))
            per = 20 if p == "fp32" else 22
            # a sharded update (the default under bf16 on one host): each
            # rank passes over its slices, 1/n of the model
            if "each rank updating its slices" in open(f"{w}/t{n}-{tag}-{p}-1.json.out").read():
                per /= n
            moved = nparams * per * e["steps"]
            print(f"{'':<19}optimizer pass: {nparams * per / 1e6:.1f} MB "
                  f"a step, {moved / max(e['optimizer_seconds'], 1e-9) / 1e9:.1f} GB/s")
            print(f"{'':<19}rounds: " + " ".join(f"{x['samples_per_s']:.0f}" for x in runs)
                  + "; GEMM-only: " + " ".join(f"{x:.0f}" for x in
                                               ([y["step_samples_per_s"] for y in g1] if n == 1 else g2))
                  + "; of it: " + " ".join(f"{x:.2f}" for x in ratios))
            ratio[p, n] = med(ratios)
        print(f"{'':<19}GEMM-only kernels: {g1[0]['kernels']}")
    aim = 0.75 if tag == "small" else 0.85
    for p in precisions[1:]:
        isa = (f"oneDNN held to {capped} (ONEDNN_MAX_CPU_ISA), the issue's ISA class"
               if p.endswith("-avx512") else "oneDNN's best kernels for this CPU")
        print(f"{p} ({isa}):")
        for n in (1, 2):
            over = med(a["samples_per_s"] / b["samples_per_s"]
                       for a, b in zip(rounds_of[p, n], rounds_of["fp32", n]))
            print(f"  {n} rank{'s' if n > 1 else ''}: of its GEMM-only rate {ratio[p, n]:.2f} "
                  f"(aim >= {aim}); over fp32 {over:.2f}x (aim >= 1.6)")
PY
echo "load at the end: $(uptime)"
