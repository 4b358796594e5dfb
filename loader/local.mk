# loader/: the loader (public header loader.h), built into librecordio.
include_HEADERS += loader/loader.h
recordio_librecordio_la_SOURCES += \
	loader/loader.c loader/loader_internal.h \
	loader/epoch.c \
	loader/state.c \
	loader/report.c \
	loader/names.c \
	loader/affinity.c \
	loader/dataset.c loader/dataset.h \
	loader/source.h loader/source_file.c loader/source_remote.c \
	loader/shard_cache.c loader/shard_cache.h \
	loader/remote_whole.c loader/remote_whole.h \
	loader/route.c loader/route.h \
	loader/shards_run.c \
	loader/plan.c loader/plan.h \
	loader/elastic.c loader/elastic.h \
	loader/io.c loader/io.h \
	loader/worker.c \
	loader/chunk.c \
	loader/piece_stream.c \
	loader/placed.c \
	loader/parts.c loader/parts.h \
	loader/cache.c \
	loader/decode.c loader/decode.h \
	loader/batcher.c \
	loader/pool.c loader/pool_memory.c loader/pool.h
recordio_librecordio_la_CFLAGS += $(LIBURING_CFLAGS)
recordio_librecordio_la_LIBADD += $(LIBURING_LIBS)
if HAVE_CUDA
recordio_librecordio_la_SOURCES += loader/cuda.c
recordio_librecordio_la_CFLAGS += $(CUDA_CFLAGS)
recordio_librecordio_la_LIBADD += $(CUDA_LIBS)
endif
