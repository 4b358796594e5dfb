# python/: the recordio Python package (a CPython extension over the
# library's sources, built by pip, not by make); shipped in the tarball.
EXTRA_DIST += python/.gitignore python/pyproject.toml python/setup.py python/local.mk \
	python/src/core.h python/src/module.c python/src/reader.c python/src/example.c \
	python/src/pyloader.c python/src/dlpack.c \
	python/recordio/__init__.py python/recordio/__init__.pyi python/recordio/_core.pyi \
	python/recordio/_errors.py python/recordio/_example.py python/recordio/_io.py \
	python/recordio/_loader.py python/recordio/_remote.py python/recordio/_size.py python/recordio/py.typed python/recordio/torch.py \
	python/recordio/torch.pyi \
	python/tests/conftest.py python/tests/test_io.py python/tests/test_loader.py \
	python/tests/test_torch.py python/tests/test_remote.py python/tests/test_s3.py \
	python/tests/test_bf16.py
