# recordio/: librecordio, the installed library (public header recordio.h).
lib_LTLIBRARIES += recordio/librecordio.la
include_HEADERS += recordio/recordio.h
recordio_librecordio_la_SOURCES = \
	recordio/error.c \
	recordio/size.c \
	recordio/frame.c \
	recordio/frame_scan.c recordio/frame_scan.h \
	recordio/compression.c \
	recordio/stream.c recordio/stream.h \
	recordio/writer.c \
	recordio/reader.c \
	recordio/index.c \
	recordio/shardset.c \
	recordio/example_decode.c \
	recordio/example_encode.c \
	recordio/sequence_decode.c \
	recordio/pb_nested.c \
	recordio/payload_inspect.c \
	recordio/event_decode.c recordio/event_encode.c \
	recordio/protobuf.h recordio/internal.h recordio/example_internal.h
recordio_librecordio_la_CFLAGS = $(AM_CFLAGS) $(VIS_CFLAGS) -DRIO_BUILDING_LIBRARY \
	$(ZLIB_CFLAGS) $(LZ4_CFLAGS) $(ISAL_CFLAGS)
recordio_librecordio_la_LIBADD = lib/librio_internal.la $(ZLIB_LIBS) $(LZ4_LIBS) $(ISAL_LIBS)
recordio_librecordio_la_LDFLAGS = -version-info $(RIO_LT_VERSION) -no-undefined
