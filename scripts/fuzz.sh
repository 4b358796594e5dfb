#!/bin/sh
# fuzz.sh [SECONDS] — builds the libFuzzer targets of tests/fuzz/ with clang
# (AddressSanitizer and UndefinedBehaviorSanitizer) in build-fuzz/, and runs
# each for SECONDS (default 60) on a corpus seeded from tests/fuzz/seeds/
# (the inputs of the bugs fuzzing found: run first, as regression tests)
# and tests/data/ (tests/fuzz/make_seeds.py). Prints executions, executions
# per second and corpus size per target; exits non-zero on any crash, leak,
# timeout or failed invariant, leaving the input in build-fuzz/artifacts/.
# Targets run FUZZ_JOBS at a time (default: one a CPU), each for SECONDS.
# FUZZ_BUILD_ONLY=1 configures and builds the instrumented library and
# stops there (scripts/test.sh builds it while other stages run).
# FUZZ_TARGETS="fuzz_reader fuzz_index" picks targets; FUZZ_VERBOSE=1 makes
# fuzz_loader narrate. Needs clang with libFuzzer (Debian: clang,
# libclang-rt-14-dev); exits 77 without it.
set -eu
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${1:-60}
B="$RIO_TOP/build-fuzz"
CC=${FUZZ_CC:-clang}

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz.sh: $CC not found (apt-get install clang libclang-rt-14-dev); skipped"
	exit 77
fi
mkdir -p "$B"
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$B/probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$B/probe.c" -o "$B/probe" 2>/dev/null; then
	echo "fuzz.sh: $CC cannot link libFuzzer (apt-get install libclang-rt-14-dev); skipped"
	exit 77
fi

# the library, instrumented, static (no trainer: it is not fuzzed)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
[ -x "$RIO_TOP/configure" ] || (cd "$RIO_TOP" && ./autogen.sh >/dev/null 2>&1)
cd "$B"
if [ ! -f Makefile ]; then
	"$RIO_TOP/configure" CC="$CC" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $SAN" \
		--disable-shared --enable-trainer=no >configure.out 2>&1 ||
		{ tail -20 configure.out; exit 1; }
fi
make -j"$(nproc)" lib/librio_internal.la recordio/librecordio.la >make.out 2>&1 ||
	{ tail -40 make.out; exit 1; }
[ -z "${FUZZ_BUILD_ONLY:-}" ] || exit 0
LIBS=$(sed -n 's/^LIBS = //p; s/^\(ZLIB\|LZ4\|LIBURING\|ISAL\|CURL\)_LIBS = //p' Makefile | tr '\n' ' ')

targets=${FUZZ_TARGETS:-$(cd "$RIO_TOP/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//' | grep -v fuzz_util)}
mkdir -p artifacts corpus
python3 "$RIO_TOP/tests/fuzz/make_seeds.py" "$RIO_TOP/tests/data" "$B/seeds"
# fuzz_one TARGET: builds and runs it; prints its line of the table (and,
# when it failed, what failed); non-zero when it did
fuzz_one() {
	t=$1
	src="$RIO_TOP/tests/fuzz/$t.c"
	# a target names the sources it needs beyond the libraries on a
	# "fuzz-sources:" line of its top comment (the tools' parsers);
	# fuzz_util.c always
	extra=""
	for f in $(sed -n 's/.*fuzz-sources: *//p' "$src" | head -1); do
		extra="$extra $RIO_TOP/$f"
	done
	# shellcheck disable=SC2086
	"$CC" -g -O1 -fsanitize=fuzzer $SAN -I"$RIO_TOP/recordio" -I"$RIO_TOP/loader" \
		-I"$RIO_TOP/lib" -I"$RIO_TOP/tools" -I"$RIO_TOP/tests/fuzz" -I"$B" \
		"$src" "$RIO_TOP/tests/fuzz/fuzz_util.c" $extra \
		recordio/.libs/librecordio.a lib/.libs/librio_internal.a $LIBS -lpthread -lm \
		-o "$B/$t" 2>"$B/$t.build.log" || { cat "$B/$t.build.log"; return 1; }
	mkdir -p "corpus/$t"
	seeds=""
	for d in "$RIO_TOP/tests/fuzz/seeds/$t" "$B/seeds/$t"; do
		[ -d "$d" ] && seeds="$seeds $d"
	done
	rc=0
	# shellcheck disable=SC2086
	"$B/$t" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2560 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$B/artifacts/$t-" \
		"corpus/$t" $seeds >"$B/$t.log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/$t.log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$B/$t.log" | tail -1)
	corpus=$(ls "corpus/$t" | wc -l)
	if [ $rc -eq 0 ]; then
		result=ok
	else
		result="FAILED (exit $rc): $(ls -t "$B"/artifacts/"$t"-* 2>/dev/null | head -1)"
	fi
	printf '%-22s %10s %9s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$result"
	if [ $rc -ne 0 ]; then
		grep -E 'ERROR|CHECK failed|SUMMARY|runtime error' "$B/$t.log" | head -8
		echo "  log: $B/$t.log"
	fi
	return $rc
}

# FUZZ_JOBS targets at a time (default: one a CPU), each on its own core
# for its SECONDS: the same time each, the smoke's wall time divided
jobs=${FUZZ_JOBS:-$(nproc)}
status=0
printf '%-22s %10s %9s %7s  %s\n' target executions exec/s corpus result
set -- $targets
while [ $# -gt 0 ]; do
	batch=""
	while [ $# -gt 0 ] && [ "$(echo $batch | wc -w)" -lt "$jobs" ]; do
		batch="$batch $1"
		shift
	done
	for t in $batch; do
		(rc=0; fuzz_one "$t" >"$B/$t.summary" 2>&1 || rc=$?; echo $rc >"$B/$t.rc") &
	done
	wait
	for t in $batch; do
		cat "$B/$t.summary"
		[ "$(cat "$B/$t.rc")" = 0 ] || status=1
	done
done
exit $status
