# lib/: internal helpers shared by the library and the tools; not installed.
noinst_LTLIBRARIES += lib/librio_internal.la
lib_librio_internal_la_SOURCES = \
	lib/crc32c.c lib/crc32c.h \
	lib/endian.h lib/rng.h
lib_librio_internal_la_CFLAGS = $(AM_CFLAGS) $(VIS_CFLAGS) $(ISAL_CFLAGS) -DRIO_BUILDING_LIBRARY
lib_librio_internal_la_LIBADD = $(ISAL_LIBS)
