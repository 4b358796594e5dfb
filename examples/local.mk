# examples/: programs a user copies, built with plain make against an installed
# recordio (pkg-config), not by this build; tests/cli_example.sh builds and
# runs them against a `make install DESTDIR=...` copy.
EXTRA_DIST += examples/README.md examples/Makefile examples/train_loop.c examples/torch_ddp.py
# across hosts: an sbatch script (srun --mpi=pmix) and a hostfile run over TCP
EXTRA_DIST += examples/slurm/train.sbatch examples/hostfile/hostfile examples/hostfile/train.sh
