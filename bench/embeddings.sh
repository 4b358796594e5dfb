#!/bin/sh
# embeddings.sh — where parameter servers win: a click-through model
# (bench/ctr_gen: 2 categorical features of 2 Zipf ids each, 8 dense
# floats, a planted label; tables of DIM 8 per feature; an MLP of HIDDEN
# layers, default 256,128: 24-256-128-2, 39k dense parameters) as the
# vocabulary grows from 10^3 to 10^7 ids per feature, trained by 4
# workers with each strategy:
#   allreduce  4 ranks; the tables' gradients travel densely (every row,
#              every step: an MPI_Allreduce as large as the tables)
#   ps         1 server + 4 workers; workers pull the batch's rows and push
#              their gradients (and the dense layers' whole)
#   hybrid     1 server + 4 workers; the server holds the tables (rows
#              pulled and pushed as under ps), the workers allreduce the
#              dense layers among themselves
# Prints per vocabulary and strategy: samples/s (the median epoch), bytes
# a worker sends and receives per step (bytes_per_step: ps and hybrid
# count their messages, allreduce what a ring allreduce of its gradients
# moves) and through the server's link (server_bytes_per_step: every
# worker's messages), and test accuracy after EPOCHS epochs on held-out records of the
# same planted model; plots samples/s and bytes per step against the
# vocabulary (PLOT_DIR/embeddings-crossover.png). Figures, never
# pass/fail; doc/embeddings.md explains them.
#
# Usage: bench/embeddings.sh [BUILD_DIR]   (default build-bench/)
# Env: VOCABS (default "1000 10000 100000 1000000 10000000"), HIDDEN, RECORDS (training
#      records, default 100000; at 10^7 ids BIG_RECORDS, default 12800, so
#      that the allreduce run's steps, each moving the whole tables, end in
#      minutes), EPOCHS (default 2), STRATEGIES (default "allreduce ps
#      hybrid"), BENCH_DIR (default /tmp/recordio-bench-embeddings), PLOT_DIR.
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
make -C "$B" -s bench/ctr_gen >/dev/null
VOCABS=${VOCABS:-1000 10000 100000 1000000 10000000}
HIDDEN=${HIDDEN:-256,128}
RECORDS=${RECORDS:-100000}
BIG_RECORDS=${BIG_RECORDS:-12800}
EPOCHS=${EPOCHS:-2}
STRATEGIES=${STRATEGIES:-allreduce ps hybrid}
W=${BENCH_DIR:-/tmp/recordio-bench-embeddings}
PLOT_DIR=${PLOT_DIR:-$RIO_TOP/doc}
mkdir -p "$W" "$PLOT_DIR"
mpi_local_env
export OMPI_MCA_mpi_yield_when_idle=1

echo "== $(nproc) cores; 4 workers; $EPOCHS epochs; tables of 8 floats per id, 2 features; hidden $HIDDEN"
for v in $VOCABS; do
	n=$RECORDS
	[ "$v" -ge 10000000 ] && n=$BIG_RECORDS
	# 5 training shards and 1 test shard of the same planted model
	total=$((n + n / 5))
	[ -f "$W/v$v-$n-00005-of-00006.tfrecord" ] ||
		"$B/bench/ctr_gen" -o "$W/v$v-$n" -n $total -s 6 -f 2 -V "$v" -k 2 -d 8 --seed 1 >/dev/null
	train=$(printf "$W/v$v-$n-%05d-of-00006.tfrecord," 0 1 2 3 4 | sed 's/,$//')
	test="$W/v$v-$n-00005-of-00006.tfrecord"
	for s in $STRATEGIES; do
		case $s in
		allreduce) np=4 args="" ;;
		*) np=5 args="--strategy $s" ;;
		esac
		echo "-- $v ids, $s: mpirun -np $np recordio-train ... $args"
		# shellcheck disable=SC2086
		mpirun -np $np "$B/recordio-train" --train "$train" --test "$test" --x dense --y label \
			--classes 2 --embed "cat0:$v:8,cat1:$v:8" --hidden "$HIDDEN" --global-batch 128 \
			--epochs "$EPOCHS" --threads 1 --quiet --lr 0.1 --sharding records $args \
			--metrics "$W/$s-$v.json" >"$W/$s-$v.log" 2>&1 ||
			{ echo "   failed:"; tail -3 "$W/$s-$v.log"; }
	done
done

python3 - "$W" "$PLOT_DIR" "$VOCABS" "$STRATEGIES" <<'EOF'
import json, os, statistics, subprocess, sys
w, plot_dir, vocabs, strategies = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
print("\n%-10s %-10s %10s %14s %14s %10s" % ("vocab", "strategy", "samples/s", "bytes/step", "server/step", "test acc"))
rows = {}
for v in vocabs:
    for s in strategies:
        try:
            e = [json.loads(l) for l in open(os.path.join(w, "%s-%s.json" % (s, v)))]
        except OSError:
            continue
        if not e:
            continue
        sps = statistics.median(x["samples_per_s"] for x in e)
        bps = statistics.median(x["bytes_per_step"] for x in e)
        sbps = statistics.median(x.get("server_bytes_per_step", 0) for x in e)
        rows[s, v] = (sps, bps, sbps)
        server = "%14.0f" % sbps if s != "allreduce" else "%14s" % "-"
        print("%-10s %-10s %10.0f %14.0f %s %10.4f" % (v, s, sps, bps, server, e[-1]["test_accuracy"]))
    print()
for s in strategies:
    with open(os.path.join(w, "%s.dat" % s), "w") as f:
        for v in vocabs:
            if (s, v) in rows:
                f.write("%s %g %g %g\n" % (v, *rows[s, v]))
png = os.path.join(plot_dir, "embeddings-crossover.png")
g = ["set terminal pngcairo size 1300,520 font ',10'", "set output '%s'" % png,
     "set multiplot layout 1,2 title 'CTR model, 4 workers: as the vocabulary grows'",
     "set logscale x", "set logscale y", "set grid", "set xlabel 'ids per feature (2 features, 8 floats an id)'",
     "set key top right", "set ylabel 'samples/s'", "set title 'speed'",
     "plot " + ", ".join("'%s' using 1:2 with linespoints lw 2 title '%s'" % (os.path.join(w, s + ".dat"), s) for s in strategies),
     "set ylabel 'bytes sent and received per step'", "set title 'traffic'", "set key top left",
     "plot " + ", ".join("'%s' using 1:3 with linespoints lw 2 title '%s: a worker'" % (os.path.join(w, s + ".dat"), s) for s in strategies)
     + "".join(", '%s' using 1:4 with linespoints lw 2 dt 2 title '%s: the server'" % (os.path.join(w, s + ".dat"), s) for s in strategies if s != "allreduce"),
     "unset multiplot"]
open(os.path.join(w, "crossover.gp"), "w").write("\n".join(g) + "\n")
try:
    subprocess.run(["gnuplot", os.path.join(w, "crossover.gp")], check=True)
    print("plot: " + png)
except (OSError, subprocess.CalledProcessError) as e:
    print("plot: gnuplot failed: %s" % e, file=sys.stderr)
EOF
