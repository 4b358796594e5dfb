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
	recordio/shardset.c recordio/shardset.h \
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
# recordio/remote/: shards at s3:// and http(s):// URLs, through libcurl
recordio_librecordio_la_SOURCES += \
	recordio/remote/remote.h \
	recordio/remote/opts.c \
	recordio/remote/text.c recordio/remote/text.h \
	recordio/remote/url.c recordio/remote/url.h \
	recordio/remote/xml.c recordio/remote/xml.h \
	recordio/remote/aws_config.c recordio/remote/aws_config.h \
	recordio/remote/list_parse.c recordio/remote/list.h \
	recordio/remote/manifest.c recordio/remote/manifest.h \
	recordio/remote/shardset_url.c recordio/remote/publish.c
if HAVE_CURL
recordio_librecordio_la_SOURCES += \
	recordio/remote/client.c recordio/remote/client.h \
	recordio/remote/http.c recordio/remote/http.h \
	recordio/remote/engine.c recordio/remote/engine.h \
	recordio/remote/object.c \
	recordio/remote/list.c recordio/remote/listed.c \
	recordio/remote/ops.c
recordio_librecordio_la_CFLAGS += $(CURL_CFLAGS)
recordio_librecordio_la_LIBADD += $(CURL_LIBS)
else
recordio_librecordio_la_SOURCES += recordio/remote/no_curl.c
endif
