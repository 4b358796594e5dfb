# deps.sh — sourced by demo.sh and test.sh: installs, with apt-get, the Debian
# packages the build, the tests and the demo need, when any is missing.
RIO_PACKAGES="autoconf automake libtool pkg-config make gcc
	zlib1g-dev liblz4-dev liburing-dev libisal-dev libcunit1-dev
	libopenmpi-dev openmpi-bin libopenblas-dev
	lz4 gzip python3 dataset-fashion-mnist"
# what only the test suite needs: clang and its libFuzzer runtime, for the
# fuzzing smoke (scripts/fuzz.sh); Python's headers, venv, setuptools,
# NumPy and pytest for the Python package's tests (python/tests; its torch
# tests run where python3-torch is installed, and skip otherwise)
RIO_TEST_PACKAGES="clang libclang-rt-14-dev
	python3-dev python3-venv python3-setuptools python3-wheel python3-numpy python3-pytest"

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

# rio_build DIR [CONFIGURE ARGS...]: an out-of-tree build in DIR.
rio_build() {
	dir=$1; shift
	[ -x "$RIO_TOP/configure" ] || (cd "$RIO_TOP" && ./autogen.sh >/dev/null 2>&1) || return 1
	mkdir -p "$dir" && cd "$dir" || return 1
	if [ ! -f Makefile ]; then
		"$RIO_TOP/configure" "$@" >configure.out 2>&1 || { cat configure.out; return 1; }
		sed -n '/configuration summary/,$p' configure.out
	fi
	make -j"$(nproc)" >make.out 2>&1 || { tail -40 make.out; return 1; }
}
