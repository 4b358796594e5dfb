# doc/: the design essays.
dist_doc_DATA += doc/recordio-format.md doc/performance.md doc/loader.md doc/trainer.md \
	doc/scaling.md doc/large-batch.md doc/embeddings.md
# the plots of doc/scaling.md, drawn by bench/scaling.sh
EXTRA_DIST += doc/scaling-allreduce.png doc/scaling-trainer.png doc/scaling-projection.png
