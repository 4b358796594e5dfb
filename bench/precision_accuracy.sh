#!/bin/sh
# precision_accuracy.sh — what --precision bf16 does to the model's quality:
# recordio-train with its defaults (784-256-128-10, 20 epochs, SGD with
# momentum, warmup, cosine decay; batch 128 per rank) on Fashion-MNIST,
# 2 ranks, seeds 1 to 4, in fp32 and in bf16 (ARGS: more options for every
# run, e.g. ARGS="--grad-compression bf16" where the build has it). Prints
# each run's final test accuracy, the means and the difference of the
# means (aims: every run >= 0.89, bf16's mean within 0.003 of fp32's), and
# the table for doc/trainer.md. The seeds' runs alternate precisions, so
# a drift of the machine's speed over the study touches both alike (speed
# is not the point here: samples/s are printed only as a guide).
#
# Usage: bench/precision_accuracy.sh [BUILD_DIR]   (default build-bench/)
# Env: SEEDS (default "1 2 3 4"), PRECISIONS (default "fp32 bf16"), ARGS,
#      BENCH_DIR (scratch, default /tmp/recordio-bench-precision).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
W=${BENCH_DIR:-/tmp/recordio-bench-precision}
SEEDS=${SEEDS:-1 2 3 4}
PRECISIONS=${PRECISIONS:-fp32 bf16}
ARGS=${ARGS:-}
mkdir -p "$W"
mpi_local_env
pack_fashion_mnist train "$W/train"
pack_fashion_mnist test "$W/test"
echo "load at the start: $(uptime)"
for s in $SEEDS; do
	for p in $PRECISIONS; do
		# shellcheck disable=SC2086
		mpirun -np 2 "$B/recordio-train" --train "$W/train" --test "$W/test" --x image \
			--y label --seed "$s" --precision "$p" --quiet $ARGS \
			--metrics "$W/acc-$p-$s.json"
	done
done
echo "load at the end: $(uptime)"
python3 - "$W" "$SEEDS" "$PRECISIONS" "$ARGS" <<'PY'
import json, statistics, sys
w, seeds, precisions, args = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
final = {}
for p in precisions:
    for s in seeds:
        eps = [json.loads(l) for l in open(f"{w}/acc-{p}-{s}.json")]
        final[p, s] = (eps[-1]["test_accuracy"], statistics.median(e["samples_per_s"] for e in eps))
print(f"| precision{(' (' + args + ')') if args else ''} | "
      + " | ".join(f"seed {s}" for s in seeds) + " | mean | samples/s (median epoch) |")
print("|---|" + "---|" * (len(seeds) + 2))
means = {}
for p in precisions:
    accs = [final[p, s][0] for s in seeds]
    means[p] = statistics.mean(accs)
    speed = statistics.median(final[p, s][1] for s in seeds)
    print(f"| {p} | " + " | ".join(f"{a:.4f}" for a in accs) + f" | {means[p]:.4f} | {speed:.0f} |")
low = min(a for a, _ in final.values())
print(f"lowest {low:.4f} (aim >= 0.89)")
if "fp32" in means:
    for p in precisions:
        if p != "fp32":
            d = means[p] - means["fp32"]
            print(f"{p} mean - fp32 mean = {d:+.4f} (aim within 0.003)")
PY
