#!/bin/sh
# cluster_relayout.sh — a run stopped on one host layout and resumed on
# another with the same world size ends as an uninterrupted one: 4 ranks
# on 4 namespace hosts (1 slot each) stopped mid-epoch (--max-steps), then
# --resume on 2 hosts with 2 slots each, give the same checkpoint, byte for
# byte, and the same metrics as 4 ranks on one host run straight through
# (the stop's line for its partial epoch aside).
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
COMMON="$SMALL_RUN --shuffle buffer --shuffle-buffer 200 --seed 11 --optimizer adam"
sh "$CLUSTER_SH" hostfile "$C" two-by-two 2 2

expect_exit 0 mpi 4 $COMMON --checkpoint whole --metrics whole.json
# 800 records, 4 ranks of 16: 12 steps per epoch; stop in the second epoch
expect_exit 0 cmpi "$C/hostfile" 4 $COMMON --checkpoint moved --max-steps 17 \
	--checkpoint-every 5 --metrics moved.json
expect_lines 2 moved.json "one epoch finished on 4 hosts before the stop, and the partial one"
expect_exit 0 cmpi two-by-two 4 $COMMON --checkpoint moved --resume --metrics moved.json
expect_exit 0 cmp whole/checkpoint moved/checkpoint
# the whole epochs' lines (the stop's partial one aside)
grep -v '"partial": true' moved.json >moved-whole.json
same_metrics whole.json moved-whole.json

finish
