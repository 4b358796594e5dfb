#!/bin/sh
# train_split_ckpt.sh — checkpoints of a model that does not fit one rank
# whole (trainer/checkpoint_split.h): 784-1024-1024-1024-10 with Adam over
# --memory-limit 42M (refused as data parallelism: train_tensor.sh) trains
# with T = 2, writes a checkpoint mid-epoch, resumes as P = 2 and again as
# T = 2, and ends with the parameters of an unbroken run; no rank's memory
# high-water grows by a whole model's worth for it (each writes and reads
# its own part); a write that fails on rank 1 alone fails the checkpoint
# on every rank and leaves the previous checkpoint as it was, and no
# temporary file.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

BIG="--synthetic --hidden 1024,1024,1024 --batch 64 --optimizer adam --quiet --memory-limit 42M"
WHOLE=$((2913290 * 4 * 3)) # the model's parameters and Adam's two moments, bytes

expect_exit 0 mpi 2 $BIG --tensor 2 --max-steps 3 --metrics plain-t2.json
expect_exit 0 mpi 2 $BIG --pipeline 2 --max-steps 3 --metrics plain-p2.json
# written at step 2 (mid-epoch) and 3
expect_exit 0 mpi 2 $BIG --tensor 2 --max-steps 3 --checkpoint ck --checkpoint-every 2 \
	--metrics ck-t2.json
expect_exit 0 mpi 2 $BIG --pipeline 2 --max-steps 4 --checkpoint ck --resume --metrics res-p2.json
expect_exit 0 mpi 2 $BIG --tensor 2 --max-steps 5 --checkpoint ck --resume --metrics res-t2.json
expect_eq 5 "$(json res-t2.json steps)" "the resumed epoch's steps"
expect_exit 0 mpi 2 $BIG --tensor 2 --max-steps 5 --checkpoint unbroken
same_params unbroken ck "T2, resumed as P2 and as T2, against unbroken"

# the peaks (VmHWM: under AddressSanitizer its shadow too) against the same
# layout's without checkpoints: never a whole model more (rank 0 held the
# whole model, and on a resume the file too, before each wrote and read its
# own part); the two ranks of a tensor group hold alike, and so peak alike
python3 - "$WHOLE" <<'PY' && pass || fail "a checkpoint's or a resume's memory within a rank's part"
import json, sys
whole = int(sys.argv[1])
peak = lambda name: json.loads(open(name).read().splitlines()[-1])["peak_bytes"]
for run, plain in (("ck-t2", "plain-t2"), ("res-p2", "plain-p2"), ("res-t2", "plain-t2")):
    for rank, (got, base) in enumerate(zip(peak(run + ".json"), peak(plain + ".json"))):
        assert got - base < whole / 2, (run, rank, got - base, whole)
for run in ("ck-t2", "res-t2"):
    p = peak(run + ".json")
    assert max(p) - min(p) < whole / 4, (run, p, whole)
PY

# rank 1 cannot write past 20 MiB (RLIMIT_FSIZE, set in bytes, room for
# Open MPI's shared memory; SIGXFSZ ignored: its pwrite of Adam's second
# moment, past 23 MB in the file, fails with EFBIG): the checkpoint fails on
# both ranks, in one line, and the one before stays whole
cp ck/checkpoint was
LIMITED='import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20 << 20, 20 << 20))
os.execv(sys.argv[1], sys.argv[1:])'
expect_exit 1 timeout -k 10 "$TRAIN_TIMEOUT" mpirun -np 1 "$TRAIN" $BIG --tensor 2 --max-steps 6 \
	--checkpoint ck --resume : -np 1 python3 -c "$LIMITED" \
	"$TRAIN" $BIG --tensor 2 --max-steps 6 --checkpoint ck --resume
expect_eq 1 "$(grep -c '^recordio-train: ' err)" "one line"
expect_match '^recordio-train: ck/\.checkpoint\.[A-Za-z0-9]+\.tmp: write failed: File too large$' err \
	"rank 1's failed write"
expect_exit 0 cmp was ck/checkpoint
expect_eq "" "$(ls -A ck | grep -v '^checkpoint$' | grep -v '^clock$')" "no temporary file left"
finish
