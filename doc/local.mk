# doc/: the design essays.
dist_doc_DATA += doc/recordio-format.md doc/performance.md doc/loader.md doc/trainer.md \
	doc/large-batch.md
