# cli_lib.sh — sourced by the tests/cli_*.sh shell tests.
#
# Gives: $BIN (the built tools) and $PACK, $CAT, $VERIFY, $INFO, $INDEX,
# $BENCH (each tool), $TESTDATA (TensorFlow-written files), a scratch
# directory $T removed on success, `shimmed` (a tool run with a file-system
# call made to fail: tests/fail_at.c), and assertions that count
# passes and failures and print "N passed, N failed" at the end.
set -u
BIN=${RIO_BUILDDIR:-$(pwd)}
# the tools under test
PACK="$BIN/recordio-pack"
CAT="$BIN/recordio-cat"
VERIFY="$BIN/recordio-verify"
INFO="$BIN/recordio-info"
INDEX="$BIN/recordio-index"
BENCH="$BIN/recordio-bench"
TESTDATA=${RIO_TESTDATA:-$(cd "$(dirname "$0")" && pwd)/data}
T=$(mktemp -d "${TMPDIR:-/tmp}/rio-cli-XXXXXX")
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*" >&2; }

# shimmed VAR=VALUE... -- PROGRAM ARGS: PROGRAM (the real binary behind a
# libtool wrapper) with tests/fail_at.so ($SHIM: fails or kills the Nth
# rename, write...) preloaded, after libasan when the tools are built with
# AddressSanitizer (its runtime must come first). $SHIM_PRELOAD is the list,
# found at the first call (ldd through libtool's wrapper: a tenth of a CPU
# second, which tests/cli_setcommit.sh's 180 calls paid each time).
SHIM="$BIN/tests/fail_at.so"
SHIM_PRELOAD=""
shimmed() {
	if [ -x "$BIN/libtool" ]; then shim_run="$BIN/libtool --mode=execute"; else shim_run=""; fi
	if [ -z "$SHIM_PRELOAD" ]; then
		libasan=$($shim_run ldd "$PACK" 2>/dev/null | awk '/lib[at]san/ { print $3; exit }')
		SHIM_PRELOAD="${libasan:+$libasan }$SHIM"
	fi
	vars=""
	while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
	shift
	# shellcheck disable=SC2086
	$shim_run env LD_PRELOAD="$SHIM_PRELOAD" $vars "$@"
}

# expect_exit CODE CMD...: runs CMD (stdout to $T/out, stderr to $T/err),
# checks its exit code.
expect_exit() {
	want=$1; shift
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" -eq "$want" ]; then pass; else
		fail "exit $got (want $want): $*"; sed 's/^/  stderr: /' "$T/err" | head -5 >&2
	fi
}

# expect_eq WANT GOT WHAT
expect_eq() {
	if [ "$1" = "$2" ]; then pass; else fail "$3: want '$1', got '$2'"; fi
}

# expect_match REGEX FILE WHAT: FILE has a line matching the extended REGEX.
expect_match() {
	if grep -Eq -- "$1" "$2"; then pass; else
		fail "$3: no line matches /$1/ in $2"; head -5 "$2" | sed 's/^/  /' >&2
	fi
}

# expect_lines N FILE WHAT: FILE has exactly N lines.
expect_lines() {
	got=$(wc -l <"$2" | tr -d ' ')
	expect_eq "$1" "$got" "$3"
}

finish() {
	echo "$(basename "$0"): $PASSED passed, $FAILED failed"
	if [ "$FAILED" -eq 0 ]; then rm -rf "$T"; exit 0; fi
	echo "scratch files kept in $T"
	exit 1
}
