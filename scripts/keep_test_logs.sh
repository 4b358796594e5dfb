#!/bin/sh
# keep_test_logs.sh DRIVER ARGS... — runs Automake's test driver DRIVER with
# ARGS (one test), then copies that test's .log and .trs under
# $RIO_KEEP_LOGS (the same relative path, tests/NAME.log). scripts/test.sh
# runs the suite inside `make distcheck` (LOG_DRIVER='$(SHELL)
# .../keep_test_logs.sh $(top_srcdir)/build-aux/test-driver'), which
# deletes its build tree once the suite passes: the copies still say
# what skipped and why, and what failed.
driver=$1
shift
log="" trs="" prev=""
for a in "$@"; do
	case $prev in
	--log-file) log=$a ;;
	--trs-file) trs=$a ;;
	esac
	prev=$a
done
status=0
${SHELL:-/bin/sh} "$driver" "$@" || status=$?
if [ -n "${RIO_KEEP_LOGS:-}" ]; then
	for f in $log $trs; do
		mkdir -p "$RIO_KEEP_LOGS/$(dirname "$f")" && cp -f "$f" "$RIO_KEEP_LOGS/$f"
	done
fi
exit $status
