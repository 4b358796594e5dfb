# lib/: internal helpers shared by the library, the tools and the trainer;
# not installed. Linked into librecordio (hidden there), and statically into
# the tools and the trainer, which call them by their rio__ names.
noinst_LTLIBRARIES += lib/librio_internal.la
lib_librio_internal_la_SOURCES = \
	lib/crc32c.c lib/crc32c.h \
	lib/endian.h lib/rng.h lib/half.h lib/bf16_vec.c lib/bf16_vec.h \
	lib/clock.h lib/decimal.h lib/exit_status.h \
	lib/atomic_file.c lib/atomic_file.h \
	lib/size.c lib/size.h \
	lib/grow.c lib/grow.h \
	lib/json.c lib/json.h
lib_librio_internal_la_CFLAGS = $(AM_CFLAGS) $(VIS_CFLAGS) $(ISAL_CFLAGS) -DRIO_BUILDING_LIBRARY
lib_librio_internal_la_LIBADD = $(ISAL_LIBS)
