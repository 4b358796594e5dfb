#!/bin/sh
# format.sh — speed of the format tools against this machine's own limits.
#
# Prints, in one run, side by side (never as pass/fail):
#   1. recordio-verify on >= 1 GiB of uncompressed shards of 4 KiB records
#      against `cat` of the same files to /dev/null (aim: >= 0.8 of cat);
#   2. reading lz4 and gzip shards (recordio-verify: decompress, frame, CRC)
#      against `lz4 -dc` / `zcat` of the same files (aim: no slower);
#   3. recordio-pack of Fashion-MNIST train: records/s and MB/s.
# Page cache: each file set is read once right before it is timed, and the
# median of RUNS runs is reported (the machines are shared and noisy).
#
# Usage: bench/format.sh [BUILD_DIR]   (default: build-bench/, built if
# missing, with --disable-shared: a libtool wrapper script in front of a
# shared-library build would add ~20 ms to every timed run)
# Env: RUNS (default 5), BENCH_DIR (scratch, default /tmp/recordio-bench),
#      BENCH_GIB (uncompressed set size in GiB, default 1).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-verify
RUNS=${RUNS:-5}
W=${BENCH_DIR:-/tmp/recordio-bench}
GIB=${BENCH_GIB:-1}
rm -rf "$W" && mkdir -p "$W"
trap 'rm -rf "$W"' EXIT

# median wall seconds of RUNS runs of a shell command
median() {
	i=0
	while [ $i -lt "$RUNS" ]; do
		s=$(date +%s.%N)
		sh -c "$1" >/dev/null 2>"$W/err" || { echo "bench: failed: $1" >&2; cat "$W/err" >&2; exit 1; }
		e=$(date +%s.%N)
		awk -v s="$s" -v e="$e" 'BEGIN {print e - s}'
		i=$((i + 1))
	done | sort -n | awk '{a[NR]=$1} END {printf "%.4f", a[int((NR+1)/2)]}'
}
bytes_of() { cat "$@" | wc -c; }
gbps() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.2f", b / t / 1e9}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
warm() { cat "$@" >/dev/null; }

echo "recordio format benchmark, $(nproc) cores, $(date -u +%Y-%m-%d)"
echo

# ---- data: 4 KiB records cut from Fashion-MNIST pixels (realistic
# compressibility: LZ4 ~1.5x), 8 shards ---------------------------------------
lines=$((GIB * 262144))
make -C "$B" -s bench/mkshards >/dev/null
"$B/bench/mkshards" /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz 4080 "$lines" 8 "$W/plain"
PLAIN=$(echo "$W"/plain-*.tfrecord)
PLAIN_BYTES=$(bytes_of $PLAIN)
rec_bytes=$((4080 + 16))
echo "1. uncompressed: $(echo $PLAIN | wc -w) shards, $lines records of $rec_bytes bytes framed, $((PLAIN_BYTES / 1048576)) MiB"
warm $PLAIN
t_cat=$(median "cat $PLAIN > /dev/null")
t_ver=$(median "'$B/recordio-verify' --quiet $PLAIN")
t_ver1=$(median "'$B/recordio-verify' --quiet --threads 1 $PLAIN")
printf "   %-40s %8s s %7s GB/s\n" "cat > /dev/null" "$t_cat" "$(gbps $PLAIN_BYTES $t_cat)"
printf "   %-40s %8s s %7s GB/s   ratio to cat %s  (aim >= 0.80)\n" "recordio-verify (all cores)" "$t_ver" "$(gbps $PLAIN_BYTES $t_ver)" "$(ratio $t_cat $t_ver)"
printf "   %-40s %8s s %7s GB/s   ratio to cat %s\n" "recordio-verify --threads 1" "$t_ver1" "$(gbps $PLAIN_BYTES $t_ver1)" "$(ratio $t_cat $t_ver1)"
echo

# ---- lz4 -------------------------------------------------------------------
"$B/recordio-pack" --quiet --from tfrecord --output "$W/lz" --shards 8 --compression lz4 $PLAIN >/dev/null
LZ=$(echo "$W"/lz-*.tfrecord.lz4)
LZ_BYTES=$(bytes_of $LZ)
echo "2a. lz4: $(echo $LZ | wc -w) shards, $((LZ_BYTES / 1048576)) MiB compressed (ratio $(ratio $PLAIN_BYTES $LZ_BYTES)), figures in uncompressed GB/s"
warm $LZ
t_lz=$(median "for f in $LZ; do lz4 -dc \$f; done > /dev/null")
t_lzp=$(median "printf '%s\n' $LZ | xargs -P $(nproc) -n 1 lz4 -dc > /dev/null")
t_vlz=$(median "'$B/recordio-verify' --quiet $LZ")
t_vlz1=$(median "'$B/recordio-verify' --quiet --threads 1 $LZ")
printf "   %-40s %8s s %7s GB/s\n" "lz4 -dc (one after another)" "$t_lz" "$(gbps $PLAIN_BYTES $t_lz)"
printf "   %-40s %8s s %7s GB/s\n" "lz4 -dc (xargs -P $(nproc))" "$t_lzp" "$(gbps $PLAIN_BYTES $t_lzp)"
printf "   %-40s %8s s %7s GB/s   ratio to lz4 -dc %s, to parallel lz4 -dc %s  (aim >= 1)\n" "recordio-verify (all cores)" "$t_vlz" "$(gbps $PLAIN_BYTES $t_vlz)" "$(ratio $t_lz $t_vlz)" "$(ratio $t_lzp $t_vlz)"
printf "   %-40s %8s s %7s GB/s   ratio to lz4 -dc %s\n" "recordio-verify --threads 1" "$t_vlz1" "$(gbps $PLAIN_BYTES $t_vlz1)" "$(ratio $t_lz $t_vlz1)"
echo

# ---- gzip (a quarter of the set: inflate is ~0.3 GB/s) ---------------------
SUB=$(echo $PLAIN | cut -d' ' -f1-2)
SUB_BYTES=$(bytes_of $SUB)
"$B/recordio-pack" --quiet --from tfrecord --output "$W/gz" --shards 2 --compression gzip $SUB >/dev/null
GZ=$(echo "$W"/gz-*.tfrecord.gz)
GZ_BYTES=$(bytes_of $GZ)
echo "2b. gzip: $(echo $GZ | wc -w) shards, $((GZ_BYTES / 1048576)) MiB compressed (ratio $(ratio $SUB_BYTES $GZ_BYTES)), figures in uncompressed GB/s"
warm $GZ
t_z=$(median "zcat $GZ > /dev/null")
t_vz1=$(median "'$B/recordio-verify' --quiet --threads 1 $GZ")
t_vz=$(median "'$B/recordio-verify' --quiet $GZ")
t_vzz=$(median "RIO_INFLATE=zlib '$B/recordio-verify' --quiet --threads 1 $GZ")
printf "   %-40s %8s s %7s GB/s\n" "zcat" "$t_z" "$(gbps $SUB_BYTES $t_z)"
printf "   %-40s %8s s %7s GB/s   ratio to zcat %s  (aim >= 1)\n" "recordio-verify --threads 1 (ISA-L)" "$t_vz1" "$(gbps $SUB_BYTES $t_vz1)" "$(ratio $t_z $t_vz1)"
printf "   %-40s %8s s %7s GB/s   ratio to zcat %s\n" "recordio-verify (all cores, ISA-L)" "$t_vz" "$(gbps $SUB_BYTES $t_vz)" "$(ratio $t_z $t_vz)"
printf "   %-40s %8s s %7s GB/s   ratio to zcat %s\n" "recordio-verify --threads 1, zlib inflate" "$t_vzz" "$(gbps $SUB_BYTES $t_vzz)" "$(ratio $t_z $t_vzz)"
echo

# ---- pack Fashion-MNIST train ------------------------------------------------
D=/usr/share/datasets/fashion-mnist
echo "3. recordio-pack --from idx, Fashion-MNIST train (60000 records, 784-byte images)"
for c in none lz4 gzip; do
	warm "$D/train-images-idx3-ubyte.gz" "$D/train-labels-idx1-ubyte.gz"
	t=$(median "rm -f $W/fm-*; '$B/recordio-pack' --quiet --from idx --images $D/train-images-idx3-ubyte.gz --labels $D/train-labels-idx1-ubyte.gz --output $W/fm --shards 4 --compression $c")
	ob=$(cat "$W"/fm-*.idx | awk '{s += $2} END {print s}') # framed bytes written
	awk -v c="$c" -v t="$t" -v b="$ob" 'BEGIN {printf "   %-12s %8s s  %9.0f records/s  %7.1f MB/s of records\n", c, t, 60000 / t, b / t / 1e6}'
done
