#!/bin/sh
# scaling.sh — the scaling study of doc/scaling.md: where recordio-train's
# data parallelism stops paying, measured on namespace hosts
# (tests/cluster/cluster.sh: 8 hosts, one rank each, on a bridge) and
# modelled (figures, never pass/fail):
#   a. an MPI_Allreduce sweep (bench/allreduce: float sum, 4 KiB to 64 MiB,
#      2, 4 and 8 ranks) on unshaped links and links shaped with tc tbf to
#      10 and 1 Gbit/s, reported as nccl-tests does (algbw, busbw); the ring
#      model's alpha and beta fitted from it; the trainer's own call (in
#      place, non-blocking: libnbc's binomial tree by default, and its ring)
#      swept beside it;
#   b. recordio-train's compute per step at 1 rank (one core, no network)
#      for every per-rank batch used below;
#   c. weak (batch 128 per rank) and strong (global batch 1024) scaling of
#      784-256-128-10 at 1, 2, 4, 8 ranks on each link, allreduce time per
#      step measured against the model's prediction;
#   d. bench/scaling_model.py: the tables (printed, and in BENCH_DIR/
#      tables.md), the projection to 64-1024 ranks, and the PNGs into OUT.
# Needs root (network namespaces, tc). The machine's cores are shared by
# all ranks: with fewer cores than ranks, the measured steps include CPU
# contention, which is why compute is measured at 1 rank and the allreduce
# over the shaped links. The kernel has no netem: no latency is added, the
# links differ in bandwidth only.
#
# Usage: bench/scaling.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: BENCH_DIR (scratch, default /tmp/recordio-bench-scaling), OUT (the
#      PNGs, default doc/), LINKS (default "none 10gbit 1gbit"), BURST_10gbit,
#      BURST_1gbit (tbf bursts, default 4mb and 1mb), EPOCHS (default 3; the
#      median epoch is reported), REDUCE (the trainer's --reduce, default mpi:
#      Open MPI's allreduce, whose ring doc/scaling.md's model fits; alltoall
#      measures the trainer's own default across hosts), COMPRESS=ROUNDS
#      (only the --grad-compression bf16 row: see below).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
make -C "$B" -s bench/allreduce >/dev/null
W=${BENCH_DIR:-/tmp/recordio-bench-scaling}
OUT=${OUT:-$RIO_TOP/doc}
LINKS=${LINKS:-none 10gbit 1gbit}
BURST_10gbit=${BURST_10gbit:-4mb}
BURST_1gbit=${BURST_1gbit:-1mb}
EPOCHS=${EPOCHS:-3}
RANKS="2 4 8"
BATCH=128
GLOBAL=1024
CLUSTER="$RIO_TOP/tests/cluster/cluster.sh"
mkdir -p "$W" "$OUT"
rm -f "$W"/ar-*.json "$W"/tr-*.json
mpi_root_env
pack_fashion_mnist train "$W/train"

C=$(mktemp -d "${TMPDIR:-/tmp}/rio-scaling-XXXXXX")
trap 'cd / && sh "$CLUSTER" down "$C"' EXIT
trap 'exit 1' HUP INT TERM
rc=0
sh "$CLUSTER" up "$C" 8 || rc=$?
[ $rc -eq 0 ] || { echo "scaling.sh: no namespace hosts here (root needed)"; exit $rc; }

hosts() { # N: a hostfile of the first N hosts, one slot each
	sh "$CLUSTER" hostfile "$C" "$C/hf$1" "$1" 1
	echo "$C/hf$1"
}
RING="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4"
NBC_RING="--mca coll_libnbc_iallreduce_algorithm 1"
sweep() { # LINK N NAME [MPIRUN OPTIONS] -- [ALLREDUCE ARGS]
	link=$1 n=$2 name=$3
	shift 3
	opts=""
	while [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	timeout 300 "$C/mpirun" -np "$n" --hostfile "$(hosts "$n")" $opts "$B/bench/allreduce" "$@" \
		>"$W/ar-$link-$n-$name.json" 2>"$W/ar-$link-$n-$name.err" ||
		{ echo "allreduce $link $n $name failed:"; tail -3 "$W/ar-$link-$n-$name.err"; }
}
train() { # N METRICS [MPIRUN OPTIONS] -- [TRAINER OPTIONS]
	n=$1 m=$2
	shift 2
	opts=""
	while [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	timeout 600 "$C/mpirun" -np "$n" --hostfile "$(hosts "$n")" $opts "$B/recordio-train" \
		--train "$W/train" --x image --y label --hidden 256,128 --threads 1 \
		--epochs "$EPOCHS" --reduce "${REDUCE:-mpi}" --quiet --metrics "$W/$m" "$@" >"$W/${m%.json}.out" 2>&1 ||
		{ echo "recordio-train $n ranks -> $m failed:"; tail -3 "$W/${m%.json}.out"; }
}

# COMPRESS=ROUNDS: only the 16-bit exchange's row of doc/scaling.md: on
# the 1 Gbit/s link at 4 ranks, weak scaling, fp32 and --grad-compression
# bf16 runs interleaved ROUNDS times; per run its median epoch's exposed
# allreduce time per step and samples/s, then the medians over the rounds,
# their ratios and the load. COMPRESS_LINK=none: the same unshaped (what
# the exchange costs with the link out of the way: on a loaded machine, the
# ranks waiting for cores).
if [ -n "${COMPRESS:-}" ]; then
	link=${COMPRESS_LINK:-1gbit}
	sh "$CLUSTER" shape "$C" "$link" $([ "$link" = none ] || echo "$BURST_1gbit")
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
	for r in $(seq "$COMPRESS"); do
		for how in none bf16; do
			train 4 "cmp-$how-$r.json" -- --batch $BATCH --grad-compression $how
		done
	done
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$W" "$COMPRESS" "${REDUCE:-mpi}" "$link" <<'PY'
import json, statistics, sys
w, rounds, reduce, link = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def run(how, r):
    eps = sorted((json.loads(l) for l in open(f"{w}/cmp-{how}-{r}.json")),
                 key=lambda e: e["allreduce_seconds"] / e["steps"])
    e = eps[len(eps) // 2]
    return 1e3 * e["allreduce_seconds"] / e["steps"], e["samples_per_s"], e["bytes_per_step"]
res = {h: [run(h, r) for r in range(1, rounds + 1)] for h in ("none", "bf16")}
med = {h: [statistics.median(x[i] for x in res[h]) for i in range(3)] for h in res}
print(f"--reduce {reduce}, link {link}, 4 ranks, batch 128 per rank, {rounds} rounds (median epoch each)")
print("| grad compression | allreduce per step | samples/s | bytes per step |")
print("|---|---|---|---|")
for h in res:
    a, s, b = med[h]
    print(f"| {h} | {a:.2f} ms | {s:.0f} | {b:.0f} |")
    print("   rounds: " + ", ".join(f"{x[0]:.2f} ms {x[1]:.0f}/s" for x in res[h]))
print(f"bf16 / none: allreduce {med['bf16'][0] / med['none'][0]:.2f}, "
      f"samples/s {med['bf16'][1] / med['none'][1]:.2f}, bytes {med['bf16'][2] / med['none'][2]:.2f}")
PY
	exit 0
fi

t0=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before ($(nproc) cores)"
echo "== b. compute per step at 1 rank (one core, no network)"
for bsz in $BATCH 1024 512 256; do
	# 2 more epochs: the median of EPOCHS + 2, as this measurement is the
	# base of every prediction
	train 1 "tr-1-b$bsz.json" -- --batch $bsz --epochs $((EPOCHS + 2))
done

for link in $LINKS; do
	case $link in
	none) burst="" ;;
	10gbit) burst=$BURST_10gbit ;;
	1gbit) burst=$BURST_1gbit ;;
	*) burst=${BURST:-1mb} ;;
	esac
	sh "$CLUSTER" shape "$C" "$link" $burst
	echo "== a. allreduce sweep, links: $link${burst:+ (tbf burst $burst)} [$(($(date +%s) - t0)) s]"
	for n in $RANKS; do
		sweep "$link" "$n" ring $RING -- 4096 67108864 0.2
		sweep "$link" "$n" inplace -- -i 4096 16777216 0.2
		sweep "$link" "$n" inplace-ring $NBC_RING -- -i 4096 16777216 0.2
	done
	echo "== c. recordio-train weak and strong scaling, links: $link [$(($(date +%s) - t0)) s]"
	for n in $RANKS; do
		train "$n" "tr-$link-$n-weak.json" -- --batch $BATCH
		train "$n" "tr-$link-$n-strong.json" -- --global-batch $GLOBAL
		if [ "$link" = 1gbit ]; then
			train "$n" "tr-ringlink-$n-weak.json" $NBC_RING -- --batch $BATCH
		fi
	done
done
sh "$CLUSTER" shape "$C" none
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

nparams=$(python3 -c 'i=784; n=0
for o in (256, 128, 10): n += i * o + o; i = o
print(n)')
link_names=""
for link in $LINKS; do
	case $link in
	none) name="unshaped" ;;
	10gbit) name="10 Gbit/s, burst $BURST_10gbit" ;;
	1gbit) name="1 Gbit/s, burst $BURST_1gbit" ;;
	*) name=$link ;;
	esac
	link_names="$link_names${link_names:+, }\"$link\": \"$name\""
done
cat >"$W/meta.json" <<EOF
{"links": [$(echo $LINKS | sed 's/\([^ ]*\)/"\1"/g; s/ /, /g')], "link_names": {$link_names},
 "ranks": [$(echo $RANKS | sed 's/ /, /g')], "bucket_bytes": 262144, "nparams": $nparams,
 "batch": $BATCH, "global_batch": $GLOBAL, "cores": $(nproc), "ring_link": "1gbit",
 "load_before": "$load_before", "load_after": "$load_after",
 "projection": {"gbit": 100, "alpha": 5e-6, "ranks": [8, 64, 256, 1024],
                "big_tokens": 8192, "big_flops": 5e13}}
EOF
echo "== d. tables, projection and plots [$(($(date +%s) - t0)) s]"
python3 "$RIO_TOP/bench/scaling_model.py" "$W" "$OUT"
echo "plots: $OUT/scaling-allreduce.png $OUT/scaling-trainer.png $OUT/scaling-projection.png"
echo "total $(($(date +%s) - t0)) s"
