# bench/: benchmark scripts (not tests): they print figures and ratios.
dist_noinst_SCRIPTS += bench/format.sh
