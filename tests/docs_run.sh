#!/bin/sh
# docs_run.sh — runs the commands that README.md and doc/*.md show, so that
# what the documentation tells a user to type works with the tools built.
#
# The convention, for whoever writes a page:
#   - every fenced block tagged sh, bash or shell runs (with `sh -e`), and
#     every block tagged python (with python3); blocks of other languages
#     and untagged ones (output, diagrams, C fragments) never run;
#   - a block that cannot run here carries, on the line right before its
#     opening fence, <!-- not runnable: REASON --> (a sudo or multi-host
#     run, a CUDA device, a benchmark of minutes, elided arguments);
#   - a block that shows a failure carries <!-- exits N: REASON --> and
#     must exit N;
#   - a marker without a reason, an unknown marker, or one before a block
#     that never runs is itself a failure.
# The blocks of one page run in order in one scratch directory, with the
# build's tools first in PATH and bench/ linked to the build's bench
# programs, after prepare() has made what the page assumes the reader
# already has (IDX image files, the demo's data/fashion-mnist shards, a
# CSV, a TensorBoard event file...). Images are made here, 2000 + 500 of
# them (each class a flat grey level), not read from Fashion-MNIST, whose
# files live outside the clone: what is checked is that the commands run,
# not what they learn. Each block has DOCS_TIMEOUT seconds (default 300).
#
# Exit status: 0 when every block ran as marked, 1 otherwise; a block whose
# program was not built (recordio-train without MPI) or whose interpreter
# is missing is skipped with a line saying why. DOCS_PAGES="P..." runs
# those pages only; without it, the runner first checks itself on pages
# made to fail in each way above.
. "$(dirname "$0")/cli_lib.sh"

SRC=${RIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
DOCS_TIMEOUT=${DOCS_TIMEOUT:-300}
SKIPPED=0
for p in "$PACK" "$CAT" "$BIN/bench/ctr_gen"; do
	if [ ! -x "$p" ]; then
		echo "docs_run.sh: SKIP: $p not built"
		rm -rf "$T"
		exit 77
	fi
done

# Open MPI as the trainer tests run it (tests/train_lib.sh says why).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export PATH="$BIN:$PATH"

# ---- the blocks --------------------------------------------------------------

# extract PAGE OUTDIR: writes each fenced block of PAGE to OUTDIR/LINE.LANG
# and prints "LINE LANG MARK" per block, MARK being "run", "skip REASON",
# "exits N REASON" or "bad TEXT" (a malformed marker, or one before a block
# that never runs).
extract() {
	awk -v out="$2" '
	function lang_of(tag) {
		if (tag == "sh" || tag == "bash" || tag == "shell") return "sh"
		if (tag == "python") return "python"
		return ""
	}
	inblock && /^```[ \t]*$/ { inblock = 0; prev = ""; close(file); next }
	inblock { print > file; next }
	/^```/ {
		tag = substr($0, 4); sub(/^[ \t]+/, "", tag); sub(/[ \t].*$/, "", tag)
		lang = lang_of(tag)
		inblock = NR; file = out "/" NR "." (lang == "" ? "other" : lang)
		printf "" > file
		mark = "run"
		if (prev ~ /^<!--/) {
			if (match(prev, /^<!-- not runnable: [^ ].* -->$/))
				mark = "skip " substr(prev, 20, length(prev) - 23)
			else if (match(prev, /^<!-- exits [0-9]+: [^ ].* -->$/)) {
				rest = substr(prev, 12, length(prev) - 15); n = rest; sub(/:.*/, "", n)
				sub(/^[0-9]+: /, "", rest)
				mark = "exits " n " " rest
			} else if (prev ~ /runnable|exits/)
				mark = "bad malformed marker: " prev
			if (lang == "" && mark != "run" && mark !~ /^bad/)
				mark = "bad a marker before a block that never runs: " prev
		}
		if (lang != "" || mark ~ /^bad/)
			print NR, (lang == "" ? "other" : lang), mark
		next
	}
	{ prev = $0 }
	END { if (inblock) print inblock, "other", "bad a block that never closes" }
	' "$1"
}

# needs_missing BLOCKFILE LANG: prints why the block cannot run on this
# build, or nothing.
needs_missing() {
	if [ "$2" = python ] && ! command -v python3 >/dev/null 2>&1; then
		echo "python3 not found"
	elif grep -q 'recordio-train\|mpirun' "$1" &&
		{ [ ! -x "$BIN/recordio-train" ] || ! command -v mpirun >/dev/null 2>&1; }; then
		echo "recordio-train not built or mpirun not found"
	fi
}

# run_block PAGE LINE LANG WANT BLOCKFILE DIR: runs one block, checks its
# exit status against WANT.
run_block() {
	page=$1 line=$2 lang=$3 want=$4 blk=$5 dir=$6
	why=$(needs_missing "$blk" "$lang")
	if [ -n "$why" ]; then
		echo "SKIP: $page:$line: $why"
		SKIPPED=$((SKIPPED + 1))
		return
	fi
	if [ "$lang" = python ]; then set -- python3 "$blk"; else set -- sh -e "$blk"; fi
	# Open MPI's allocations outlive it (tests/train_lib.sh); the tools'
	# own leaks are still checked in every block without MPI
	asan=${ASAN_OPTIONS:-}
	if grep -q 'mpirun\|recordio-train' "$blk"; then
		asan="${asan:+$asan:}detect_leaks=0"
	fi
	log="$blk.log"
	t0=$(date +%s)
	(cd "$dir" && ASAN_OPTIONS="$asan" timeout -k 10 "$DOCS_TIMEOUT" "$@") </dev/null >"$log" 2>&1
	got=$?
	if [ "$got" -eq "$want" ]; then
		pass
		echo "ok: $page:$line (exit $got, $(($(date +%s) - t0)) s)"
	else
		fail "$page:$line: exit $got (want $want$([ "$got" -eq 124 ] && echo ", timed out after ${DOCS_TIMEOUT}s")); mark it <!-- not runnable: REASON --> if it cannot run here"
		tail -n 15 "$log" | sed 's/^/  | /' >&2
	fi
}

# ---- what each page assumes ----------------------------------------------------

# be32 N: N as 4 big-endian bytes
be32() {
	for s in 24 16 8 0; do
		printf "\\$(printf %03o $(($1 >> s & 255)))"
	done
}

# make_idx NAME N: NAME-images-idx3-ubyte.gz and NAME-labels-idx1-ubyte.gz,
# N (a multiple of 10) 28x28 images, image i of class i % 10, flat grey.
make_idx() {
	rm -f unit.img unit.lab
	for k in 0 1 2 3 4 5 6 7 8 9; do
		head -c 784 /dev/zero | tr '\000' "\\$(printf %03o $((k * 25 + 10)))" >>unit.img
		printf "\\$(printf %03o "$k")" >>unit.lab
	done
	{ printf '\0\0\10\3'; be32 "$2"; be32 28; be32 28; } >"$1-images-idx3-ubyte"
	{ printf '\0\0\10\1'; be32 "$2"; } >"$1-labels-idx1-ubyte"
	i=0
	while [ $i -lt $(($2 / 10)) ]; do
		cat unit.img >>"$1-images-idx3-ubyte"
		cat unit.lab >>"$1-labels-idx1-ubyte"
		i=$((i + 1))
	done
	gzip -f "$1-images-idx3-ubyte" "$1-labels-idx1-ubyte"
	rm -f unit.img unit.lab
}

# pack_idx NAME OUTPUT SHARDS: recordio-pack of NAME's IDX pair into lz4 shards
pack_idx() {
	"$PACK" -q --from idx --images "$1-images-idx3-ubyte.gz" --labels "$1-labels-idx1-ubyte.gz" \
		--output "$2" --shards "$3" --compression lz4
}

# prepare PAGE DIR: DIR made, with what PAGE's first block may assume.
prepare() {
	mkdir -p "$2" && cd "$2" || return 1
	make_idx train 2000 && make_idx t10k 500 || return 1
	# the top of a checkout after scripts/demo.sh: data/ exists
	mkdir data && ln -s "$BIN/bench" bench || return 1
	case $1 in
	README.md)
		# what scripts/demo.sh packs, and a test set of the reader's own
		mkdir -p data/fashion-mnist logs tf-out images/cat images/dog &&
			pack_idx train data/fashion-mnist/train 4 &&
			pack_idx t10k data/fashion-mnist/test 2 &&
			pack_idx t10k data/test 2 || return 1
		# TFRecord files another program wrote: no .idx
		printf 'one\ntwo\nthree\nfour\n' >corpus.txt
		"$PACK" -q --from lines --output tf-out/part --shards 2 --compression gzip corpus.txt &&
			rm tf-out/*.idx || return 1
		printf 'species,bill_length_mm,island\n0,39.1,Torgersen\n2,46.5,Dream\n' >penguins.csv
		printf 'meow' >images/cat/a.jpg
		printf 'woof' >images/dog/b.jpg
		cp "$TESTDATA/events.out.tfevents.tf-2-x" logs/events.out.tfevents.1700000000.docs
		"$PACK" -q --from lines --output raw corpus.txt &&
			mv raw-00000-of-00001.tfrecord raw.tfrecord && rm raw-00000-of-00001.tfrecord.idx ||
			return 1
		cp raw.tfrecord damaged.tfrecord
		printf 'X' | dd of=damaged.tfrecord bs=1 seek=30 conv=notrunc 2>/dev/null
		;;
	doc/recordio-format.md)
		# x.tfrecord in each codec, for the conversions of section 3
		"$PACK" -q --from lines --output x "$SRC/README.md" || return 1
		for c in gzip:gz zlib:zz lz4:lz4; do
			"$PACK" -q --from tfrecord --output "x-${c%%:*}" --compression "${c%%:*}" \
				x-00000-of-00001.tfrecord &&
				mv "x-${c%%:*}-00000-of-00001.tfrecord.${c#*:}" "x.tfrecord.${c#*:}" || return 1
		done
		rm -f x-*
		;;
	esac
}

# ---- the runner itself ------------------------------------------------------------

# selftest_page NAME WANT-EXIT WANT-LINE: NAME.md (made in $T/self from
# stdin) run alone must exit WANT-EXIT with a line matching WANT-LINE.
selftest_page() {
	cat >"$T/self/$1.md"
	# (its scratch directory, kept when it fails, inside ours)
	DOCS_PAGES="$T/self/$1.md" TMPDIR="$T/self" sh "$0" >"$T/self/$1.out" 2>&1
	expect_eq "$2" "$?" "the runner on $1.md: exit status"
	expect_match "$3" "$T/self/$1.out" "the runner on $1.md"
}

selftest() {
	mkdir -p "$T/self"
	f='```'
	selftest_page good 0 '^docs_run.sh: 4 passed, 0 failed$' <<-EOF
		$f sh
		echo made >made.txt
		$f
		$f sh
		grep -q made made.txt
		$f
		$f python
		assert 1 + 1 == 2
		$f
		<!-- exits 3: shows a failure -->
		$f sh
		exit 3
		$f
		<!-- not runnable: a reason -->
		$f sh
		false
		$f
		$f
		false (output, never run)
		$f
	EOF
	selftest_page failing 1 "^FAIL: .*failing\.md:2: exit 1 \(want 0\)" <<-EOF
		text
		$f bash
		true
		false
		$f
	EOF
	selftest_page wrongexit 1 "^FAIL: .*wrongexit\.md:2: exit 0 \(want 2\)" <<-EOF
		<!-- exits 2: a failure that does not happen -->
		$f sh
		true
		$f
	EOF
	selftest_page noreason 1 "^FAIL: .*noreason\.md:2: malformed marker" <<-EOF
		<!-- not runnable: -->
		$f sh
		true
		$f
	EOF
	selftest_page misplaced 1 "^FAIL: .*misplaced\.md:2: a marker before a block that never runs" <<-EOF
		<!-- not runnable: output -->
		$f
		true
		$f
	EOF
	selftest_page unclosed 1 "^FAIL: .*unclosed\.md:2: a block that never closes" <<-EOF
		text
		$f sh
		true
	EOF
	DOCS_TIMEOUT=1 selftest_page slow 1 "^FAIL: .*slow\.md:1: exit 124 \(want 0, timed out after 1s\)" <<-EOF
		$f sh
		sleep 30
		$f
	EOF
}

# ---- every page ----------------------------------------------------------------------

mkdir -p "$T/blocks" "$T/run"
if [ -z "${DOCS_PAGES:-}" ]; then
	selftest
	DOCS_PAGES="$SRC/README.md $(echo "$SRC"/doc/*.md)"
fi
for path in $DOCS_PAGES; do
	page=${path#"$SRC/"}
	name=$(echo "$page" | tr '/.' '__')
	out="$T/blocks/$name"
	mkdir -p "$out"
	extract "$path" "$out" >"$out/list" || { fail "$page: cannot read"; continue; }
	dir="$T/run/$name"
	if grep -q ' run$\| exits ' "$out/list" &&
		! (prepare "$page" "$dir") >"$out/prepare.log" 2>&1; then
		fail "$page: preparing its data"
		sed 's/^/  | /' "$out/prepare.log" >&2
		continue
	fi
	while read -r line lang mark reason; do
		case $mark in
		run) run_block "$page" "$line" "$lang" 0 "$out/$line.$lang" "$dir" ;;
		exits)
			run_block "$page" "$line" "$lang" "${reason%% *}" "$out/$line.$lang" "$dir" ;;
		skip) echo "not run: $page:$line: $reason" ;;
		bad) fail "$page:$line: $reason" ;;
		esac
	done <"$out/list"
done
echo "docs_run.sh: $SKIPPED blocks skipped"
finish
