# man/: one page per tool.
dist_man_MANS += \
	man/recordio-pack.1 \
	man/recordio-cat.1 \
	man/recordio-verify.1 \
	man/recordio-index.1 \
	man/recordio-info.1 \
	man/recordio-bench.1 \
	man/recordio-train.1
