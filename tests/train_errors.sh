#!/bin/sh
# train_errors.sh — bad input never hangs recordio-train: a bad option, a
# missing shard, a feature that is not in the data, a label outside
# --classes, a global batch that does not split, a checkpoint directory,
# metrics file or TensorBoard directory that cannot be written, an --x feature whose length varies,
# a damaged shard found mid-epoch by one rank: each gives one clear message
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
expect_fail 2 "unknown option '--bogus'" --train "$TRAIN_SET" $MNIST_X --bogus
expect_fail 2 "--train SHARDS is required" $MNIST_X
expect_fail 2 "--lr: 'fast' is not a positive rate" --train "$TRAIN_SET" $MNIST_X --lr fast
expect_fail 2 "--hidden: '12,,3'" --train "$TRAIN_SET" $MNIST_X --hidden 12,,3
expect_fail 2 "--loader-cpus: 'all': want spare or rank" --train "$TRAIN_SET" $MNIST_X \
	--loader-cpus all
expect_fail 1 "nothere.*(No such file|not found|no shards)" --train "$T/nothere-*.tfrecord" $MNIST_X
expect_fail 1 "--x pixels: no such feature in .*mnist-00000-of-00010.tfrecord \\(record 0 has: .*image_floats" \
	--train "$TRAIN_SET" --x pixels --y image_class
expect_fail 1 "--y image_floats: the label must be one int64" --train "$TRAIN_SET" --x image_floats --y image_floats
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
python3 - <<'PY'
with open("bad-00001-of-00002.tfrecord", "r+b") as f:
    f.seek(3203 * 60 + 500)   # inside record 60's payload
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0x40]))
PY
expect_exit 1 mpi 2 --train 'bad-*.tfrecord' $MNIST_X --batch 10 --epochs 2 --shuffle none \
	--sharding files
expect_match "bad-00001-of-00002.tfrecord: offset [0-9]+ \\(record 60\\).*CRC" err \
	"the damaged shard and offset named"
one_message damaged shard

finish
