#!/bin/sh
# cli_setcommit.sh — a shard set is replaced as a whole: recordio-pack
# --force over an existing set, made to fail (EIO/ENOSPC) or killed
# (SIGKILL) at every rename, fsync, write, unlink and open it makes
# (tests/fail_at.so, an LD_PRELOAD shim), including between two renames of
# the final commit, leaves the complete old set, the complete new set, or a
# set that recordio-verify, recordio-cat and the loader (recordio-bench)
# refuse with a line naming the incomplete set; `recordio-pack --recover`
# (what every pack run does first) then finishes it as the new set and
# removes a killed run's staging files. Also: a plain pack run recovers,
# PID reuse and live writers, damaged and crafted journals.
. "$(dirname "$0")/cli_lib.sh"

skip() {
	echo "cli_setcommit.sh: SKIP: $*"
	rm -rf "$T"
	exit 77
}
for p in "$PACK" "$VERIFY" "$CAT" "$BENCH"; do
	[ -x "$p" ] || skip "$p not built"
done
[ -f "$SHIM" ] || skip "$SHIM not built"
cd "$T" || exit 1

seq 1 12 | sed 's/^/old-/' >old.txt
seq 1 9 | sed 's/^/new-/' >new.txt

# the shim must work here, or there is nothing to test
mkdir probe
shimmed FAIL_COUNT="$T/probe.count" -- "$PACK" --from lines --output probe/t old.txt \
	>/dev/null 2>&1
grep -q '^rename [1-9]' probe.count 2>/dev/null || skip "the shim cannot be preloaded ($SHIM_PRELOAD)"

# state DIR/t: "old", "new", "refused" (verify, cat and bench each refuse
# with the message naming the incomplete set) or a description of what is
# wrong (which fails the test).
state() {
	"$VERIFY" "$1" >"$T/v.out" 2>"$T/v.err"
	vrc=$?
	"$CAT" --format raw "$1" >"$T/c.out" 2>"$T/c.err"
	crc=$?
	if [ $vrc -eq 0 ] && [ $crc -eq 0 ]; then
		if cmp -s "$T/c.out" old.txt; then echo old
		elif cmp -s "$T/c.out" new.txt; then echo new
		else echo "a set that verifies but is neither old nor new: $(tr '\n' ' ' <"$T/c.out")"
		fi
		return
	fi
	want="^recordio-[a-z]+: $1: incomplete shard set .*run 'recordio-pack --recover --output $1' to finish the commit\$"
	"$BENCH" --epochs 1 "$1" >"$T/b.out" 2>"$T/b.err"
	brc=$?
	if [ $vrc -ne 0 ] && [ $crc -ne 0 ] && [ $brc -ne 0 ] &&
		grep -Eq "$want" "$T/v.err" && grep -Eq "$want" "$T/c.err" &&
		grep -Eq "$want" "$T/b.err" && [ "$(wc -l <"$T/c.err")" -eq 1 ]; then
		echo refused
	else
		echo "verify $vrc, cat $crc, bench $brc: $(cat "$T/v.err" "$T/c.err" "$T/b.err" | tr '\n' ' ')"
	fi
}

hidden() { ls -A "$1" | grep '^\.' | tr '\n' ' '; }

# one_case NAME OLDARGS NEWARGS FAIL_AT: packs the old set with OLDARGS,
# runs the --force (with NEWARGS) over it with FAIL_AT, checks the state it
# leaves, recovers and checks again.
cases=0
one_case() {
	name=$1 oldargs=$2 newargs=$3 at=$4
	rm -rf s && mkdir s
	# shellcheck disable=SC2086
	"$PACK" --from lines --output s/t $oldargs -q old.txt || { fail "$name: old set not packed"; return; }
	# shellcheck disable=SC2086
	shimmed FAIL_AT="$at" -- "$PACK" --from lines --output s/t --shards 3 --force -q $newargs \
		new.txt >"$T/p.out" 2>"$T/p.err"
	prc=$?
	st=$(state s/t)
	cases=$((cases + 1))
	case "$prc:$st" in
	0:new) pass ;;
	0:*) fail "$name FAIL_AT=$at: pack exit 0 but the set is $st" ;;
	*:old | *:new | *:refused) pass ;;
	*) fail "$name FAIL_AT=$at (pack exit $prc: $(head -1 "$T/p.err")): $st" ;;
	esac
	# a failed (not killed) run leaves no staging file unless its journal
	# holds them
	if [ "${at%:kill}" = "$at" ] && [ ! -e s/t.commit ]; then
		expect_eq "" "$(hidden s)" "$name FAIL_AT=$at: staging files without a journal"
	fi
	had_staging=$(hidden s)
	expect_exit 0 "$PACK" --recover --output s/t
	cp "$T/err" "$T/r.err"
	if [ -n "$had_staging" ] && [ "$st" != refused ]; then
		expect_match "^recordio-pack: s: removed [0-9]+ staging files? of s/t left by process [0-9]+, which is no longer running\$" \
			"$T/r.err" "$name FAIL_AT=$at: the staging files of the dead run are reported"
	fi
	if [ "$st" = refused ]; then
		expect_match "^recordio-pack: s/t.commit: finished the interrupted commit of s/t by process [0-9]+ \\([0-9]+ of [0-9]+ files renamed now, [0-9]+ old files removed\\)\$" \
			"$T/r.err" "$name FAIL_AT=$at: the recovery is reported"
		expect_eq new "$(state s/t)" "$name FAIL_AT=$at: an interrupted commit finishes as the new set"
	else
		expect_eq "$st" "$(state s/t)" "$name FAIL_AT=$at: recovery changes nothing"
	fi
	expect_eq "" "$(hidden s)" "$name FAIL_AT=$at: no staging file after recovery"
	expect_eq "" "$(ls s | grep -v -E '^t-0000[0-9]-of-0000[0-9]\.tfrecord(\.idx)?$')" \
		"$name FAIL_AT=$at: only the set's own files"
}

# every step of two replacements: 5 old shards by 3 new ones (old names
# removed in the commit), and 3 by 3 with --fsync (every name replaced:
# only the journal tells a mix)
for scenario in "fewer:--shards 5:" "same:--shards 3:--fsync"; do
	name=${scenario%%:*} rest=${scenario#*:}
	oldargs=${rest%%:*} newargs=${rest#*:}
	rm -rf s && mkdir s
	# shellcheck disable=SC2086
	"$PACK" --from lines --output s/t $oldargs -q old.txt
	rm -f "$T/count"
	# shellcheck disable=SC2086
	shimmed FAIL_COUNT="$T/count" -- "$PACK" --from lines --output s/t --shards 3 --force -q \
		$newargs new.txt
	expect_eq new "$(state s/t)" "$name: the shimmed run without a failure"
	while read -r fn n; do
		i=1
		while [ "$i" -le "$n" ]; do
			one_case "$name" "$oldargs" "$newargs" "$fn:$i"
			one_case "$name" "$oldargs" "$newargs" "$fn:$i:kill"
			i=$((i + 1))
		done
	done <"$T/count"
done
echo "cli_setcommit.sh: $cases injected failures"

# the commit's own renames were among them: the journal's, then 6 finals
expect_eq 1 "$([ "$(awk '$1 == "rename" { print $2 }' "$T/count")" -ge 13 ] && echo 1)" \
	"the writers' and the commit's renames are counted"

# ---- a plain pack run recovers first -------------------------------------------

rm -rf s && mkdir s
"$PACK" --from lines --output s/t --shards 2 -q old.txt
# killed after the journal and the first final rename (writer renames 2 per
# shard: 6, the journal 1, then the finals)
shimmed FAIL_AT=rename:9:kill -- "$PACK" --from lines --output s/t --shards 3 --force -q \
	new.txt >/dev/null 2>&1
expect_eq refused "$(state s/t)" "killed between two final renames: refused"
expect_exit 0 "$PACK" --from lines --output s/t --shards 3 --force old.txt
expect_match '^recordio-pack: s/t.commit: finished the interrupted commit of s/t by process [0-9]+' \
	"$T/err" "pack reports the recovery"
expect_eq old "$(state s/t)" "and then packs"
# killed before its journal: the old set stands, the next run removes the
# staging files
shimmed FAIL_AT=rename:3:kill -- "$PACK" --from lines --output s/t --shards 3 --force -q \
	new.txt >/dev/null 2>&1
expect_eq old "$(state s/t)" "killed while staging: the old set"
expect_exit 0 "$PACK" --from lines --output s/t --shards 3 --force new.txt
expect_match '^recordio-pack: s: removed [0-9]+ staging files of s/t left by process [0-9]+, which is no longer running$' \
	"$T/err" "pack removes a killed run's staging files and says so"
expect_eq "" "$(hidden s)" "no staging file left"
expect_eq new "$(state s/t)" "and then packs"
# without --force the recovered set is there to refuse
shimmed FAIL_AT=rename:9:kill -- "$PACK" --from lines --output s/t --shards 3 --force -q \
	new.txt >/dev/null 2>&1
expect_exit 1 "$PACK" --from lines --output s/t old.txt
expect_match 'finished the interrupted commit' "$T/err" "recovered without --force"
expect_match 'already exists \(use --force' "$T/err" "then refused without --force"
expect_eq new "$(state s/t)" "the recovered set is the new one"
expect_exit 0 "$PACK" --recover --output s/t
expect_match '^s/t: nothing to recover$' "$T/out" "--recover with nothing to do says so"
expect_exit 2 "$PACK" --recover --output s/t --from lines old.txt
expect_match "recover takes --output PREFIX only" "$T/err" "--recover with a source is a usage error"

# a first set killed after its journal: nothing but the journal names it
rm -rf s && mkdir s
shimmed FAIL_AT=rename:4:kill -- "$PACK" --from lines --output s/t -q new.txt >/dev/null 2>&1
expect_exit 0 test -f s/t.commit
expect_exit 1 "$VERIFY" s/t
expect_match "^recordio-verify: s/t: incomplete shard set" "$T/err" "a first set's journal alone is refused"
expect_exit 0 "$PACK" --recover --output s/t
expect_eq new "$(state s/t)" "and recovered"

# ---- staging files: dead, reused PIDs, live writers ------------------------------

rm -rf s && mkdir s
"$PACK" --from lines --output s/t -q old.txt
sleep 1000 &
live=$!
touch s/.t.pack-$live-00000.tfrecord "s/..t.pack-$live-00000.tfrecord.AbC123.tmp"
# the shell's own PID is alive, but it started long after this file was written
touch -d @1000000000 s/.t.pack-$$-00000.tfrecord
# another prefix's staging files are not ours
touch -d @1000000000 s/.tt.pack-1-00000.tfrecord
expect_exit 0 "$PACK" --recover --output s/t
expect_match "^recordio-pack: s: left alone 2 staging files of s/t: process $live is writing them\$" \
	"$T/err" "a live writer's staging files are left alone"
expect_match "^recordio-pack: s: removed 1 staging file of s/t left by process $$, which is no longer running\$" \
	"$T/err" "a reused PID's file is stale"
expect_exit 1 test -e s/.t.pack-$$-00000.tfrecord
for f in .t.pack-$live-00000.tfrecord ..t.pack-$live-00000.tfrecord.AbC123.tmp .tt.pack-1-00000.tfrecord; do
	expect_exit 0 test -e "s/$f"
done
# a journal whose writer still runs: a commit in progress
printf 'recordio-set-commit 1\nwriter %s\nend\n' "$live" >s/t.commit
expect_exit 1 "$PACK" --recover --output s/t
expect_match "^recordio-pack: s/t.commit: process $live is committing the set s/t right now" \
	"$T/err" "a live committer is not interfered with"
kill "$live"
wait "$live" 2>/dev/null
expect_exit 0 "$PACK" --recover --output s/t
expect_match "finished the interrupted commit of s/t by process $live \\(0 of 0 files" \
	"$T/err" "its journal is finished once it is gone"
expect_eq old "$(state s/t)" "an empty journal changes nothing"

# ---- damaged and crafted journals ---------------------------------------------

printf 'recordio-set-commit 1\nwriter 1\nrename .t.pack-1-00000.tfrecord\tt-00000-of-00001.tfrecord\n' >s/t.commit
expect_exit 1 "$PACK" --recover --output s/t
expect_eq "recordio-pack: s/t.commit: line 3: no end line (the journal is incomplete); check the set and remove this file by hand" \
	"$(cat "$T/err")" "a journal without its end"
expect_eq refused "$(state s/t)" "a set with a damaged journal stays refused"
printf 'recordio-set-commit 1\nwriter 1\nrename ../x\tt-00000-of-00001.tfrecord\nend\n' >s/t.commit
expect_exit 1 "$PACK" --recover --output s/t
expect_match "line 3: a rename of a file no commit of this prefix writes" "$T/err" \
	"a journal cannot rename outside the set"
printf 'recordio-set-commit 1\nwriter 1\nremove old.txt\nend\n' >s/t.commit
expect_exit 1 "$PACK" --from lines --output s/t --force old.txt
expect_match "line 3: a removal of a file that is not a shard of this prefix" "$T/err" \
	"a journal cannot remove what is not a shard"
printf 'hello\n' >s/t.commit
expect_exit 1 "$PACK" --recover --output s/t
expect_match "line 1: not a commit journal" "$T/err" "not a journal"
rm s/t.commit
expect_eq old "$(state s/t)" "the set is untouched by refused journals"

finish
