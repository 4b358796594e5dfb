#!/bin/sh
# ckpt_compare.sh — recordio-train's checkpoints from two commits, byte for
# byte: the check that a restructuring of the trainer changed no result.
# Each commit is built from its tree (plain -O2 build, no sanitizers),
# then every case below is trained by both builds on the same data, and
# DIR/checkpoint of one is compared with the other's (cmp). DIR/clock holds
# the training seconds and is not compared. Cases:
#   allreduce 2 ranks: SGD, Adam, LARS, --shard-optimizer; 3 ranks over
#     --reduce alltoall; --embed tables (SGD, 2 ranks);
#   ps --staleness 0: --servers 1 (2 workers, SGD) and --servers 2
#     (2 workers, Adam) (runs with K >= 1 are not reproducible by design);
#   hybrid --embed, 2 workers (1 server);
#   stopped mid-epoch (--max-steps, --checkpoint-every) then --resume, under
#     allreduce and ps;
#   an elastic resume: stopped on 2 ranks, resumed on 4;
#   model parallelism (each rank writes and reads its own part): P2, T2,
#     P2 x T2, D2 x P2, D2 x T2, P2 with --embed; stopped as P2 and resumed
#     as T2, stopped as T2 and resumed as D2 x P2 and as one rank.
# Data: tests/data/tfx-mnist.tfrecord (1000 Examples of 784 floats) as 10
# shards, and a click-through set made by bench/ctr_gen (for --embed).
# It needs git history, so it stays out of make check and the tarball.
#
# Usage: bench/ckpt_compare.sh BASE [NEW]   (commits; NEW default HEAD)
# Env: BENCH_DIR (scratch, default /tmp/recordio-ckpt-compare; the builds
#      and the data are kept there and reused while their commit is the
#      same; each run's checkpoints go to a run.* directory of its own,
#      removed when every case is the same).
# Exit: 0 when every case gives the same bytes, 1 when any differs.
set -eu
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
[ $# -ge 1 ] || { echo "usage: $0 BASE [NEW]" >&2; exit 2; }
W=${BENCH_DIR:-/tmp/recordio-ckpt-compare}
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_mpi_yield_when_idle=1

# build COMMIT: the commit's build in $W/build-SHA (made once; a lock
# keeps two runs of this script from building one commit at once). The
# source is the commit's tree (git archive), so nothing is registered in
# the repository.
build() {
	sha=$(git -C "$RIO_TOP" rev-parse --verify "$1^{commit}")
	src="$W/src-$sha" out="$W/build-$sha"
	(
		flock 9
		if [ ! -x "$out/recordio-train" ] || [ ! -x "$out/bench/ctr_gen" ]; then
			rm -rf "$src" "$out"
			mkdir -p "$src" "$out"
			git -C "$RIO_TOP" archive "$sha" | tar -x -C "$src"
			(cd "$src" && ./autogen.sh >/dev/null 2>&1)
			(cd "$out" && "$src/configure" --disable-shared CFLAGS="-O2 -g" >configure.out 2>&1 &&
				make -j"$(nproc)" >make.out 2>&1 && make bench/ctr_gen >>make.out 2>&1) || {
				echo "build of $1 ($sha) failed: $out/make.out" >&2
				tail -20 "$out/make.out" >&2
				rm -f "$out/recordio-train"
				exit 1
			}
		fi
	) 9>"$W/build-$sha.lock" || exit 1
	echo "$out"
}

OLD=$(build "$1")
NEW=$(build "${2:-HEAD}")
echo "base: $1 ($OLD)"
echo "new:  ${2:-HEAD} ($NEW)"

# the data, made once (in a directory of its own, renamed when whole);
# the runs' checkpoints in a directory of this run's, so that two runs of
# the script at once do not mix their cases
D="$W/data"
if [ ! -d "$D" ]; then
	T=$(mktemp -d "$W/data.XXXXXX")
	"$NEW/recordio-pack" -q -f --from tfrecord --output "$T/mnist" --shards 10 \
		"$RIO_TOP/tests/data/tfx-mnist.tfrecord"
	"$NEW/bench/ctr_gen" -o "$T/ctr" -n 4000 -s 4 -f 2 -V 500 -k 2 -d 4 --seed 3 >/dev/null
	mv -T "$T" "$D" 2>/dev/null || rm -rf "$T" # (another run made it first)
fi
R=$(mktemp -d "$W/run.XXXXXX")
list() { # list PREFIX N FROM TO: shards FROM..TO of N, comma-separated
	seq "$3" "$4" | while read -r i; do printf '%s-%05d-of-%05d.tfrecord\n' "$1" "$i" "$2"; done |
		paste -sd, -
}
# (the --global-batch cases give no --batch: the two are refused together)
MNIST_DATA="--train $(list "$D/mnist" 10 0 7) --test $(list "$D/mnist" 10 8 9)
	--x image_floats --y image_class --hidden 32 --epochs 2 --quiet"
MNIST="$MNIST_DATA --batch 16"
CTR="--train $(list "$D/ctr" 4 0 2) --test $(list "$D/ctr" 4 3 3)
	--x dense --embed cat0:500:4,cat1:500:4 --y label --classes 2 --hidden 16 --batch 32
	--epochs 2 --quiet"

# model parallelism: a model of 4 layers (two Megatron-LM pairs)
MP="--train $(list "$D/mnist" 10 0 7) --test $(list "$D/mnist" 10 8 9)
	--x image_floats --y image_class --hidden 64,32,16 --batch 16 --epochs 1 --quiet"

fails=0
# case NAME RANKS ARGS...: one run of each build; their checkpoints compared
# (RANKS 1 runs without mpirun)
run() {
	bin=$1 dir=$2 n=$3; shift 3
	if [ "$n" -eq 1 ]; then
		"$bin/recordio-train" --checkpoint "$dir" "$@"
	else
		timeout 600 mpirun -np "$n" "$bin/recordio-train" --checkpoint "$dir" "$@"
	fi >"$dir.log" 2>&1 || { echo "  $(basename "$dir"): exit $? (see $dir.log)"; return 1; }
}
compare() {
	name=$1
	if cmp -s "$R/old-$name/checkpoint" "$R/new-$name/checkpoint"; then
		printf '%-36s same (%s bytes)\n' "$name" "$(wc -c <"$R/new-$name/checkpoint")"
	else
		printf '%-36s DIFFERENT: %s\n' "$name" \
			"$(cmp "$R/old-$name/checkpoint" "$R/new-$name/checkpoint" 2>&1 | head -1)"
		fails=$((fails + 1))
	fi
}
case_() {
	name=$1 n=$2; shift 2
	rm -rf "$R/old-$name" "$R/new-$name"
	run "$OLD" "$R/old-$name" "$n" "$@" && run "$NEW" "$R/new-$name" "$n" "$@" ||
		{ fails=$((fails + 1)); return 0; }
	compare "$name"
}
# stop_resume NAME RANKS1 RANKS2 STOP EVERY ARGS...: stopped at --max-steps
# STOP (checkpoints every EVERY steps), then resumed on RANKS2 ranks
stop_resume() {
	name=$1 n1=$2 n2=$3 stop=$4 every=$5; shift 5
	rm -rf "$R/old-$name" "$R/new-$name"
	for side in old new; do
		[ $side = old ] && bin=$OLD || bin=$NEW
		run "$bin" "$R/$side-$name" "$n1" "$@" --max-steps "$stop" --checkpoint-every "$every" &&
			run "$bin" "$R/$side-$name" "$n2" "$@" --resume ||
			{ fails=$((fails + 1)); return 0; }
	done
	compare "$name"
}
# relayout NAME RANKS1 ARGS1 RANKS2 ARGS2 COMMON...: stopped at step 17
# with ARGS1 on RANKS1 ranks, resumed with ARGS2 on RANKS2 (ARGS: one word,
# split)
relayout() {
	name=$1 n1=$2 a1=$3 n2=$4 a2=$5; shift 5
	rm -rf "$R/old-$name" "$R/new-$name"
	for side in old new; do
		[ $side = old ] && bin=$OLD || bin=$NEW
		# shellcheck disable=SC2086
		run "$bin" "$R/$side-$name" "$n1" "$@" $a1 --max-steps 17 &&
			run "$bin" "$R/$side-$name" "$n2" "$@" $a2 --resume ||
			{ fails=$((fails + 1)); return 0; }
	done
	compare "$name"
}

# shellcheck disable=SC2086
{
	case_ allreduce-sgd 2 $MNIST --optimizer sgd
	case_ allreduce-adam 2 $MNIST --optimizer adam
	case_ allreduce-lars 2 $MNIST_DATA --optimizer lars --global-batch 64
	case_ allreduce-shard-optimizer 2 $MNIST --optimizer adam --reduce shm --shard-optimizer
	case_ allreduce-alltoall-3 3 $MNIST --optimizer sgd --reduce alltoall
	case_ allreduce-1-rank 1 $MNIST --optimizer adam
	case_ allreduce-embed 2 $CTR --optimizer sgd
	case_ ps-s1-k0 3 $MNIST --strategy ps --servers 1 --optimizer sgd
	case_ ps-s2-k0-adam 4 $MNIST --strategy ps --servers 2 --optimizer adam
	case_ ps-embed 3 $CTR --strategy ps --servers 1 --optimizer adam
	case_ hybrid-embed-2-workers 3 $CTR --strategy hybrid --servers 1 --optimizer sgd
	stop_resume allreduce-stop-resume 2 2 37 10 $MNIST --optimizer adam
	stop_resume ps-stop-resume 4 4 37 10 $MNIST --strategy ps --servers 2 --optimizer adam
	stop_resume elastic-2-to-4 2 4 37 10 $MNIST_DATA --optimizer sgd --global-batch 32
	case_ pipeline-p2-adam 2 $MP --optimizer adam --pipeline 2
	case_ tensor-t2-sgd 2 $MP --optimizer sgd --tensor 2
	case_ p2xt2-lars 4 $MP --optimizer lars --pipeline 2 --tensor 2
	case_ d2xp2-adam 4 $MP --optimizer adam --pipeline 2
	case_ d2xt2-adam 4 $MP --optimizer adam --tensor 2
	case_ pipeline-embed 2 $CTR --optimizer adam --pipeline 2
	relayout p2-to-t2 2 "--pipeline 2" 2 "--tensor 2" $MP --optimizer adam
	relayout t2-to-d2xp2 2 "--tensor 2" 4 "--pipeline 2" $MP --optimizer adam
	relayout t2-to-1-rank 2 "--tensor 2" 1 "" $MP --optimizer adam
}
echo
if [ $fails -eq 0 ]; then
	rm -rf "$R"
	echo "every checkpoint the same, byte for byte"
else
	echo "$fails case(s) differ or failed (checkpoints and logs in $R)"
	exit 1
fi
