# bench/: benchmark scripts (not tests): they print figures and ratios.
dist_noinst_SCRIPTS += bench/format.sh bench/loader.sh bench/train.sh bench/large_batch.sh \
	bench/scaling.sh bench/python.sh bench/consistency.sh bench/embeddings.sh bench/gpu.sh \
	bench/speed_compare.sh bench/ckpt_compare.sh bench/storage.sh bench/s3_loopback.sh \
	bench/parallelism.sh bench/precision.sh bench/precision_accuracy.sh \
	bench/pipeline_async.sh bench/split_ckpt.sh
EXTRA_PROGRAMS = bench/mkshards bench/randread bench/core_rtt
bench_mkshards_SOURCES = bench/mkshards.c
bench_mkshards_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
bench_mkshards_LDADD = recordio/librecordio.la $(ZLIB_LIBS)
bench_randread_SOURCES = bench/randread.c
bench_randread_CFLAGS = $(AM_CFLAGS) $(LIBURING_CFLAGS)
bench_randread_LDADD = lib/librio_internal.la $(LIBURING_LIBS)
# a cache line's round trip between two CPUs (bench/train.sh, each round)
bench_core_rtt_SOURCES = bench/core_rtt.c
bench_core_rtt_LDADD = -lpthread
# the synthetic click-through dataset (doc/embeddings.md); built for make
# check, which tests it (tests/cli_ctr_gen.sh)
check_PROGRAMS += bench/ctr_gen
bench_ctr_gen_SOURCES = bench/ctr_gen.c
bench_ctr_gen_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
bench_ctr_gen_LDADD = tools/libtoolcommon.la recordio/librecordio.la -lm
CLEANFILES += bench/mkshards bench/randread bench/core_rtt bench/sgemm_peak bench/allreduce \
	bench/gemm_only bench/core_speed
EXTRA_DIST += bench/bench_lib.sh bench/sgemm_peak.c bench/gemm_only.c bench/core_speed.c bench/ddp_baseline.py bench/gpu_torch.py bench/allreduce.c \
	bench/scaling_model.py bench/python.py bench/consistency_report.py \
	bench/storage_report.py bench/storage_tfdata.py bench/parallelism_report.py \
	bench/parallelism_model.py bench/alpha_beta.py bench/pipe_trace.py \
	bench/pipe_sched.py
if BUILD_TRAINER
EXTRA_PROGRAMS += bench/sgemm_peak
bench_sgemm_peak_SOURCES = bench/sgemm_peak.c
bench_sgemm_peak_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
bench_sgemm_peak_LDADD = $(OPENBLAS_LIBS)
# a core's speed window by window (bench/parallelism.sh part a, TRACE=1)
EXTRA_PROGRAMS += bench/core_speed
bench_core_speed_SOURCES = bench/core_speed.c
bench_core_speed_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
bench_core_speed_LDADD = $(OPENBLAS_LIBS)
# the GEMM-only rate of a step in fp32 or bf16 (bench/precision.sh)
EXTRA_PROGRAMS += bench/gemm_only
bench_gemm_only_SOURCES = bench/gemm_only.c
bench_gemm_only_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
bench_gemm_only_LDADD = $(OPENBLAS_LIBS) $(DNNL_LIBS)
# the MPI_Allreduce sweep of bench/scaling.sh
EXTRA_PROGRAMS += bench/allreduce
bench_allreduce_SOURCES = bench/allreduce.c
bench_allreduce_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
bench_allreduce_LDADD = $(MPI_LIBS)
endif
