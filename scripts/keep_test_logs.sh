#!/bin/sh
# keep_test_logs.sh DRIVER ARGS... — runs Automake's test driver DRIVER with
# ARGS (one test), then copies that test's .log and .trs under
# $RIO_KEEP_LOGS (the same relative path, tests/NAME.log). scripts/test.sh
# runs the suite inside `make distcheck` (LOG_DRIVER='$(SHELL)
# .../keep_test_logs.sh $(top_srcdir)/build-aux/test-driver'), which
# deletes its build tree once the suite passes: the copies still say
# what skipped and why, and what failed. Each test's wall seconds are
# added to $RIO_KEEP_LOGS/times ("SECONDS NAME"), where the suite's time
# goes.
driver=$1
shift
name="" log="" trs="" prev=""
for a in "$@"; do
	case $prev in
	--test-name) name=$a ;;
	--log-file) log=$a ;;
	--trs-file) trs=$a ;;
	esac
	prev=$a
done
start=$(date +%s)
status=0
sh "$driver" "$@" || status=$?
if [ -n "${RIO_KEEP_LOGS:-}" ]; then
	for f in $log $trs; do
		mkdir -p "$RIO_KEEP_LOGS/$(dirname "$f")" && cp -f "$f" "$RIO_KEEP_LOGS/$f"
	done
	echo "$(($(date +%s) - start)) $name" >>"$RIO_KEEP_LOGS/times"
fi
exit $status
