# bench_lib.sh — sourced by the bench/*.sh scripts (after `set -eu`): what
# they share.
#   RIO_TOP      the source tree, with scripts/deps.sh's helpers loaded;
#   B            the build directory: the script's $1, default build-bench/;
#   FM           Fashion-MNIST's IDX files (FASHION_MNIST, default Debian's
#                /usr/share/datasets/fashion-mnist);
#   bench_build PROGRAM    builds B unless it holds PROGRAM, with
#                --disable-shared (a libtool wrapper script in front of a
#                shared-library build would add ~20 ms to every timed run);
#   pack_fashion_mnist SPLIT PREFIX    SPLIT (train: 4 lz4 shards; test:
#                the t10k set, 2 lz4 shards) packed as PREFIX-*, unless the
#                last shard is there already;
#   mpi_root_env / mpi_local_env    Open MPI allowed to run as root; local
#                adds oversubscription and shared memory (all ranks on this
#                host).
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
B=${1:-$RIO_TOP/build-bench}
FM=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}

bench_build() {
	[ -x "$B/$1" ] || rio_build "$B" --disable-shared CFLAGS="-O2 -g"
}

pack_fashion_mnist() {
	case $1 in
	train) _pf_idx=train _pf_n=4 ;;
	test) _pf_idx=t10k _pf_n=2 ;;
	*) echo "pack_fashion_mnist: no split $1" >&2; return 1 ;;
	esac
	[ -f "$(printf '%s-%05d-of-%05d.tfrecord.lz4' "$2" $((_pf_n - 1)) $_pf_n)" ] ||
		"$B/recordio-pack" -q -f --from idx --images "$FM/$_pf_idx-images-idx3-ubyte.gz" \
			--labels "$FM/$_pf_idx-labels-idx1-ubyte.gz" --output "$2" --shards $_pf_n \
			--compression lz4
}

mpi_root_env() {
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

mpi_local_env() {
	mpi_root_env
	export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
}
