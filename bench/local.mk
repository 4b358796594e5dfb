# bench/: benchmark scripts (not tests): they print figures and ratios.
dist_noinst_SCRIPTS += bench/format.sh bench/loader.sh
EXTRA_PROGRAMS = bench/mkshards
bench_mkshards_SOURCES = bench/mkshards.c
bench_mkshards_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
bench_mkshards_LDADD = recordio/librecordio.la $(ZLIB_LIBS)
CLEANFILES += bench/mkshards
