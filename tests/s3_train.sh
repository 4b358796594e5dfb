#!/bin/sh
# s3_train.sh — recordio-train reads its shards from S3 (a real S3 server
# on 127.0.0.1: tests/s3_lib.sh) and trains to the same metrics as from
# the same shards on the local disk: 2 ranks under mpirun, buffer and
# global shuffling, train and test sets in S3, with and without the shard
# cache (--shard-cache DIR, shared by the ranks).
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/s3_lib.sh"
s3_start
cd "$T" || exit 1
TRAIN_TIMEOUT=240
expect_exit 0 "$PACK" --from tfrecord --output "$B/mnist" --shards 10 "$D"

# metrics FILE: the metrics' lines without the times, the speeds and the
# process's measured peak memory (peak_bytes: VmHWM, which the S3 client's
# buffers and threads raise)
metrics() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    print(sorted((k, v) for k, v in m.items()
                 if not any(w in k for w in ("time", "second", "wait", "per_s", "rate", "_s", "flops", "peak"))))
PY
}

for mode in buffer global; do
	common="$MNIST_X --hidden 16 --batch 25 --epochs 2 --shuffle $mode --seed 5 --quiet"
	rm -f local.json s3.json cached.json # --metrics appends
	expect_exit 0 mpi 2 --train "$D/mnist" --test "$D/mnist" $common --metrics local.json
	expect_exit 0 mpi 2 --train "$B/mnist" --test "$B/mnist" $common --metrics s3.json
	metrics local.json >local.m
	metrics s3.json >s3.m
	if [ -s local.m ] && cmp -s local.m s3.m; then pass; else
		fail "$mode: the metrics from S3 differ from the local ones"; diff local.m s3.m | head -5 >&2; fi
	expect_exit 0 mpi 2 --train "$B/mnist" --test "$B/mnist" $common --metrics cached.json \
		--shard-cache "$T/cache"
	metrics cached.json >cached.m
	if cmp -s local.m cached.m; then pass; else
		fail "$mode: the metrics through the shard cache differ from the local ones"; fi
done
expect_eq 10 "$(ls "$T/cache" | grep -c '^rio-[0-9a-f]*\.shard$')" "the 10 shards cached once"
finish
