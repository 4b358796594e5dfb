#!/bin/sh
# pipeline_async.sh — what --pipeline-schedule async (PipeDream-2BW, one
# weight version of staleness) costs and gains against 1f1b, for
# doc/parallelism.md (figures, never pass/fail):
#   a. accuracy: Fashion-MNIST, 784-256-256-128-10, P = 2, EPOCHS epochs,
#      seeds SEEDS, with SGD (the defaults: momentum 0.9, rate 0.05) and
#      with Adam (rate 0.001): each run's final test accuracy, and the
#      median over the seeds of async's minus 1f1b's;
#   b. the bubble: the metrics' measured `bubble` of 1f1b and async at
#      P = 2 on stages that cost the same (--synthetic=512 --hidden
#      512,512,512,512, two 512x512 layers a stage), M = MS, the median of
#      REPEATS runs of STEPS steps, beside GPipe's (P - 1) / (M + P - 1);
#      and samples/s, async's over 1f1b's.
# The load average is printed beside the figures (the cores may be
# shared: then the idle time also measures the sharing).
#
# Usage: bench/pipeline_async.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: BENCH_DIR (scratch, default /tmp/recordio-bench-async), EPOCHS
#      (default 3), SEEDS (default "1 2 3"), MS (default "2 4 8"), STEPS
#      (default 100), REPEATS (default 3), PARTS (default "ab"), ASYNC_OPTS
#      (part a: options added to async's runs alone, e.g. "--momentum 0.8").
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
W=${BENCH_DIR:-/tmp/recordio-bench-async}
EPOCHS=${EPOCHS:-3}
SEEDS=${SEEDS:-1 2 3}
MS=${MS:-2 4 8}
STEPS=${STEPS:-100}
REPEATS=${REPEATS:-3}
PARTS=${PARTS-ab}
ASYNC_OPTS=${ASYNC_OPTS:-}
mkdir -p "$W"
mpi_local_env
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"

train() { # JSON OPTIONS...: one run on 2 ranks, its metrics into JSON
	_json=$1
	shift
	timeout 1800 mpirun -np 2 --mca mpi_yield_when_idle 1 "$B/recordio-train" --threads 1 \
		--quiet --pipeline 2 --metrics "$_json" "$@" >"$W/run.out" 2>&1 ||
		{ echo "failed: $*"; tail -3 "$W/run.out"; }
}

# KEY FILES...: the last line's KEY of each JSON-lines file, their median
median() {
	python3 - "$@" <<'EOF'
import json, statistics, sys
v = [json.loads(open(f).read().splitlines()[-1])[sys.argv[1]] for f in sys.argv[2:]]
print("%.4f" % statistics.median(v))
EOF
}

case $PARTS in *a*)
echo "== a. test accuracy after $EPOCHS epochs, Fashion-MNIST, P = 2"
pack_fashion_mnist train "$W/train"
pack_fashion_mnist test "$W/test"
FMNIST="--train $W/train --test $W/test --x image --y label --hidden 256,256,128 --epochs $EPOCHS"
printf '%-6s %-5s %-8s %-8s %s\n' optim seed 1f1b async async-1f1b
for opt in sgd adam; do
	diffs=""
	for seed in $SEEDS; do
		train "$W/acc-$opt-1f1b-$seed.json" $FMNIST --optimizer $opt --seed "$seed"
		train "$W/acc-$opt-async-$seed.json" $FMNIST --optimizer $opt --seed "$seed" \
			--pipeline-schedule async $ASYNC_OPTS
		a=$(median test_accuracy "$W/acc-$opt-1f1b-$seed.json")
		b=$(median test_accuracy "$W/acc-$opt-async-$seed.json")
		d=$(python3 -c "print('%+.4f' % ($b - $a))")
		diffs="$diffs $d"
		printf '%-6s %-5s %-8s %-8s %s\n' $opt "$seed" "$a" "$b" "$d"
	done
	echo "$opt: median async - 1f1b: $(python3 -c 'import statistics, sys
print("%+.4f" % statistics.median(map(float, sys.argv[1:])))' $diffs)"
done
;; esac

case $PARTS in *b*)
echo "== b. the bubble at P = 2, equal stages, $STEPS steps, median of $REPEATS"
EQUAL="--synthetic=512 --hidden 512,512,512,512 --batch 512 --max-steps $STEPS"
printf '%-3s %-8s %-8s %-8s %-10s %-10s %s\n' M formula 1f1b async 1f1b-sps async-sps ratio
for m in $MS; do
	for s in 1f1b async; do
		i=1
		while [ $i -le "$REPEATS" ]; do
			train "$W/bubble-$s-$m-$i.json" $EQUAL --pipeline-schedule $s --microbatches "$m"
			i=$((i + 1))
		done
	done
	f=$(python3 -c "print('%.4f' % (1 / ($m + 1)))")
	b1=$(median bubble "$W"/bubble-1f1b-"$m"-*.json)
	b2=$(median bubble "$W"/bubble-async-"$m"-*.json)
	s1=$(median samples_per_s "$W"/bubble-1f1b-"$m"-*.json)
	s2=$(median samples_per_s "$W"/bubble-async-"$m"-*.json)
	printf '%-3s %-8s %-8s %-8s %-10s %-10s %s\n' "$m" "$f" "$b1" "$b2" "$s1" "$s2" \
		"$(python3 -c "print('%.3f' % ($s2 / $s1))")"
done
;; esac
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
