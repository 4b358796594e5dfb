# tests/: one CUnit program per module, and shell tests of every tool.
# Each exits 0 on success, 77 to skip (no io_uring, no GPU, no TensorFlow).
AM_TESTS_ENVIRONMENT = \
	RIO_TESTDATA='$(TESTDATA_DIR)'; export RIO_TESTDATA; \
	RIO_BUILDDIR='$(abs_top_builddir)'; export RIO_BUILDDIR; \
	RIO_SRCDIR='$(abs_top_srcdir)'; export RIO_SRCDIR;
# the golden files travel in the tarball: distcheck tests its own copy
TESTDATA_FILES = tests/data/README.md tests/data/tf-mixed-types.tfrecord \
	tests/data/tf-singles.tfrecord tests/data/tfx-mnist.tfrecord \
	tests/data/tfx-external-00001-of-00002.tfrecord.gz \
	tests/data/tfx-penguin-train.tfrecord.gz \
	tests/data/tf-sequence-example.tfrecord tests/data/tf-sequence-example.tfrecord.gz \
	tests/data/events.out.tfevents.tf-2-x tests/data/events.out.tfevents.tb-simple-value \
	tests/data/make_tf_files.py tests/data/fashion-mnist-t10k-images-idx3-ubyte.gz \
	tests/data/fashion-mnist-t10k-labels-idx1-ubyte.gz
EXTRA_DIST += $(TESTDATA_FILES)

# the trainer's shell tests before the rest: the slowest (TRAIN_TESTS, below);
# cli_setcommit.sh first, the longest of the rest (a fault at every call:
# started in CLI_TESTS' turn, it ran alone at the end of the suite)
TESTS += tests/cli_setcommit.sh
EXTRA_DIST += tests/cli_setcommit.sh
if BUILD_TRAINER
TESTS += $(TRAIN_TESTS)
endif

if HAVE_CUNIT
noinst_LTLIBRARIES += tests/libtestutil.la
tests_libtestutil_la_SOURCES = tests/testutil.c tests/testutil.h
tests_libtestutil_la_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)

RIO_TEST_LDADD = tests/libtestutil.la recordio/librecordio.la lib/librio_internal.la \
	$(CUNIT_LIBS) $(ZLIB_LIBS) $(LZ4_LIBS)
RIO_TEST_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(ZLIB_CFLAGS) $(LZ4_CFLAGS)

UNIT_TESTS = \
	tests/test_crc \
	tests/test_lib \
	tests/test_record \
	tests/test_compression \
	tests/test_corrupt \
	tests/test_index \
	tests/test_testdata \
	tests/test_example \
	tests/test_shardset \
	tests/test_loader \
	tests/test_loader_compressed \
	tests/test_loader_uring \
	tests/test_loader_damage \
	tests/test_loader_elastic \
	tests/test_loader_bf16

check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)

tests_test_crc_SOURCES = tests/test_crc.c
tests_test_crc_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_crc_LDADD = $(RIO_TEST_LDADD)
tests_test_lib_SOURCES = tests/test_lib.c
tests_test_lib_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_lib_LDADD = $(RIO_TEST_LDADD) -lm
tests_test_record_SOURCES = tests/test_record.c
tests_test_record_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_record_LDADD = $(RIO_TEST_LDADD)
tests_test_compression_SOURCES = tests/test_compression.c
tests_test_compression_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_compression_LDADD = $(RIO_TEST_LDADD) -lpthread
tests_test_corrupt_SOURCES = tests/test_corrupt.c
tests_test_corrupt_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_corrupt_LDADD = $(RIO_TEST_LDADD)
tests_test_index_SOURCES = tests/test_index.c
tests_test_index_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_index_LDADD = $(RIO_TEST_LDADD)
tests_test_testdata_SOURCES = tests/test_testdata.c
tests_test_testdata_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_testdata_LDADD = $(RIO_TEST_LDADD)
tests_test_example_SOURCES = tests/test_example.c
tests_test_example_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_example_LDADD = $(RIO_TEST_LDADD)
tests_test_shardset_SOURCES = tests/test_shardset.c
tests_test_shardset_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_shardset_LDADD = $(RIO_TEST_LDADD)
tests_test_loader_SOURCES = tests/test_loader.c tests/loadutil.c tests/loadutil.h
tests_test_loader_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_loader_LDADD = $(RIO_TEST_LDADD)
tests_test_loader_compressed_SOURCES = tests/test_loader_compressed.c tests/loadutil.c \
	tests/loadutil.h
tests_test_loader_compressed_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_loader_compressed_LDADD = $(RIO_TEST_LDADD)
tests_test_loader_uring_SOURCES = tests/test_loader_uring.c tests/loadutil.c tests/loadutil.h
tests_test_loader_uring_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_loader_uring_LDADD = $(RIO_TEST_LDADD)
tests_test_loader_damage_SOURCES = tests/test_loader_damage.c tests/loadutil.c tests/loadutil.h
tests_test_loader_damage_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_loader_damage_LDADD = $(RIO_TEST_LDADD)
tests_test_loader_elastic_SOURCES = tests/test_loader_elastic.c tests/loadutil.c \
	tests/loadutil.h
tests_test_loader_elastic_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_loader_elastic_LDADD = $(RIO_TEST_LDADD)
tests_test_loader_bf16_SOURCES = tests/test_loader_bf16.c tests/loadutil.c tests/loadutil.h
tests_test_loader_bf16_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_loader_bf16_LDADD = $(RIO_TEST_LDADD) -lm
endif

# Shell tests of the tools (tests/cli_*.sh), sharing tests/cli_lib.sh.
CLI_TESTS = \
	tests/cli_pack.sh \
	tests/cli_cat.sh \
	tests/cli_verify.sh \
	tests/cli_index.sh \
	tests/cli_info.sh \
	tests/cli_tensorflow.sh \
	tests/cli_bench.sh \
	tests/cli_example.sh \
	tests/cli_dir.sh \
	tests/cli_pipes.sh \
	tests/cli_ctr_gen.sh \
	tests/cli_sizes.sh
TESTS += $(CLI_TESTS)
EXTRA_DIST += $(CLI_TESTS) tests/cli_lib.sh tests/tf_interop.py
# Shell tests of shards in S3 against a real S3 server on 127.0.0.1
# (SeaweedFS: tests/s3_lib.sh; they skip, 77, without it)
S3_TESTS = tests/s3_roundtrip.sh tests/s3_faults.sh tests/s3_cache.sh tests/s3_train.sh \
	tests/s3_coalesce.sh \
	tests/s3_whole.sh
TESTS += $(S3_TESTS)
EXTRA_DIST += $(S3_TESTS) tests/s3_lib.sh tests/s3_proxy.py tests/s3_server.sh
# tests/s3_coalesce.sh's helper: a loader's remote clients' threads counted
check_PROGRAMS += tests/s3_engines
tests_s3_engines_SOURCES = tests/s3_engines.c
tests_s3_engines_LDADD = recordio/librecordio.la lib/librio_internal.la
# and its loader stopped and resumed mid-epoch in shard order
check_PROGRAMS += tests/s3_resume
tests_s3_resume_SOURCES = tests/s3_resume.c
tests_s3_resume_LDADD = recordio/librecordio.la lib/librio_internal.la
# The commands of README.md and doc/*.md, run as the pages show them (the
# marking of blocks that cannot run here: the script's header).
TESTS += tests/docs_run.sh
EXTRA_DIST += tests/docs_run.sh
# the layering of doc/architecture.md: which folder may include which
TESTS += tests/layers.sh
EXTRA_DIST += tests/layers.sh
# no circles of calls or includes between the loader's files
TESTS += tests/loader_layers.sh
EXTRA_DIST += tests/loader_layers.sh

# libFuzzer targets: built and run by scripts/fuzz.sh, not by make check
EXTRA_DIST += tests/fuzz/README.md tests/fuzz/make_seeds.py tests/fuzz/fuzz_util.h \
	tests/fuzz/fuzz_util.c tests/fuzz/fuzz_reader.c tests/fuzz/fuzz_index.c \
	tests/fuzz/fuzz_example.c tests/fuzz/fuzz_loader.c tests/fuzz/fuzz_pack_lines.c \
	tests/fuzz/fuzz_pack_csv.c tests/fuzz/fuzz_sequence_example.c tests/fuzz/fuzz_event.c \
	tests/fuzz/fuzz_frame_scan.c tests/fuzz/fuzz_checkpoint.c tests/fuzz/fuzz_remote.c tests/fuzz/seeds

# tests/fail_at.so: an LD_PRELOAD shim that fails or kills the Nth rename,
# fsync, write, unlink or open (tests/cli_setcommit.sh). Plain $(CC), none
# of the project's flags (no sanitizer in a preloaded library); when it
# cannot be built the test skips.
check_DATA = tests/fail_at.so
CLEANFILES += tests/fail_at.so
EXTRA_DIST += tests/fail_at.c
tests/fail_at.so: tests/fail_at.c
	$(AM_V_CC)$(MKDIR_P) tests && \
	{ $(CC) -shared -fPIC -o $@ $(srcdir)/tests/fail_at.c -ldl 2>/dev/null || \
	  echo "note: $@ not built; tests/cli_setcommit.sh will skip"; }
# tests/no_dlclose.so: an LD_PRELOAD shim that keeps Open MPI's plugins
# loaded, so that the trainer's tests run under LeakSanitizer with Open
# MPI's own leaks suppressed by name (tests/train_lib.sh). Plain $(CC) too.
check_DATA += tests/no_dlclose.so
CLEANFILES += tests/no_dlclose.so
EXTRA_DIST += tests/no_dlclose.c tests/lsan.supp
tests/no_dlclose.so: tests/no_dlclose.c
	$(AM_V_CC)$(MKDIR_P) tests && \
	{ $(CC) -shared -fPIC -o $@ $(srcdir)/tests/no_dlclose.c 2>/dev/null || \
	  echo "note: $@ not built; the trainer's tests run without leak detection"; }

# The loader's GPU path: built with --with-cuda only; skips (77) without a device.
if HAVE_CUNIT
if HAVE_CUDA
check_PROGRAMS += tests/test_loader_cuda
TESTS += tests/test_loader_cuda
tests_test_loader_cuda_SOURCES = tests/test_loader_cuda.c
tests_test_loader_cuda_CFLAGS = $(RIO_TEST_CFLAGS) $(CUDA_CFLAGS)
tests_test_loader_cuda_LDADD = $(RIO_TEST_LDADD) $(CUDA_LIBS)
endif
endif
EXTRA_DIST += tests/test_loader_cuda.c

# The trainer: its MPI-free parts in CUnit, recordio-train itself under
# mpirun in shell tests (tests/train_*.sh, with tests/ckpt_diff to compare
# the parameters two runs ended with), and the CUDA backend against the CPU
# one (skips, 77, without a GPU).
# The slowest first: make -j starts them in this order (and TESTS takes
# them before the rest), so the short ones fill in around the long ones
# and no long one runs alone at the end. By the seconds each took in
# scripts/test.sh's run of 2026-11-28 (build-asan/suite-logs/times)
TRAIN_TESTS = tests/train_errors.sh tests/train_pipeline.sh tests/train_ps.sh \
	tests/train_reduce.sh tests/train_metrics.sh tests/train_embed.sh tests/train_tensor.sh \
	tests/train_elastic.sh tests/train_precision.sh tests/train_mpi.sh tests/train_resume.sh \
	tests/train_pipeline_embed.sh tests/train_pipeline_compress.sh \
	tests/train_layout_accuracy.sh tests/train_pipeline_bf16.sh tests/train_compress.sh \
	tests/train_split_ckpt.sh \
	tests/train_cache.sh tests/train_options.sh tests/train_synthetic.sh tests/train_watch.sh \
	tests/train_pipeline_eval.sh tests/train_loader_cpus.sh tests/train_dir.sh
EXTRA_DIST += $(TRAIN_TESTS) tests/train_lib.sh tests/tb_events.py
# ... and across hosts: namespace "hosts" on a bridge made by
# tests/cluster/cluster.sh (root only; they skip, 77, elsewhere)
CLUSTER_TESTS = tests/cluster_identical.sh tests/cluster_kill.sh tests/cluster_relayout.sh \
	tests/cluster_ps.sh tests/cluster_hybrid.sh tests/cluster_pipeline.sh
EXTRA_DIST += $(CLUSTER_TESTS) tests/cluster/cluster.sh tests/cluster/cluster_lib.sh
if BUILD_TRAINER
check_PROGRAMS += tests/ckpt_diff
tests_ckpt_diff_SOURCES = tests/ckpt_diff.c
tests_ckpt_diff_CFLAGS = $(AM_CFLAGS)
tests_ckpt_diff_LDADD = $(TRAINER_LIBS)
# the reducer alone under mpirun (tests/train_reduce.sh runs it)
check_PROGRAMS += tests/test_reducer
tests_test_reducer_SOURCES = tests/test_reducer.c trainer/reducer.c trainer/reducer_shm.c trainer/reducer_half.c \
	trainer/shm_window.c trainer/store.c trainer/world.c
tests_test_reducer_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/trainer
tests_test_reducer_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_test_reducer_LDADD = $(TRAINER_LIBS) $(MPI_LIBS)
TESTS += $(CLUSTER_TESTS)
if HAVE_CUNIT
check_PROGRAMS += tests/test_train
TESTS += tests/test_train
tests_test_train_SOURCES = tests/test_train.c
tests_test_train_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_train_LDADD = tests/libtestutil.la $(TRAINER_LIBS) $(CUNIT_LIBS)
# the option table (trainer/options*.c), without MPI
check_PROGRAMS += tests/test_train_options
TESTS += tests/test_train_options
tests_test_train_options_SOURCES = tests/test_train_options.c trainer/options.c \
	trainer/options_check.c trainer/options_value.c
tests_test_train_options_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_train_options_LDADD = tests/libtestutil.la $(TRAINER_LIBS) $(CUNIT_LIBS)
# the embedding tables (trainer/embed.h)
check_PROGRAMS += tests/test_embed
TESTS += tests/test_embed
tests_test_embed_SOURCES = tests/test_embed.c
tests_test_embed_CFLAGS = $(RIO_TEST_CFLAGS)
tests_test_embed_LDADD = tests/libtestutil.la $(TRAINER_LIBS) $(CUNIT_LIBS)
endif
if HAVE_CUDA
check_PROGRAMS += tests/test_train_math_cuda
TESTS += tests/test_train_math_cuda
tests_test_train_math_cuda_SOURCES = tests/test_train_math_cuda.c tests/cublas_linked.c
tests_test_train_math_cuda_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS)
tests_test_train_math_cuda_LDADD = $(TRAINER_LIBS) $(CUBLAS_LIBS)
endif
# --precision bf16 on the CPU (oneDNN); skips (77) without bf16 GEMMs
check_PROGRAMS += tests/test_train_bf16
TESTS += tests/test_train_bf16
tests_test_train_bf16_SOURCES = tests/test_train_bf16.c
tests_test_train_bf16_CFLAGS = $(AM_CFLAGS)
tests_test_train_bf16_LDADD = $(TRAINER_LIBS)
endif
EXTRA_DIST += tests/test_train_math_cuda.c tests/cublas_linked.c tests/check_report.h
