# trainer/: recordio-train, the MPI data-parallel trainer. Built when MPI and
# OpenBLAS are found (--enable-trainer). Its MPI-free parts (the model, the
# math backends, the optimizer, checkpoints, the memory limit) are a
# convenience library the unit tests link too; with --with-cuda,
# math_cuda.cu is compiled by nvcc.
EXTRA_DIST += trainer/math_cuda.cu trainer/math_cuda.h trainer/cublas_dl.h
if BUILD_TRAINER
noinst_LTLIBRARIES += trainer/libtrainer.la
trainer_libtrainer_la_SOURCES = \
	trainer/backend.h trainer/math_cpu.c trainer/math_bf16.c trainer/math_bf16.h \
	trainer/math_cpu16.c trainer/math_cpu16.h \
	trainer/mlp.c trainer/mlp.h trainer/mlp_shape.c \
	trainer/optim.c trainer/optim.h trainer/optim_lars.c \
	trainer/embed.c trainer/embed.h \
	trainer/synthetic.c trainer/synthetic.h \
	trainer/checkpoint.h trainer/checkpoint_format.h \
	trainer/checkpoint_write.c trainer/checkpoint_read.c \
	trainer/resume.c trainer/resume.h \
	trainer/memory.c trainer/memory.h
# no errno from sqrtf & co., so that the optimizer's loops vectorise; no FMA
# contraction, so that a vector body and its scalar tail round alike
trainer_libtrainer_la_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS) -fno-math-errno -ffp-contract=off
TRAINER_LIBS = trainer/libtrainer.la recordio/librecordio.la lib/librio_internal.la \
	$(OPENBLAS_LIBS) $(DNNL_LIBS) -lm

if HAVE_CUDA
trainer_libtrainer_la_CFLAGS += $(CUDA_CFLAGS)
TRAINER_CUDA_OBJ = trainer/math_cuda.$(OBJEXT)
# cuBLAS is not linked: math_cuda.cu loads it when a GPU backend opens
# (trainer/cublas_dl.h); tests/test_train_math_cuda links it, the check
# that the functions it loads are cuBLAS's
TRAINER_LIBS += $(TRAINER_CUDA_OBJ) $(CUDA_LIBS) -ldl -lstdc++
trainer/math_cuda.$(OBJEXT): $(srcdir)/trainer/math_cuda.cu $(srcdir)/trainer/math_cuda.h \
		$(srcdir)/trainer/cublas_dl.h $(srcdir)/trainer/backend.h $(srcdir)/lib/half.h
	$(AM_V_GEN)$(MKDIR_P) trainer && \
	$(NVCC) $(NVCCFLAGS) -std=c++17 -Xcompiler -fPIC -c -o $@ \
		$(srcdir)/trainer/math_cuda.cu
CLEANFILES += $(TRAINER_CUDA_OBJ)
endif

bin_PROGRAMS += recordio-train
recordio_train_SOURCES = \
	trainer/main.c trainer/run_config.c trainer/run_config.h \
	trainer/options.c trainer/options.h trainer/options_table.h trainer/options_check.c \
	trainer/options_value.c trainer/options_value.h trainer/world.c trainer/world.h \
	trainer/start.c trainer/start.h trainer/save.c trainer/save.h \
	trainer/train.c trainer/train.h trainer/cursor.h \
	trainer/data.c trainer/data.h trainer/feature_spec.c trainer/feature_spec.h \
	trainer/model.c trainer/model.h trainer/embed_run.c trainer/embed_run.h \
	trainer/store.c trainer/store.h trainer/shm_window.c trainer/shm_window.h \
	trainer/reducer.c trainer/reducer.h trainer/reducer_shm.c trainer/reducer_half.c trainer/part.h \
	trainer/strategy.h trainer/strategy_ops.h trainer/strategy.c trainer/step.c trainer/step.h \
	trainer/step_copies.c \
	trainer/strategy_allreduce.c trainer/strategy_ps.c trainer/strategy_hybrid.c \
	trainer/strategy_pipeline.c trainer/pipe_stage.c trainer/pipe_stage.h \
	trainer/pipe_trace.c trainer/pipe_trace.h \
	trainer/pipe_tables.c trainer/pipe_tables.h \
	trainer/layout.c trainer/layout.h trainer/tensor_slice.c trainer/tensor_slice.h \
	trainer/checkpoint_split.c trainer/checkpoint_split.h \
	trainer/ps.h trainer/ps_run.c trainer/ps_run.h trainer/ps_ckpt.c \
	trainer/ps_server.c trainer/ps_worker.c \
	trainer/copies.c trainer/copies.h \
	trainer/report.c trainer/report.h \
	trainer/resume_match.c trainer/resume_match.h trainer/fit.c trainer/fit.h \
	trainer/fit_plan.c trainer/fit_plan.h \
	trainer/tensorboard.c trainer/tensorboard.h \
	trainer/progress.c trainer/progress.h \
	trainer/cpus.c trainer/cpus.h
recordio_train_CPPFLAGS = $(AM_CPPFLAGS)
recordio_train_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(OPENBLAS_CFLAGS)
recordio_train_LDADD = $(TRAINER_LIBS) $(MPI_LIBS)
EXTRA_recordio_train_DEPENDENCIES = $(TRAINER_CUDA_OBJ)
endif
