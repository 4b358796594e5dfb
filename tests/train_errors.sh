#!/bin/sh
# train_errors.sh — bad input never hangs recordio-train: a bad option, a
# missing shard, a feature that is not in the data, a label outside
# --classes, the label among the inputs, a global batch that does not
# split, an option that would have no effect (--eval-every without --test,
# a straggler that is no worker, ...), a size that is not one (--cache nan),
# a table that cannot fit in memory, a checkpoint directory, metrics file
# or TensorBoard directory that cannot be written (a checkpoint whose
# directory's fsync fails), a checkpoint or clock
# that is a FIFO, metrics in the checkpoint's files, --batch or
# --lr-scaling with --global-batch, an input
# named twice, a rank (a hybrid worker) with fewer records than a batch, an
# --x feature whose length varies, a damaged shard found mid-epoch by one
# rank: each gives one clear message
# (one line of ours, no Open MPI abort banner) and a non-zero exit from
# every rank, on 2 ranks under mpirun (within the timeout: 124 would be a
# hang) and on one rank without it. --help exits 0.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_TIMEOUT=120
TRAIN_SET=$(shards 0 3)

# one_message ARGS...: err holds one line of ours and no Open MPI abort
# banner (agreed errors end every rank cleanly, without MPI_Abort)
one_message() {
	expect_eq 1 "$(grep -cE "^recordio-train: " err)" "one message from one rank for: $*"
	expect_eq 0 "$(grep -c "MPI_ABORT" err)" "no MPI_ABORT banner for: $*"
}

# expect_fail CODE REGEX ARGS...: fails with CODE on 2 ranks and on 1, the
# message matching REGEX printed once
expect_fail() {
	code=$1; regex=$2; shift 2
	expect_exit "$code" mpi 2 "$@"
	expect_match "$regex" err "message for: $*"
	one_message "$@"
	expect_exit "$code" timeout "$TRAIN_TIMEOUT" "$TRAIN" "$@"
	expect_match "$regex" err "message for: $* (one rank)"
}

expect_exit 0 "$TRAIN" --help
expect_match '^Usage: mpirun -np N recordio-train' out "--help"
# a usage error is found before MPI_Init, on every rank: rank 0 says it,
# the others (by the launcher's OMPI_COMM_WORLD_RANK) wait, silent, for
# the launcher to end them (mpirun's SIGTERM, once rank 0 exits 2), then
# exit 2 too; should nothing end one, it says the line itself after 10 s
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$TRAIN" --bogus >out 2>err &
pid=$!
# until its SIGTERM handler is in place (SigCgt's bit 15), at most 60 s
i=0
while [ $i -lt 600 ] && [ -r /proc/$pid/status ] &&
	[ $((0x$(awk '/^SigCgt:/ { print $2 }' /proc/$pid/status) & 0x4000)) -eq 0 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -TERM $pid 2>/dev/null
rc=0
wait $pid || rc=$?
expect_eq 2 "$rc" "rank 1's usage error ended by SIGTERM"
expect_eq 0 "$(grep -c '^recordio-train: ' err)" "rank 1 leaves the line to rank 0"
expect_exit 2 env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$TRAIN" --bogus
expect_match "^recordio-train: rank 1: unknown option '--bogus'\$" err "rank 1, ended by nothing, says it"
one_message rank 1 ended by nothing
expect_fail 2 "unknown option '--bogus'" --train "$TRAIN_SET" $MNIST_X --bogus
expect_fail 2 "--train SHARDS is required" $MNIST_X
expect_fail 2 "--lr: 'fast' is not a positive rate" --train "$TRAIN_SET" $MNIST_X --lr fast
expect_fail 2 "--hidden: '12,,3'" --train "$TRAIN_SET" $MNIST_X --hidden 12,,3
expect_fail 2 "--loader-cpus: 'all': want spare or rank" --train "$TRAIN_SET" $MNIST_X \
	--loader-cpus all
expect_fail 1 "nothere.*(No such file|not found|no shards)" --train "$T/nothere-*.tfrecord" $MNIST_X
expect_fail 1 "--x pixels: no such feature in .*mnist-00000-of-00010.tfrecord \\(record 0 has: .*image_floats" \
	--train "$TRAIN_SET" --x pixels --y image_class
expect_fail 1 "--y image_floats: the label must be one int64" --train "$TRAIN_SET" --x image_class --y image_floats
expect_fail 1 "label [5-9] is outside \\[0, 5\\)" --train "$TRAIN_SET" $MNIST_X --classes 5 --epochs 1
# the loader's options take the loader's limits (RIO_LOADER_MAX_* in
# loader.h, as recordio-bench does): one past each is a usage error naming
# it, the limit itself is accepted
for past in "--batch 16777217" "--global-batch 16777217" "--eval-batch 16777217" \
	"--workers 257" "--shuffle-buffer 1073741825"; do
	# shellcheck disable=SC2086
	expect_fail 2 "^recordio-train: ${past% *}: '${past#* }' is not .*(1 to [0-9]+)" \
		--train "$TRAIN_SET" $MNIST_X $past
done
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" --train "$TRAIN_SET" $MNIST_X --hidden 8 \
	--epochs 1 --workers 256 --shuffle-buffer 1073741824 --quiet
expect_exit 2 mpi 2 --train "$TRAIN_SET" $MNIST_X --global-batch 33
expect_match "--global-batch 33 does not split evenly over 2 ranks" err "global batch split"
one_message --global-batch 33

# a checkpoint that cannot be written is refused before the first step
expect_fail 1 "--checkpoint $T/no/such/dir: cannot create the directory: No such file" \
	--train "$TRAIN_SET" $MNIST_X --checkpoint "$T/no/such/dir"
expect_eq 0 "$(grep -c '^epoch' out)" "no epoch before the unwritable checkpoint is reported"
expect_fail 1 "--checkpoint $(shard 0): Not a directory" \
	--train "$TRAIN_SET" $MNIST_X --checkpoint "$(shard 0)"
# so is a TensorBoard directory that cannot be made, or is a file
expect_fail 1 "^recordio-train: --tensorboard $T/no/such/tb: cannot create the directory: No such file or directory\$" \
	--train "$TRAIN_SET" $MNIST_X --tensorboard "$T/no/such/tb"
expect_fail 1 "^recordio-train: --tensorboard $(shard 0): Not a directory\$" \
	--train "$TRAIN_SET" $MNIST_X --tensorboard "$(shard 0)"
expect_fail 2 "tensorboard-every: '0' is not a number of steps" \
	--train "$TRAIN_SET" $MNIST_X --tensorboard tb --tensorboard-every 0
mkdir -p ckdir/checkpoint
expect_fail 1 "--checkpoint ckdir: ckdir/checkpoint is not a regular file" \
	--train "$TRAIN_SET" $MNIST_X --checkpoint ckdir
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
	mkdir -p rodir && chmod 555 rodir
	expect_fail 1 "--checkpoint rodir: cannot write in it: Permission denied" \
		--train "$TRAIN_SET" $MNIST_X --checkpoint rodir
	chmod 755 rodir
fi
expect_fail 1 "--metrics $T/no/such/m.json: No such file" \
	--train "$TRAIN_SET" $MNIST_X --metrics "$T/no/such/m.json"
# a checkpoint whose directory's fsync fails is not saved (its name may
# not survive a power cut): the run says so and fails (one rank, the 2nd
# fsync failing through the tests/fail_at.so shim, after libasan's runtime
# where there is one; the checkpoint's writes are the run's only fsyncs)
SHIM="$BIN/tests/fail_at.so"
if [ -f "$SHIM" ]; then
	if [ -x "$BIN/libtool" ]; then RUN="$BIN/libtool --mode=execute"; else RUN=""; fi
	ASAN_LIB=$($RUN ldd "$TRAIN" 2>/dev/null | awk '/libasan/ { print $3; exit }')
	# Leaks are not checked in this run: the preloaded ASan runtime also
	# loads into the daemon Open MPI's singleton starts, which outlives the
	# run and, at its own exit, wrote a leak report of Open MPI's (its
	# plugins unloaded: no tests/no_dlclose.so here) into this run's err
	# file after the next test had begun writing it
	# shellcheck disable=SC2086
	expect_exit 1 $RUN env LD_PRELOAD="${ASAN_LIB:+$ASAN_LIB }$SHIM" FAIL_AT=fsync:2 \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$TRAIN" \
		--train "$TRAIN_SET" $MNIST_X --hidden 8 --epochs 1 --quiet --checkpoint dirsync
	expect_match "^recordio-train: dirsync/checkpoint: directory fsync failed: Input/output error\$" \
		err "a failed directory fsync of the checkpoint"
fi
# --metrics in the checkpoint's own files: the next checkpoint's rename
# replaced the metrics (lost, exit 0), and on --resume they were appended to
# the checkpoint; by identity, not spelling (a link to it too)
ln -s mck/checkpoint mlink.json
for m in mck/checkpoint mck/./clock mck/.checkpoint.a1B2c3.tmp mlink.json; do
	expect_fail 2 "^recordio-train: --metrics $m: a file of --checkpoint mck, which writes it" \
		--train "$TRAIN_SET" $MNIST_X --hidden 8 --epochs 1 --checkpoint mck --metrics "$m"
done
# --resume reads the checkpoint and its clock only when each is a regular
# file: a FIFO there was opened, and the run waited for a writer for good
mkdir -p ckfifo clockfifo
mkfifo ckfifo/checkpoint
expect_fail 1 "^recordio-train: --checkpoint ckfifo: ckfifo/checkpoint is not a regular file\$" \
	--train "$TRAIN_SET" $MNIST_X --checkpoint ckfifo --resume
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" --train "$TRAIN_SET" $MNIST_X --hidden 8 \
	--epochs 1 --quiet --checkpoint clockfifo
rm clockfifo/clock && mkfifo clockfifo/clock
expect_fail 1 "^recordio-train: --checkpoint clockfifo: clockfifo/clock is not a regular file\$" \
	--train "$TRAIN_SET" $MNIST_X --hidden 8 --epochs 2 --checkpoint clockfifo --resume

# the label among the inputs: a model that reads its answer (it reached test
# accuracy 1.0) is refused, as an --x that is also an --embed is
expect_fail 2 "^recordio-train: --y image_class: the label is also in --x; the model would read its answer" \
	--train "$TRAIN_SET" --x image_floats,image_class --y image_class
GEN="$BIN/bench/ctr_gen"
if [ -x "$GEN" ]; then
	expect_exit 0 "$GEN" -o ctr -n 400 -s 2 -f 2 -V 100 -k 2 -d 4 --seed 3
	CTR="--train ctr --x dense --y label --classes 2 --hidden 8 --epochs 1"
	expect_fail 2 "^recordio-train: --y label: the label is also in --embed; the model would read its answer" \
		$CTR --embed label:2:4
	# a table that cannot fit is refused before it is allocated, with the
	# numbers (2^40 x 4096 floats: 16 PiB, and as much again for the
	# gradient and for SGD's momentum: no machine holds them); the hint says
	# that no split helps (the tables stay whole on the pipeline's first stage)
	expect_fail 1 "^recordio-train: --embed cat0:1099511627776:4096 \(the whole table, its gradient and optimizer state\) needs 49152.0 TiB on rank 0; this host's [12] ranks? would hold .* in all, more than the .* they may use \((MemTotal in /proc/meminfo|/.*memory\.(max|limit_in_bytes))\); no --pipeline up to 2 \(the layers\) or --tensor alone fits: 49152.0 TiB a rank at --pipeline 2\$" \
		$CTR --embed cat0:1099511627776:4096
	expect_exit 1 mpi 3 $CTR --embed cat0:1099511627776:4096 --strategy ps
	expect_match "^recordio-train: --embed cat0:1099511627776:4096 \(a server's rows, with their optimizer state\) needs [0-9.]+ TiB on rank 0; this host's 3 ranks would hold" err \
		"a server's rows that cannot fit"
	one_message a table too large under ps
	# hybrid's workers step together: one with fewer records than a batch
	# (files sharding: shards 0 and 2 for worker 0, 267 records; shard 1,
	# 133, for worker 1) left no step, and every epoch trained nothing
	expect_exit 0 "$GEN" -o ctr3 -n 400 -s 3 -f 2 -V 100 -k 2 -d 4 --seed 3
	expect_exit 1 mpi 3 --train ctr3 --x dense --y label --classes 2 --hidden 8 --epochs 1 \
		--embed cat0:100:4 --strategy hybrid --sharding files --batch 150
	expect_match "^recordio-train: --train ctr3: a worker has fewer records \(133\) than one batch of 150, and under hybrid the workers step together\$" \
		err "hybrid: a worker without a batch"
	one_message hybrid worker without a batch
else
	echo "SKIP: $GEN not built: the --embed cases"
fi

# options that would have no effect are refused, each in one line
expect_fail 2 "^recordio-train: --eval-every needs --test" --train "$TRAIN_SET" $MNIST_X --eval-every 5
expect_fail 2 "^recordio-train: --eval-batch needs --test" --train "$TRAIN_SET" $MNIST_X --eval-batch 64
expect_fail 2 "^recordio-train: --tensorboard-every needs --tensorboard" \
	--train "$TRAIN_SET" $MNIST_X --tensorboard-every 5
expect_fail 2 "^recordio-train: --lars-trust needs --optimizer lars" \
	--train "$TRAIN_SET" $MNIST_X --lars-trust 0.01
expect_fail 2 "^recordio-train: --momentum: not with --optimizer adam" \
	--train "$TRAIN_SET" $MNIST_X --optimizer adam --momentum 0.5
expect_fail 2 "^recordio-train: --shuffle-buffer needs --shuffle buffer" \
	--train "$TRAIN_SET" $MNIST_X --shuffle global --shuffle-buffer 100
# a straggler that is no rank of the run, or a server (which takes no step)
expect_fail 2 "^recordio-train: --straggler 5:2: there is no rank 5 \(this run has ranks 0 to [01]\)\$" \
	--train "$TRAIN_SET" $MNIST_X --straggler 5:2
expect_exit 2 mpi 3 --train "$TRAIN_SET" $MNIST_X --straggler 5:2
expect_match "^recordio-train: --straggler 5:2: there is no rank 5 \(this run has ranks 0 to 2\)\$" err "no rank 5 of 3"
one_message --straggler 5:2 at 3 ranks
expect_exit 2 mpi 3 --train "$TRAIN_SET" $MNIST_X --strategy ps --straggler 2:3,0:2
expect_match "^recordio-train: --straggler 0:2: rank 0 is a parameter server; the workers, which step, are ranks 1 to 2\$" err \
	"a server named as a straggler"
one_message a server as a straggler
expect_fail 2 "^recordio-train: --straggler: '1:2,1:3': want RANK:FACTOR.*each rank once" \
	--train "$TRAIN_SET" $MNIST_X --straggler 1:2,1:3
# --batch or --lr-scaling with --global-batch (which sets the one and makes
# the other do nothing), an input named twice, no layers said as '', and a
# number that strtoull would have wrapped (' -1' was the seed 2^64 - 1)
expect_fail 2 "^recordio-train: --batch: not with --global-batch" \
	--train "$TRAIN_SET" $MNIST_X --batch 16 --global-batch 32
expect_fail 2 "^recordio-train: --lr-scaling: not with --global-batch" \
	--train "$TRAIN_SET" $MNIST_X --lr-scaling none --global-batch 32
expect_fail 2 "^recordio-train: --x image_floats: the feature is named twice\$" \
	--train "$TRAIN_SET" --x image_floats,image_floats --y image_class
expect_fail 2 "^recordio-train: --x image_floats: the feature is named twice\$" \
	--train "$TRAIN_SET" $MNIST_X --x image_floats
expect_fail 2 "^recordio-train: --hidden: '' is not a list of layer sizes" \
	--train "$TRAIN_SET" $MNIST_X --hidden ''
for n in ' -1' ' 5' '-0'; do
	expect_fail 2 "^recordio-train: --seed: '$n' is not a seed" --train "$TRAIN_SET" $MNIST_X \
		--seed "$n"
done
# a size is lib/size.h's (--help, Sizes): digits, a fraction with a unit, a
# unit spelled exactly; not nan, inf, a sign, hex, an exponent, blanks, a
# lower-case unit or junk (nan had meant "cache everything"), nor a size
# past the option's range
for size in nan inf -1 0x100000 ' 5M' 12abc NaNK 1e400 1e8 64k; do
	expect_fail 2 "^recordio-train: --cache: '$size': want a size" --train "$TRAIN_SET" $MNIST_X \
		--cache "$size"
done
expect_fail 2 "^recordio-train: --bucket-size: 'nan' is not a size" --train "$TRAIN_SET" $MNIST_X \
	--bucket-size nan
expect_fail 2 "^recordio-train: --bucket-size: '2T' is not a size from 4 B to 1.0 TiB" \
	--train "$TRAIN_SET" $MNIST_X --bucket-size 2T
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" --train "$TRAIN_SET" $MNIST_X --hidden 8 --epochs 1 \
	--cache 1.5M --bucket-size 100KB --quiet

# an --x feature whose length differs from the first record's: the shard and
# record named, met by one rank in the middle of an epoch
for c in a b; do
	mkdir -p img/$c
	i=0
	while [ $i -lt 10 ]; do
		n=784
		[ $c = b ] && [ $i = 7 ] && n=780
		head -c $n /dev/zero >img/$c/$i
		i=$((i + 1))
	done
done
"$PACK" -q --from dir --output vl --shards 2 img || fail "pack img"
expect_fail 1 "vl-00001-of-00002.tfrecord: offset [0-9]+ \\(record 7\\): feature 'data' has 780 bytes, the first record of --train had 784\$" \
	--train vl --x data --y label --classes 2 --batch 2 --epochs 1 --shuffle none

# one rank meets damage in the middle of an epoch (its 7th batch); the other
# must not hang
for i in 0 1; do
	cp "$(shard $i)" bad-0000$i-of-00002.tfrecord
	cp "$(shard $i).idx" bad-0000$i-of-00002.tfrecord.idx
done
damage bad-00001-of-00002.tfrecord 60
# a rank with fewer records than a batch: the fewest named (each rank said
# its own, and rank 0's was printed: 100 records, where rank 1 has 3)
head -c $((3203 * 3)) "$(shard 1)" >few-00001-of-00002.tfrecord
cp "$(shard 0)" few-00000-of-00002.tfrecord
expect_exit 1 mpi 2 --train few $MNIST_X --batch 8 --sharding files
expect_match "^recordio-train: --train few: a rank has fewer records \(3\) than one batch of 8\$" err \
	"the rank that is short, its count"
one_message few records

expect_exit 1 mpi 2 --train 'bad-*.tfrecord' $MNIST_X --batch 10 --epochs 2 --shuffle none \
	--sharding files
expect_match "bad-00001-of-00002.tfrecord: offset [0-9]+ \\(record 60\\).*CRC" err \
	"the damaged shard and offset named"
one_message damaged shard

finish
