# tools/: the command-line programs; they use the public headers, plus
# tools/common.h for option parsing and reporting shared among them and
# lib/'s helpers (the clock, sizes, JSON, atomic files), linked statically.
TOOL_CFLAGS = $(AM_CFLAGS)
TOOL_LDADD = tools/libtoolcommon.la lib/librio_internal.la recordio/librecordio.la

noinst_LTLIBRARIES += tools/libtoolcommon.la
tools_libtoolcommon_la_SOURCES = tools/common.c tools/common.h
# lib/ inside it too, for recordio-train, which links this after lib/ (until
# it links lib/ alone: issue 24)
tools_libtoolcommon_la_LIBADD = lib/librio_internal.la

bin_PROGRAMS += recordio-pack recordio-cat recordio-verify recordio-index recordio-info \
	recordio-bench

recordio_pack_SOURCES = tools/pack.c tools/pack.h tools/pack_source.c tools/pack_idx.c \
	tools/pack_tfrecord.c tools/pack_csv.c tools/pack_dir.c tools/pack_lines.c \
	tools/shard_out.c tools/shard_out.h tools/set_commit.c tools/set_commit.h
recordio_pack_LDADD = $(TOOL_LDADD) $(ZLIB_LIBS)
recordio_pack_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
recordio_cat_SOURCES = tools/cat.c
recordio_cat_LDADD = $(TOOL_LDADD)
recordio_verify_SOURCES = tools/verify.c
recordio_verify_LDADD = $(TOOL_LDADD) -lpthread
recordio_index_SOURCES = tools/index.c
recordio_index_LDADD = $(TOOL_LDADD)
recordio_info_SOURCES = tools/info.c
recordio_info_LDADD = $(TOOL_LDADD)
recordio_bench_SOURCES = tools/bench.c
recordio_bench_LDADD = $(TOOL_LDADD) -lpthread
