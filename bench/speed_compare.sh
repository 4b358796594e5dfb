#!/bin/sh
# speed_compare.sh — two builds' speed, interleaved: the check that a
# restructuring cost nothing (figures and ratios, never pass/fail). Each
# round runs every case with one build, then the other (the order swapped
# every round: the machine's speed drifts over minutes), and the medians
# over the rounds are compared:
#   train-1: recordio-train, 1 rank, 784-256-128-10, batch 128, Fashion-MNIST
#            (lz4 shards, buffer shuffle), EPOCHS epochs: samples/s of each
#            epoch (all of them go into the median);
#   train-2: the same on 2 ranks (gradients summed in shared memory);
#   synth-2: 2 ranks on --synthetic batches (no input pipeline);
#   train16-2: train-2 under --precision bf16 (where the CPU and both
#            builds have bf16 GEMMs; left out otherwise);
#   loader-none, loader-buffer, loader-global: recordio-bench over MIB MiB of
#            4 KiB records in 8 uncompressed shards with .idx (warm), batch
#            256, 2 workers, in shard order, buffer-shuffled and globally
#            shuffled: the loop's bytes/s;
#   loader-decode: recordio-bench decoding Fashion-MNIST's Examples
#            (image:u8:784,label:i64:1), buffer-shuffled: records/s.
# Build the two with bench/ckpt_compare.sh (its builds are kept under
# /tmp/recordio-ckpt-compare/build-SHA) or any plain -O2 build.
#
# Usage: bench/speed_compare.sh OLD_BUILD NEW_BUILD
# Env: ROUNDS (default 5), EPOCHS (default 3), MIB (default 1024), BENCH_DIR
#      (scratch, default /tmp/recordio-speed-compare).
set -eu
. "$(dirname "$0")/bench_lib.sh"
[ $# -eq 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD" >&2; exit 2; }
OLD=$(cd "$1" && pwd) NEW=$(cd "$2" && pwd)
ROUNDS=${ROUNDS:-5} EPOCHS=${EPOCHS:-3} MIB=${MIB:-1024}
W=${BENCH_DIR:-/tmp/recordio-speed-compare}
mkdir -p "$W"
mpi_local_env
unset OPENBLAS_CORETYPE
B=$NEW
pack_fashion_mnist train "$W/train"
pack_fashion_mnist test "$W/test"
make -C "$NEW" -s bench/mkshards >/dev/null
lines=$((MIB * 256))
[ "$(cat "$W/plain.mib" 2>/dev/null)" = "$MIB" ] || {
	"$NEW/bench/mkshards" "$FM/train-images-idx3-ubyte.gz" 4080 "$lines" 8 "$W/plain"
	"$NEW/recordio-index" --quiet "$W"/plain-*.tfrecord
	echo "$MIB" >"$W/plain.mib"
}
PLAIN=$(echo "$W"/plain-*.tfrecord)
cat $PLAIN >/dev/null

j() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
# every epoch's samples/s of a metrics file, one per line
epochs_rate() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "epoch" in e and not e.get("snapshot") and not e.get("partial"):
        print(e["samples_per_s"])' "$1"
}
train() { # BUILD NP OUT [ARGS...]
	b=$1 np=$2 out=$3; shift 3
	rm -f "$out"
	mpirun -np "$np" "$b/recordio-train" --train "$W/train" --test "$W/test" --x image \
		--y label --hidden 256,128 --batch 128 --threads 1 --epochs "$EPOCHS" --quiet \
		--metrics "$out" "$@" >/dev/null
}
bench() { # BUILD OUT FIELD ARGS...
	b=$1 out=$2 field=$3; shift 3
	"$b/recordio-bench" --json --workers 2 "$@" >"$out.json"
	j "$out.json" "$field"
}
# one round of every case with BUILD (old or new): figures appended to
# $W/CASE.BUILD, one per line
round() { # NAME BUILD
	n=$1 b=$2
	train "$b" 1 "$W/m1.json" && epochs_rate "$W/m1.json" >>"$W/train-1.$n"
	train "$b" 2 "$W/m2.json" && epochs_rate "$W/m2.json" >>"$W/train-2.$n"
	train "$b" 2 "$W/ms.json" --synthetic && epochs_rate "$W/ms.json" >>"$W/synth-2.$n"
	[ -z "$BF16" ] ||
		{ train "$b" 2 "$W/m16.json" --precision bf16 && epochs_rate "$W/m16.json" >>"$W/train16-2.$n"; }
	for s in none buffer global; do
		bench "$b" "$W/l" bytes_per_s --batch 256 --shuffle $s --epochs 2 $PLAIN \
			>>"$W/loader-$s.$n"
	done
	bench "$b" "$W/d" records_per_s --batch 256 --shuffle buffer --epochs 2 \
		--decode image:u8:784,label:i64:1 "$W/train" >>"$W/loader-decode.$n"
}
# bf16 where both builds run it (one step each)
BF16=1
for b in "$OLD" "$NEW"; do
	"$b/recordio-train" --train "$W/train" --x image --y label --hidden 8 --batch 16 \
		--max-steps 1 --quiet --precision bf16 >/dev/null 2>&1 || BF16=
done
CASES="train-1 train-2 synth-2${BF16:+ train16-2} loader-none loader-buffer loader-global loader-decode"
for c in $CASES; do rm -f "$W/$c.old" "$W/$c.new"; done
echo "speed of two builds, interleaved: $ROUNDS rounds, $(nproc) cores, $(date -u +%Y-%m-%d)"
echo "  old: $OLD"
echo "  new: $NEW"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	if [ $((r % 2)) -eq 1 ]; then round old "$OLD"; round new "$NEW"
	else round new "$NEW"; round old "$OLD"; fi
	echo "  round $r of $ROUNDS done"
	r=$((r + 1))
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '%-15s %14s %14s %8s   (%s)\n' case "old median" "new median" new/old "every figure: old | new"
for c in $CASES; do
	o=$(median "$W/$c.old") n=$(median "$W/$c.new")
	printf '%-15s %14.4g %14.4g %8.3f   %s | %s\n' "$c" "$o" "$n" \
		"$(awk -v a="$n" -v b="$o" 'BEGIN {print a / b}')" \
		"$(tr '\n' ' ' <"$W/$c.old" | awk '{for (i = 1; i <= NF; i++) printf "%.4g ", $i}')" \
		"$(tr '\n' ' ' <"$W/$c.new" | awk '{for (i = 1; i <= NF; i++) printf "%.4g ", $i}')"
done
echo "(samples/s for train-*, synth-*; payload bytes/s for loader-none/buffer/global; records/s"
echo " for loader-decode)"
