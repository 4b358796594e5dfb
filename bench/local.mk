# bench/: benchmark scripts (not tests): they print figures and ratios.
