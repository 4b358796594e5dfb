#!/bin/sh
# parallelism.sh — the study of doc/parallelism.md: model parallelism
# measured (figures, never pass/fail):
#   a. the pipeline's bubble against GPipe's (P - 1) / (M + P - 1): the
#      metrics' measured `bubble` of gpipe, 1f1b and eager-1f1b for
#      M = 1..16 at P = 2,
#      on a model whose two stages cost the same, forward and backward
#      (BUBBLE_MODEL, default --synthetic=16 --hidden 512,512,512,512,512:
#      two 512x512 layers a stage, beside a thin first and last layer; the
#      model's first layer computes no input gradient, so with a wide one,
#      as in --synthetic=512 --hidden 512,512,512,512, the first stage's
#      backward is 3 GEMMs a microbatch to the second's 4, and the first
#      stage idles a sixth of each microbatch whatever M), one rank a core;
#   b. activation memory: each stage's planned bytes (what the schedule
#      keeps) and peak resident bytes (VmHWM) for sequential, gpipe, 1f1b
#      and eager-1f1b at P = 2 and P = 4, against data parallelism;
#   c. (LAYOUTS=1, root: namespace hosts, tests/cluster/cluster.sh) the
#      layouts D4, P4, T4, D2xP2, D2xT2, P2xT2 on 4 hosts of one slot, for
#      LINKS (default "none 10gbit 1gbit", tc tbf as bench/scaling.sh):
#      samples/s, bytes a step by kind and planned bytes a rank, for the
#      Fashion-MNIST MLP 784-256-256-128-10, a wide MLP (3 x 4096), and
#      784-1024-1024-1024-10 with Adam under --memory-limit 42M, which
#      does not fit one rank whole (refused as D4); and for the check of
#      bench/parallelism_model.py's step() against each point (the aim:
#      pipeline throughput at least 0.85 of the prediction on each link),
#      this machine's constants in the same run: each model on one rank at
#      REF_ROWS rows a step (default "32 64 128 256 512": the layouts'
#      microbatches and ranks' batches; ref-MODEL-bROWS-i.json: F a rank at
#      those rows, the compute reference, each over the rows of STEPS
#      steps of 512; big without its --memory-limit)
#      and, on each link, a 2-rank ring allreduce of
#      4 KiB to 16 MiB (bench/allreduce, ar-LINK.json: alpha and beta
#      fitted as bench/scaling.sh does; a few seconds a link).
# Each point is the median of REPEATS runs; the load average is printed
# beside the figures (the machine's cores may be shared). Then
# bench/parallelism_report.py: the tables (BENCH_DIR/tables.md) and the
# PNGs into OUT.
#
# Usage: bench/parallelism.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: BENCH_DIR (scratch, default /tmp/recordio-bench-parallelism), OUT
#      (the PNGs, default doc/), STEPS (steps a run, default 40; part b's
#      runs take MEM_STEPS, default 3: the plan and the peak), REPEATS
#      (default 3), MS (microbatches, default "1 2 3 4 6 8 12 16"),
#      LAYOUTS (1: part c), LINKS, LAYOUT_NAMES (part c's layouts, default
#      all six), REF_ROWS, PARTS (default "ab": parts a and b; ""
#      with LAYOUTS=1: part c alone), BUBBLE_MODEL (part a's model options),
#      TRACE (1: part a's runs write their timelines, RIO_PIPE_TRACE, and
#      bench/pipe_trace.py reads each point's last into BENCH_DIR/trace.txt:
#      the waits by kind, the hand-overs' latency, the least bubble those
#      compute times allow any schedule, the bubble replayed with instant
#      messages (1f1b's and eager-1f1b's each also in the other's order),
#      the metric recomputed
#      from the timeline; and where `perf` records the kernel's
#      sched_switch events, bench/pipe_sched.py: what else held each rank's
#      core inside its forwards and backwards, and their times net of it;
#      and before the runs, bench/core_speed on each core at once for 10 s:
#      the windows in which a core itself ran slow).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
W=${BENCH_DIR:-/tmp/recordio-bench-parallelism}
OUT=${OUT:-$RIO_TOP/doc}
STEPS=${STEPS:-40}
REPEATS=${REPEATS:-3}
MS=${MS:-1 2 3 4 6 8 12 16}
LINKS=${LINKS:-none 10gbit 1gbit}
mkdir -p "$W" "$OUT"
rm -f "$W"/*.json
mpi_local_env
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before ($(nproc) cores)"

# TRACE=1: the traced runs also under `perf record` of the kernel's
# context switches (SCHED, where perf can record them), on the timelines'
# clock, for bench/pipe_sched.py
SCHED=
if [ "${TRACE:-0}" = 1 ] && command -v perf >/dev/null 2>&1 &&
	perf record -q -o "$W/perf-probe.data" -k CLOCK_MONOTONIC -e sched:sched_switch -a true \
		>/dev/null 2>&1; then
	SCHED=1
fi
rm -f "$W/perf-probe.data"
run() { # NAME RANKS TRAINER OPTIONS...: REPEATS runs, metrics NAME-i.json
	name=$1 n=$2 steps=${RUN_STEPS:-$STEPS}
	shift 2
	i=1
	while [ $i -le "$REPEATS" ]; do
		rec=
		[ -n "$SCHED" ] && [ -n "${RIO_PIPE_TRACE:-}" ] &&
			rec="perf record -q -k CLOCK_MONOTONIC -e sched:sched_switch -a -o $RIO_PIPE_TRACE.perf --"
		[ -n "$rec" ] && grep '^cpu[0-9]' /proc/stat >"$RIO_PIPE_TRACE.stat"
		timeout 600 $rec mpirun -np "$n" "$B/recordio-train" --threads 1 --quiet \
			--max-steps "$steps" --metrics "$W/$name-$i.json" "$@" >"$W/$name.out" 2>&1 ||
			{ echo "$name failed:"; tail -3 "$W/$name.out"; }
		[ -n "$rec" ] && grep '^cpu[0-9]' /proc/stat >>"$RIO_PIPE_TRACE.stat"
		i=$((i + 1))
	done
}

PARTS=${PARTS-ab}
EQUAL=${BUBBLE_MODEL:-"--synthetic=16 --hidden 512,512,512,512,512 --batch 512"}
case $PARTS in *a*)
echo "== a. the bubble against (P - 1) / (M + P - 1), P = 2"
if [ "${TRACE:-0}" = 1 ]; then
	# each core's speed alone, window by window, both at once (no MPI, no
	# trainer): the machine's own changes of speed, for trace.txt
	make -C "$B" -s bench/core_speed >/dev/null
	# OpenBLAS's kernels as the trainer picks them where the VM hides the
	# CPU's model (trainer/cpus.c)
	flags=$(grep -m1 '^flags' /proc/cpuinfo)
	case $flags in
	*avx512f*avx512bw*avx512vl*) core=SkylakeX ;; *avx2*) core=Haswell ;; *) core= ;;
	esac
	for c in 0 1; do
		OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$core} taskset -c $c "$B/bench/core_speed" 10 \
			>"$W/core-$c.tsv" &
	done
	wait
fi
for m in $MS; do
	for s in gpipe 1f1b eager-1f1b; do
		[ "${TRACE:-0}" = 1 ] && export RIO_PIPE_TRACE="$W/trace-$s-$m" # the last run's
		run "bubble-$s-$m" 2 $EQUAL --pipeline 2 --pipeline-schedule $s --microbatches $m
		unset RIO_PIPE_TRACE
	done
done
run "bubble-dp" 1 $EQUAL
if [ "${TRACE:-0}" = 1 ]; then
	for m in $MS; do
		for s in gpipe 1f1b eager-1f1b; do
			python3 "$RIO_TOP/bench/pipe_trace.py" "$W/trace-$s-$m" $s $m
			[ -z "$SCHED" ] && continue
			perf script -i "$W/trace-$s-$m.perf" -F cpu,time,trace >"$W/trace-$s-$m.sched" 2>/dev/null
			python3 "$RIO_TOP/bench/pipe_sched.py" "$W/trace-$s-$m" "$W/trace-$s-$m.sched" $m \
				"$W/trace-$s-$m.stat"
			rm -f "$W/trace-$s-$m.perf"
		done
	done >"$W/trace.txt"
	for c in 0 1; do # the windows of 0.1 s whose fastest call was 1.2 times the run's fastest
		sort -n -k2 "$W/core-$c.tsv" | awk -v c=$c '
			NR == 1 { f = $2 } { v[NR] = $2 }
			END { for (i = 1; i <= NR; i++) if (v[i] > 1.2 * f) s++
			      printf "core_speed, core %d alone (32 x 512 forward, 2 GEMMs): fastest %.1f us, median window %.1f, windows over 1.2x the fastest: %d of %d\n",
			             c, f, v[int((NR + 1) / 2)], s, NR }'
	done >>"$W/trace.txt"
	cat "$W/trace.txt"
fi
;; esac

case $PARTS in *b*)
echo "== b. activation memory: sequential, gpipe, 1f1b, eager-1f1b"
WIDE="--synthetic=1024 --hidden 1024,1024,1024,1024,1024,1024,1024 --batch 512"
export RUN_STEPS=${MEM_STEPS:-3}
run "mem-dp" 1 $WIDE
for p in 2 4; do
	run "mem-p$p-sequential" $p $WIDE --pipeline $p --pipeline-schedule sequential
	for s in gpipe 1f1b eager-1f1b; do
		run "mem-p$p-$s" $p $WIDE --pipeline $p --pipeline-schedule $s --microbatches 16
	done
done
unset RUN_STEPS
;; esac

if [ "${LAYOUTS:-0}" = 1 ]; then
	CLUSTER="$RIO_TOP/tests/cluster/cluster.sh"
	C=$(mktemp -d "${TMPDIR:-/tmp}/rio-parallelism-XXXXXX")
	trap 'cd / && sh "$CLUSTER" down "$C"' EXIT
	trap 'exit 1' HUP INT TERM
	sh "$CLUSTER" up "$C" 4
	sh "$CLUSTER" hostfile "$C" "$C/hf4" 4 1
	pack_fashion_mnist train "$W/train"
	make -C "$B" -s bench/allreduce >/dev/null
	# the models, one a line (bench/parallelism_model.py's LAYOUT_MODELS:
	# keep alike), read by `while read`: mpirun's stdin is /dev/null, or
	# it would eat the lines after its own
	MODELS="fmnist:--train $W/train --x image --y label --hidden 256,256,128
wide:--synthetic --hidden 4096,4096,4096
big:--synthetic --hidden 1024,1024,1024 --optimizer adam --memory-limit 42M"
	# a rank's GEMMs run at its microbatch's rows, G / (D M): 32 for P4
	# and D2xP2 (M = 4 P), 64 for P2xT2; a data-parallel rank's at G / D
	REF_ROWS=${REF_ROWS:-32 64 128 256 512}
	echo "== c. one rank a model: the compute reference (F a rank at $REF_ROWS rows)"
	echo "$MODELS" | while IFS= read -r model; do
		mname=${model%%:*} mopts=${model#*:}
		mopts=${mopts%% --memory-limit*} # one rank holds the whole model
		for rows in $REF_ROWS; do
			i=1
			while [ $i -le "$REPEATS" ]; do
				# the rows of STEPS steps of the global batch: a few steps
				# of 32 rows would be mostly the first step's page faults
				timeout 900 "$C/mpirun" -np 1 --hostfile "$C/hf4" "$B/recordio-train" \
					--threads 1 --quiet --global-batch "$rows" \
					--max-steps $((STEPS * 512 / rows)) \
					--metrics "$W/ref-$mname-b$rows-$i.json" $mopts </dev/null >"$W/ref.out" 2>&1 ||
					{ echo "reference $mname $rows failed:"; tail -2 "$W/ref.out"; }
				i=$((i + 1))
			done
		done
	done
	sh "$CLUSTER" hostfile "$C" "$C/hf2" 2 1
	for link in $LINKS; do
		case $link in
		none) burst="" ;; 10gbit) burst=4mb ;; *) burst=1mb ;;
		esac
		sh "$CLUSTER" shape "$C" "$link" $burst
		echo "== c. the link's alpha and beta: a 2-rank ring, 4 KiB to 16 MiB, links: $link"
		timeout 300 "$C/mpirun" -np 2 --hostfile "$C/hf2" --mca coll_tuned_use_dynamic_rules 1 \
			--mca coll_tuned_allreduce_algorithm 4 "$B/bench/allreduce" 4096 16777216 0.1 \
			>"$W/ar-$link.json" 2>"$W/ar.err" || { echo "allreduce $link failed:"; tail -2 "$W/ar.err"; }
		echo "== c. layouts on 4 hosts, links: $link"
		for layout in "D4:" "P4:--pipeline 4" "T4:--tensor 4" "D2xP2:--pipeline 2" \
			"D2xT2:--tensor 2" "P2xT2:--pipeline 2 --tensor 2"; do
			name=${layout%%:*} opts=${layout#*:}
			case " ${LAYOUT_NAMES:-D4 P4 T4 D2xP2 D2xT2 P2xT2} " in *" $name "*) ;; *) continue ;; esac
			echo "$MODELS" | while IFS= read -r model; do
				mname=${model%%:*} mopts=${model#*:}
				i=1
				while [ $i -le "$REPEATS" ]; do
					timeout 900 "$C/mpirun" -np 4 --hostfile "$C/hf4" "$B/recordio-train" \
						--threads 1 --quiet --global-batch 512 --max-steps "$STEPS" \
						--metrics "$W/lay-$link-$mname-$name-$i.json" $mopts $opts \
						</dev/null >"$W/lay.out" 2>&1 || {
						echo "$link $mname $name failed:"; tail -2 "$W/lay.out"
						: >"$W/lay-$link-$mname-$name-$i.json"; }
					i=$((i + 1))
				done
			done
		done
	done
	sh "$CLUSTER" shape "$C" none
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average after: $load_after"
python3 "$RIO_TOP/bench/parallelism_report.py" "$W" "$OUT" "$load_before" "$load_after" "$MS"
