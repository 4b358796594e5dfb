#!/bin/sh
# train_embed.sh — recordio-train --embed: on a synthetic click-through set
# (bench/ctr_gen: 4 categorical features of 2 Zipf ids each over 5000 ids,
# 8 dense floats, a label from a planted model) the allreduce, ps and
# hybrid strategies all learn what the dense features alone cannot (test
# accuracy well above both the majority class and a model without the
# tables) and reach the same accuracy within 0.03; ps moves only the
# batch's rows, a small part of what allreduce's dense table gradients
# move; the TensorFlow-written taxi file's int64 columns train as tables
# under every strategy; an id outside the vocabulary is one line naming
# the shard, the record, the feature and the id; what does not fit is
# refused in one line.
. "$(dirname "$0")/train_lib.sh"
GEN="$BIN/bench/ctr_gen"
[ -x "$GEN" ] || { echo "SKIP: $GEN not built"; rm -rf "$T"; exit 77; }
cd "$T" || exit 1

expect_exit 0 "$GEN" -o ctr -n 24000 -s 6 -f 4 -V 5000 -k 2 -d 8 --seed 3
CTR_TRAIN=$(printf 'ctr-%05d-of-00006.tfrecord,' 0 1 2 3 4 | sed 's/,$//')
CTR_TEST=ctr-00005-of-00006.tfrecord
EMBED="--embed cat0:5000:8,cat1:5000:8,cat2:5000:8,cat3:5000:8"
RUN="--train $CTR_TRAIN --test $CTR_TEST --x dense --y label --classes 2 --hidden 32 \
--global-batch 200 --epochs 4 --threads 1 --quiet --lr 0.1 --sharding records"

expect_exit 0 mpi 2 $RUN --metrics dense.json
expect_exit 0 mpi 2 $RUN $EMBED --metrics allreduce.json
expect_exit 0 mpi 3 $RUN $EMBED --strategy ps --metrics ps.json
expect_exit 0 mpi 3 $RUN $EMBED --strategy hybrid --metrics hybrid.json
python3 - dense.json allreduce.json ps.json hybrid.json <<'EOF' && pass || fail "what the tables learn"
import json, sys
last = lambda f: [json.loads(l) for l in open(f)][-1]
dense, *emb = (last(f) for f in sys.argv[1:])
accs = [e["test_accuracy"] for e in emb]
print("test accuracy: dense only %.4f, allreduce %.4f, ps %.4f, hybrid %.4f" % (dense["test_accuracy"], *accs))
assert min(accs) > 0.72, accs                       # majority class: ~0.5
assert min(accs) > dense["test_accuracy"] + 0.05, (dense["test_accuracy"], accs)
assert max(accs) - min(accs) < 0.03, accs
# allreduce: the tables' whole gradient, ring-counted; ps: the batch's rows
ar, ps, hy = (e["bytes_per_step"] for e in emb)
print("bytes a step: allreduce %.0f, ps %.0f, hybrid %.0f" % (ar, ps, hy))
assert ps < ar / 5, (ps, ar)
assert 0 < hy < ar, (hy, ar)
EOF
cat out >&2

# the TensorFlow-written Chicago taxi sample: its int64 columns as tables
TAXI="$TESTDATA/tfx-external-00001-of-00002.tfrecord.gz"
TAXI_RUN="--train $TAXI --test $TAXI --x trip_miles,fare --y trip_start_day --classes 8 \
--embed trip_start_hour:24:4,pickup_community_area:78:4,trip_start_month:13:2 --hidden 16 \
--global-batch 64 --epochs 3 --threads 1 --quiet"
for st in "2" "3 --strategy ps" "3 --strategy hybrid"; do
	# shellcheck disable=SC2086
	expect_exit 0 mpi $st $TAXI_RUN --metrics taxi.json
	python3 - taxi.json <<'EOF' && pass || fail "taxi with tables ($st)"
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert e[-1]["train_loss"] < e[0]["train_loss"], e
assert e[-1]["test_records"] == 5012, e[-1]
EOF
done

# checkpoints keep the tables (whole under allreduce, each server's rows
# under ps and hybrid) and their Adam state: a run cut at --max-steps and
# resumed writes the same bytes as an unbroken one
CK="$RUN --embed cat0:5000:4,cat1:5000:4 --optimizer adam --lr 0.01 --epochs 2"
for st in "2" "3 --strategy ps --servers 2" "4 --strategy hybrid --servers 2"; do
	tag=$(echo "$st" | tr -dc 'a-z0-9')
	# shellcheck disable=SC2086
	expect_exit 0 mpi $st $CK --checkpoint whole-$tag
	# shellcheck disable=SC2086
	expect_exit 0 mpi $st $CK --checkpoint cut-$tag --max-steps 70
	# shellcheck disable=SC2086
	expect_exit 0 mpi $st $CK --checkpoint cut-$tag --resume
	expect_exit 0 cmp whole-$tag/checkpoint cut-$tag/checkpoint
done
expect_exit 1 mpi 2 $RUN --embed cat0:5000:4,cat1:5000:8 --optimizer adam --lr 0.01 --epochs 2 \
	--checkpoint whole-2 --resume
expect_match "^recordio-train: .*whole-2/checkpoint was written with another --embed tables; resume with the same$" err "other tables"

# an id outside the vocabulary
expect_exit 1 mpi 2 $RUN --embed cat0:5000:8,cat1:100:8
expect_match "^recordio-train: ctr-0000[0-4]-of-00006.tfrecord: record [0-9]+: --embed cat1: id [0-9]+ is outside \[0, 100\)$" err "an id outside the table"
expect_exit 1 mpi 3 $RUN --embed cat0:100:8 --strategy ps
expect_match "^recordio-train: .*: --embed cat0: id [0-9]+ is outside \[0, 100\)$" err "the same under ps"

# what does not fit
expect_exit 1 mpi 1 $TAXI_RUN --embed tips:10:4
expect_match "^recordio-train: --embed tips: ids must be int64 \(in .* it is float\[1\]\)$" err "floats as ids"
expect_exit 1 mpi 1 $RUN --embed nosuch:10:4
expect_match "^recordio-train: --embed nosuch: no such feature in" err "a missing feature"
expect_exit 2 mpi 1 $RUN $EMBED --eval-every 5
expect_match "^recordio-train: --embed: not with --eval-every yet" err "copies of tables"
expect_exit 2 mpi 2 $RUN --strategy hybrid
expect_match "^recordio-train: --strategy hybrid needs --embed" err "hybrid without tables"
expect_exit 2 mpi 1 $RUN $EMBED --strategy hybrid
expect_match "^recordio-train: --strategy hybrid with 1 server needs at least 2 ranks" err \
	"hybrid on one rank: says hybrid"
expect_exit 2 mpi 1 $RUN --embed cat0:5000
expect_match "^recordio-train: --embed: 'cat0:5000': want FEATURE:VOCAB:DIM" err "no DIM"
expect_exit 2 mpi 1 $RUN --embed dense:10:4 --x dense
expect_match "^recordio-train: --embed dense: the feature is also in --x" err "one input, two roles"

finish
