#!/bin/sh
# split_ckpt.sh — what a checkpoint of a split model costs
# (trainer/checkpoint_split.c: each rank writes and reads its own part):
# on the wide MLP (784-4096-4096-4096-10, Adam: 442 MB of parameters and
# moments), for T = 2 (a Megatron-LM pair's second layer written a row at a
# time) and P = 2 (a stage's layers a block at a time), 2 ranks:
#   plain    a run of STEPS steps, no checkpoint;
#   write    the same with a checkpoint at its end (the write's cost: write
#            minus plain);
#   resume   that checkpoint resumed in the same layout, one more step and
#            a checkpoint (resume minus write: the read's cost);
#   limit    the same run's limit: the checkpoint's bytes copied and
#            fsync'd in one stream (cp, sync), what one writer of the whole
#            file would pay at least;
# and rank 0's peak resident memory (VmHWM) on the resume. The median of
# REPEATS runs; the load average beside the figures (figures, never
# pass/fail).
#
# Usage: bench/split_ckpt.sh [BUILD_DIR]   (default build-bench/)
# Env: BENCH_DIR (scratch, default /tmp/recordio-bench-split-ckpt),
#      REPEATS (default 3), STEPS (default 1).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$TOP/build-bench}" && pwd)
W=${BENCH_DIR:-/tmp/recordio-bench-split-ckpt}
REPEATS=${REPEATS:-3} STEPS=${STEPS:-1}
mkdir -p "$W" && cd "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_mpi_yield_when_idle=1
M="--synthetic=256 --hidden 4096,4096,4096 --batch 32 --optimizer adam --quiet --threads 1"
secs() { # the seconds of a command
	s=$(date +%s.%N)
	"$@" >/dev/null 2>err || { echo "failed: $*" >&2; cat err >&2; exit 1; }
	echo "$(date +%s.%N) - $s" | bc
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
train() { timeout 1200 mpirun -np 2 "$B/recordio-train" $M "$@"; }
printf '%-6s %8s %8s %8s %8s %10s %8s\n' layout plain write resume limit "peak MiB" load
for L in "--tensor 2" "--pipeline 2"; do
	p="" w="" r="" k=""
	for i in $(seq "$REPEATS"); do
		rm -rf ck copy
		# shellcheck disable=SC2086
		p="$p $(secs train $L --max-steps "$STEPS")"
		# shellcheck disable=SC2086
		w="$w $(secs train $L --max-steps "$STEPS" --checkpoint ck)"
		# shellcheck disable=SC2086
		r="$r $(secs train $L --max-steps $((STEPS + 1)) --checkpoint ck --resume --metrics m.json)"
		k="$k $(secs sh -c 'cp ck/checkpoint copy && sync copy')"
	done
	peak=$(python3 -c 'import json; print(round(json.loads(open("m.json").read().splitlines()[-1])["peak_bytes"][0] / 2**20))')
	printf '%-6s %8.2f %8.2f %8.2f %8.2f %10s %8s\n' "$(echo "$L" | sed 's/--tensor /T/; s/--pipeline /P/')" \
		"$(echo "$p" | median)" "$(echo "$w" | median)" "$(echo "$r" | median)" \
		"$(echo "$k" | median)" "$peak" "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "(seconds, medians of $REPEATS; the checkpoint $(wc -c <ck/checkpoint) bytes)"
