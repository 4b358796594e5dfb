# doc/: the design essays.
dist_doc_DATA += doc/recordio-format.md doc/performance.md doc/loader.md doc/trainer.md \
	doc/scaling.md doc/large-batch.md doc/embeddings.md doc/consistency.md doc/gpu.md \
	doc/remote.md doc/storage.md doc/parallelism.md doc/architecture.md
# the plots of doc/scaling.md, drawn by bench/scaling.sh
EXTRA_DIST += doc/scaling-allreduce.png doc/scaling-trainer.png doc/scaling-projection.png
# ... of doc/consistency.md (bench/consistency.sh) and doc/embeddings.md (bench/embeddings.sh)
EXTRA_DIST += doc/consistency-updates.png doc/consistency-seconds.png \
	doc/embeddings-crossover.png
# ... of doc/storage.md (bench/storage.sh)
EXTRA_DIST += doc/storage-loader.png doc/storage-trainer.png
# ... of doc/parallelism.md (bench/parallelism.sh)
EXTRA_DIST += doc/parallelism-bubble.png doc/parallelism-memory.png
