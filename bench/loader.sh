#!/bin/sh
# loader.sh — speed and memory of the loader (through recordio-bench) against
# this machine's own limits.
#
# Prints, in one run, side by side (never as pass/fail):
#   a. uncompressed shards of 4 KiB records (~1 GiB in 8 shards, with .idx),
#      CRC on, 2 workers, shuffle none: recordio-bench against `cat` of the
#      same files to /dev/null (aim: >= 0.8 of cat);
#   b. 100-byte records: records/s (aim: several million);
#   c. lz4 shards of the 4 KiB records against `lz4 -dc` of the same files
#      (aim: no slower);
#   d. --shuffle global against --shuffle none, 4 KiB records (aim: >= 0.7),
#      and both against the machine's own ceiling for random 4 KiB reads
#      (bench/randread.c: the same blocks in a random order, nothing else);
#   e. --shuffle buffer, 4 KiB records;
#   f. peak RSS against the memory budget of the options passed: shuffle
#      buffer + batch pool ((prefetch + hold) batches) + the workers' chunk
#      buffers + the record index (aim: RSS not far above the budget, and
#      independent of the data size);
#   g. io_uring against pread, in order and globally shuffled;
#   h. Fashion-MNIST decoded into float columns, as the trainer reads it;
#   i. the sweep: every shuffle mode at --batch 32 to 1024 (4 KiB records,
#      128 KiB to 4 MiB batches), with reads and with --map (views into
#      mappings of the shards), the loop's GB/s against `cat` (aim: >= 0.8),
#      and each one's peak RSS at --batch 256;
#   j. cold (page cache dropped before each run: echo 3 >
#      /proc/sys/vm/drop_caches, where this user may; skipped otherwise) and
#      warm, for every shuffle mode with io_uring, pread and O_DIRECT
#      (--direct), next to `cat` (aim: --direct no slower than buffered
#      reads cold).
# Page cache: each file set is read once right before it is timed, and the
# median of RUNS runs is reported (never the best: it hides slow runs).
# recordio-bench's own figures (the JSON's
# "seconds": from the first batch asked for to the last one released) are
# shown next to the whole process's wall time, which is what `cat` gets.
#
# Usage: bench/loader.sh [BUILD_DIR]   (default: build-bench/, built if
# missing, with --disable-shared: a libtool wrapper script in front of a
# shared-library build would add ~20 ms to every timed run)
# Env: RUNS (default 3), BENCH_DIR (scratch, default /tmp/recordio-bench-loader),
#      BENCH_GIB (size of the 4 KiB set in GiB, default 1), SMALL_RECORDS
#      (100-byte records, default 4194304), SECTIONS (letters to run, default
#      all: e.g. SECTIONS=ij for the sweep and the cold table only).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-bench
RUNS=${RUNS:-3}
W=${BENCH_DIR:-/tmp/recordio-bench-loader}
GIB=${BENCH_GIB:-1}
SMALL=${SMALL_RECORDS:-4194304}
SRC=$FM/train-images-idx3-ubyte.gz
RB="$B/recordio-bench"
WORKERS=2
rm -rf "$W" && mkdir -p "$W"
trap 'rm -rf "$W"' EXIT

# ---- helpers -------------------------------------------------------------

now() { date +%s.%N; }
# on LETTER: is this section to run (SECTIONS)?
on() { case ${SECTIONS:-abcdefghij} in *"$1"*) return 0 ;; esac; return 1; }
# median CMD [BEFORE]: the median wall seconds of RUNS runs of the shell
# command CMD, the command BEFORE (untimed) run before each
median() {
	i=0
	while [ $i -lt "$RUNS" ]; do
		[ -z "${2:-}" ] || $2
		s=$(now)
		sh -c "$1" >/dev/null 2>"$W/err" || { echo "bench: failed: $1" >&2; cat "$W/err" >&2; exit 1; }
		e=$(now)
		awk -v s="$s" -v e="$e" 'BEGIN {print e - s}'
		i=$((i + 1))
	done | sort -n | awk '{v[NR] = $1} END {printf "%.4f", v[int((NR + 1) / 2)]}'
}
# rb NAME ARGS...: recordio-bench --json ARGS, RUNS times; keeps in
# $W/NAME.json the JSON of the run with the median wall time and in
# $W/NAME.wall that wall time. Fails the script on an error.
rb() {
	name=$1; shift
	i=0
	: >"$W/$name.runs"
	while [ $i -lt "$RUNS" ]; do
		s=$(now)
		"$RB" --json "$@" >"$W/$name.one" 2>"$W/err" ||
			{ echo "bench: failed: recordio-bench $*" >&2; cat "$W/err" >&2; exit 1; }
		e=$(now)
		printf '%s ' "$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.4f", e - s}')" >>"$W/$name.runs"
		cat "$W/$name.one" >>"$W/$name.runs"
		i=$((i + 1))
	done
	sort -n "$W/$name.runs" | awk '{l[NR] = $0} END {print l[int((NR + 1) / 2)]}' >"$W/$name.median"
	cut -d' ' -f1 "$W/$name.median" >"$W/$name.wall"
	cut -d' ' -f2- "$W/$name.median" >"$W/$name.json"
}
# j NAME KEY: a value from $W/NAME.json
j() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$W/$1.json" "$2"; }
wall() { cat "$W/$1.wall"; }
bytes_of() { cat "$@" | wc -c | tr -d ' '; }
gbps() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.2f", b / t / 1e9}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
mrps() { awk -v r="$1" 'BEGIN {printf "%.2f", r / 1e6}'; }
mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1048576}'; }
warm() { cat "$@" >/dev/null; }
# row LABEL NAME BYTES: one line for recordio-bench run NAME over BYTES of
# files: whole-process wall time and GB/s, then the loop's own figures
row() {
	printf "   %-44s %7s s %6s GB/s | loop %6s GB/s payload, %6s M rec/s, wait %s%%\n" \
		"$1" "$(wall "$2")" "$(gbps "$3" "$(wall "$2")")" \
		"$(awk -v b="$(j "$2" bytes_per_s)" 'BEGIN {printf "%.2f", b / 1e9}')" \
		"$(mrps "$(j "$2" records_per_s)")" \
		"$(awk -v f="$(j "$2" wait_fraction)" 'BEGIN {printf "%.0f", f * 100}')"
}

echo "recordio loader benchmark, $(nproc) cores, $(date -u +%Y-%m-%d), $WORKERS workers, CRC on, median of $RUNS"
echo

# ---- data ------------------------------------------------------------------
make -C "$B" -s bench/mkshards >/dev/null
lines=$((GIB * 262144))
"$B/bench/mkshards" "$SRC" 4080 "$lines" 8 "$W/plain"
"$B/recordio-index" --quiet "$W"/plain-*.tfrecord
PLAIN=$(echo "$W"/plain-*.tfrecord)
# cached as a dataset read from storage is, not as just written: the pages
# writing left (small folios) dropped and read back (readahead's large
# folios, which --map maps with far fewer faults and TLB misses; reads do
# not care). dd's nocache flag is POSIX_FADV_DONTNEED on these files only.
sync $PLAIN
for f in $PLAIN; do dd if="$f" iflag=nocache count=0 status=none; done
cat $PLAIN >/dev/null
PLAIN_BYTES=$(bytes_of $PLAIN)
REC=4080
BATCH=256

# ---- a. uncompressed 4 KiB records against cat -----------------------------
if on a; then
echo "a. uncompressed: 8 shards with .idx, $lines records of $REC bytes (4 KiB framed), $(mib $PLAIN_BYTES) MiB; --batch $BATCH"
warm $PLAIN
t_cat=$(median "cat $PLAIN > /dev/null")
rb none --workers $WORKERS --batch $BATCH "$W/plain"
printf "   %-44s %7s s %6s GB/s\n" "cat > /dev/null" "$t_cat" "$(gbps $PLAIN_BYTES $t_cat)"
row "recordio-bench --shuffle none" none "$PLAIN_BYTES"
echo "   ratio to cat: whole process $(ratio "$t_cat" "$(wall none)"), loop (file bytes / JSON seconds) $(ratio "$(gbps $PLAIN_BYTES "$(j none seconds)")" "$(gbps $PLAIN_BYTES $t_cat)")  (aim >= 0.80)"
rb none1 --workers 1 --batch $BATCH "$W/plain"
row "recordio-bench --shuffle none --workers 1" none1 "$PLAIN_BYTES"
rb nocrc --workers $WORKERS --batch $BATCH --no-crc "$W/plain"
row "recordio-bench --shuffle none --no-crc" nocrc "$PLAIN_BYTES"
echo
fi

# ---- b. 100-byte records ------------------------------------------------------
if on b; then
"$B/bench/mkshards" "$SRC" 100 "$SMALL" 8 "$W/small"
"$B/recordio-index" --quiet "$W"/small-*.tfrecord
SMALLF=$(echo "$W"/small-*.tfrecord)
SMALL_BYTES=$(bytes_of $SMALLF)
echo "b. small records: 8 shards with .idx, $SMALL records of 100 bytes (116 framed), $(mib $SMALL_BYTES) MiB"
warm $SMALLF
t_scat=$(median "cat $SMALLF > /dev/null")
printf "   %-44s %7s s %6s GB/s\n" "cat > /dev/null" "$t_scat" "$(gbps $SMALL_BYTES $t_scat)"
for b in 256 1024 4096; do
	rb small$b --workers $WORKERS --batch $b "$W/small"
	row "recordio-bench --batch $b" small$b "$SMALL_BYTES"
done
echo "   records/s (loop, --batch 1024): $(mrps "$(j small1024 records_per_s)") M; whole process: $(mrps "$(awk -v n=$SMALL -v t="$(wall small1024)" 'BEGIN {print n / t}')") M  (aim: several M)"
rm -f $SMALLF "$W"/small-*.idx
echo
fi

# ---- c. lz4 ------------------------------------------------------------------
if on c; then
"$B/recordio-pack" --quiet --from tfrecord --output "$W/lz" --shards 8 --compression lz4 $PLAIN >/dev/null
LZ=$(echo "$W"/lz-*.tfrecord.lz4)
LZ_BYTES=$(bytes_of $LZ)
echo "c. lz4: 8 shards, $(mib $LZ_BYTES) MiB compressed (ratio $(ratio $PLAIN_BYTES $LZ_BYTES)), figures in uncompressed GB/s"
warm $LZ
t_lz=$(median "for f in $LZ; do lz4 -dc \$f; done > /dev/null")
t_lzp=$(median "printf '%s\n' $LZ | xargs -P $WORKERS -n 1 lz4 -dc > /dev/null")
rb lz4 --workers $WORKERS --batch $BATCH "$W/lz"
printf "   %-44s %7s s %6s GB/s\n" "lz4 -dc (one after another)" "$t_lz" "$(gbps $PLAIN_BYTES $t_lz)"
printf "   %-44s %7s s %6s GB/s\n" "lz4 -dc (xargs -P $WORKERS)" "$t_lzp" "$(gbps $PLAIN_BYTES $t_lzp)"
row "recordio-bench, lz4 shards" lz4 "$PLAIN_BYTES"
echo "   ratio to lz4 -dc: $(ratio "$t_lz" "$(wall lz4)"), to parallel lz4 -dc: $(ratio "$t_lzp" "$(wall lz4)")  (aim >= 1)"
rb lz4buf --workers $WORKERS --batch $BATCH --shuffle buffer --seed 1 "$W/lz"
row "recordio-bench, lz4, --shuffle buffer" lz4buf "$PLAIN_BYTES"
rm -f $LZ "$W"/lz-*.idx
echo
fi

# ---- d. global shuffle -----------------------------------------------------------
if on d; then
echo "d. --shuffle global against --shuffle none, 4 KiB records"
warm $PLAIN
rb global --workers $WORKERS --batch $BATCH --shuffle global --seed 1 "$W/plain"
rb none --workers $WORKERS --batch $BATCH "$W/plain"
row "recordio-bench --shuffle none" none "$PLAIN_BYTES"
row "recordio-bench --shuffle global" global "$PLAIN_BYTES"
echo "   ratio global / none: whole process $(ratio "$(wall none)" "$(wall global)"), loop $(ratio "$(j global records_per_s)" "$(j none records_per_s)")  (aim >= 0.70)"
# the machine's own ceiling for random 4 KiB reads: every block of the files
# in a random order, $WORKERS threads, nothing else done (bench/randread.c)
make -C "$B" -s bench/randread >/dev/null
for io in uring pread; do
	i=0
	while [ $i -lt "$RUNS" ]; do "$B/bench/randread" $io $WORKERS 4096 $PLAIN; i=$((i + 1)); done |
		sort -k3 -n | tail -1 >"$W/rand-$io"
done
r_uring=$(cut -d' ' -f3 "$W/rand-uring")
printf "   %-44s %7s s %6s GB/s | %6s M reads/s\n" "random 4 KiB reads alone, io_uring" \
	"$(cut -d' ' -f2 "$W/rand-uring")" "$(cut -d' ' -f4 "$W/rand-uring")" "$(mrps "$r_uring")"
printf "   %-44s %7s s %6s GB/s | %6s M reads/s\n" "random 4 KiB reads alone, pread" \
	"$(cut -d' ' -f2 "$W/rand-pread")" "$(cut -d' ' -f4 "$W/rand-pread")" \
	"$(mrps "$(cut -d' ' -f3 "$W/rand-pread")")"
echo "   global loop / random reads alone (io_uring): $(ratio "$(j global records_per_s)" "$r_uring");" \
	"random reads alone / the none loop: $(ratio "$r_uring" "$(j none records_per_s)")"
echo
fi

# ---- e. buffer shuffle ---------------------------------------------------------
if on e; then
[ -f "$W/none.json" ] || rb none --workers $WORKERS --batch $BATCH "$W/plain"
SB=10000
echo "e. --shuffle buffer (--shuffle-buffer $SB, --interleave 4), 4 KiB records"
rb buffer --workers $WORKERS --batch $BATCH --shuffle buffer --seed 1 --shuffle-buffer $SB --interleave 4 "$W/plain"
row "recordio-bench --shuffle buffer" buffer "$PLAIN_BYTES"
echo "   ratio buffer / none: whole process $(ratio "$(wall none)" "$(wall buffer)"), loop $(ratio "$(j buffer records_per_s)" "$(j none records_per_s)")"
echo
fi

# ---- f. memory -------------------------------------------------------------------
if on f; then
# budget: shuffle buffer + (prefetch + hold) batches + the workers' chunk
# buffers (loader.h's defaults: hold 2, chunk_bytes 1 MiB) + the index
# (8 bytes per 64 records; 16 bytes per record with global shuffling)
PREFETCH=4
HOLD=2
CHUNK=1048576
budget() { # SHUFFLE_RECORDS BATCH PREFETCH INDEX_BYTES
	echo $(($1 * REC + ($3 + HOLD) * $2 * REC + WORKERS * CHUNK + $4))
}
echo "f. peak RSS against the budget of the options: shuffle buffer + (prefetch + hold $HOLD) batches"
echo "   + $WORKERS x 1 MiB chunks + index; 4 KiB records"
printf "   %-44s %10s %10s %10s\n" "run" "budget MiB" "RSS MiB" "RSS/budget"
mem_row() { # LABEL NAME BUDGET
	printf "   %-44s %10s %10s %10s\n" "$1" "$(mib "$3")" "$(mib "$(j "$2" peak_rss_bytes)")" \
		"$(ratio "$(j "$2" peak_rss_bytes)" "$3")"
}
rb memnone --workers $WORKERS --batch $BATCH --prefetch $PREFETCH "$W/plain"
mem_row "--shuffle none --batch $BATCH --prefetch $PREFETCH" memnone \
	"$(budget 0 $BATCH $PREFETCH $((lines / 8)))"
rb memglobal --workers $WORKERS --batch $BATCH --prefetch $PREFETCH --shuffle global --seed 1 "$W/plain"
mem_row "--shuffle global --batch $BATCH --prefetch $PREFETCH" memglobal \
	"$(budget 0 $BATCH $PREFETCH $((lines * 16)))"
for sb in 10000 50000; do
	rb membuf$sb --workers $WORKERS --batch $BATCH --prefetch $PREFETCH --shuffle buffer --seed 1 \
		--shuffle-buffer $sb "$W/plain"
	mem_row "--shuffle buffer --shuffle-buffer $sb" membuf$sb \
		"$(budget $sb $BATCH $PREFETCH $((lines / 8)))"
done
rb membig --workers $WORKERS --batch 1024 --prefetch 16 "$W/plain"
mem_row "--shuffle none --batch 1024 --prefetch 16" membig "$(budget 0 1024 16 $((lines / 8)))"
# the process with the smallest loader: one record, one worker, one batch
head -c 4096 "$W/plain-00000-of-00008.tfrecord" >"$W/tiny.tfrecord"
rb tiny --batch 1 --workers 1 --prefetch 1 "$W/tiny.tfrecord"
echo "   (the process over one record, --batch 1 --workers 1 --prefetch 1: $(mib "$(j tiny peak_rss_bytes)") MiB;"
echo "   the 4 KiB set is $(mib $PLAIN_BYTES) MiB: the RSS does not follow the data size)"
echo
fi

# ---- g. io_uring against pread ---------------------------------------------------
if on g; then
[ -f "$W/none.json" ] || rb none --workers $WORKERS --batch $BATCH "$W/plain"
echo "g. io_uring against pread, 4 KiB records"
if "$RB" --json --io uring --batch $BATCH "$W/plain-00000-of-00008.tfrecord" >/dev/null 2>"$W/err"; then
	for mode in none global; do
		rb uring-$mode --workers $WORKERS --batch $BATCH --io uring --shuffle $mode --seed 1 "$W/plain"
		rb pread-$mode --workers $WORKERS --batch $BATCH --io pread --shuffle $mode --seed 1 "$W/plain"
		row "--io uring --shuffle $mode" uring-$mode "$PLAIN_BYTES"
		row "--io pread --shuffle $mode" pread-$mode "$PLAIN_BYTES"
		echo "   ratio uring / pread (--shuffle $mode): whole process $(ratio "$(wall pread-$mode)" "$(wall uring-$mode)"), loop $(ratio "$(j uring-$mode records_per_s)" "$(j pread-$mode records_per_s)")"
	done
else
	echo "   io_uring is not available here: $(cat "$W/err")"
	rb pread-none --workers $WORKERS --batch $BATCH --io pread "$W/plain"
	row "--io pread --shuffle none" pread-none "$PLAIN_BYTES"
fi
echo "   (default backend: $(j none io))"
echo
fi

# ---- h. what a trainer reads: Fashion-MNIST decoded into columns -------------------
if on h; then
pack_fashion_mnist train "$W/fm"
DEC=image:f32:784:0.00392157,label:i64:1
echo "h. Fashion-MNIST train, 4 lz4 shards, decoded ($DEC), --batch 128, 10 epochs;"
echo "   --cache 1G: decompressed and decoded once into packed rows (the trainer's default)"
warm "$W"/fm-*
for mode in none buffer; do
	for cache in 0 1G; do
		rb fm-$mode-$cache --workers $WORKERS --batch 128 --epochs 10 --shuffle $mode --seed 1 \
			--cache $cache --decode $DEC "$W/fm"
		printf "   %-44s %7s M records/s, wait %s%%\n" "--shuffle $mode --cache $cache" \
			"$(mrps "$(j fm-$mode-$cache records_per_s)")" \
			"$(awk -v f="$(j fm-$mode-$cache wait_fraction)" 'BEGIN {printf "%.0f", f * 100}')"
	done
done
echo "   (a 784-256-128-10 training step is ~1 MFLOP a sample: recordio-train takes ~360k"
echo "   samples/s on both cores, doc/performance.md; the loader delivers several times that)"
fi

# ---- i. the sweep: every shuffle mode, 32 to 1024 records a batch -----------------
if on i; then
echo "i. every shuffle mode against cat, 4 KiB records, --batch 32 to 1024 (loop GB/s, and its"
echo "   ratio to cat's; aim >= 0.80), page cache warm"
warm $PLAIN
t_cat=$(median "cat $PLAIN > /dev/null")
printf "   %-10s %6s GB/s (whole process)\n" "cat" "$(gbps $PLAIN_BYTES $t_cat)"
MODES="none buffer global buffer+map global+map" # --map: no effect in order
printf "   %-10s" "--batch"
for mode in $MODES; do printf " %16s" "$mode"; done
echo
for b in 32 64 128 256 512 1024; do
	printf "   %-10s" "$b"
	for mode in $MODES; do
		case $mode in
		*+map) rb sweep-$mode-$b --workers $WORKERS --batch $b --shuffle "${mode%+map}" --map --seed 1 "$W/plain" ;;
		*) rb sweep-$mode-$b --workers $WORKERS --batch $b --shuffle $mode --seed 1 "$W/plain" ;;
		esac
		g=$(gbps $PLAIN_BYTES "$(j sweep-$mode-$b seconds)")
		printf " %6s GB/s %4s" "$g" "$(ratio "$g" "$(gbps $PLAIN_BYTES $t_cat)")"
	done
	echo
done
# peak RSS: a mapping's pages count in it once touched (clean page-cache
# pages the kernel can reclaim, shared with every process that reads the
# files), up to the shards' size
printf "   %-10s" "RSS (256)"
for mode in $MODES; do printf " %12s MiB" "$(mib "$(j sweep-$mode-256 peak_rss_bytes)")"; done
echo
echo "   (+map: --map, the shards mapped: batches are views into the mappings, no read"
echo "   and no copy per record; peak RSS at --batch 256 includes the mapped pages;"
echo "   in shard order --map changes nothing: reads are faster there)"
# the epochs after the first: a mapping's pages are faulted in during the
# first epoch only; (seconds of 4 epochs - seconds of 1) / 3 per epoch
printf "   %-10s %16s %16s   (epochs 2-4, --batch 256)\n" "" "global" "global+map"
printf "   %-10s" "later"
for m in "" --map; do
	rb later1$m --workers $WORKERS --batch 256 --shuffle global $m --seed 1 "$W/plain"
	rb later4$m --workers $WORKERS --batch 256 --shuffle global $m --seed 1 --epochs 4 "$W/plain"
	t=$(awk -v a="$(j later1$m seconds)" -v b="$(j later4$m seconds)" 'BEGIN {print (b - a) / 3}')
	g=$(gbps $PLAIN_BYTES "$t")
	printf " %6s GB/s %4s" "$g" "$(ratio "$g" "$(gbps $PLAIN_BYTES $t_cat)")"
done
echo
echo
fi

# ---- j. cold against warm, every mode -------------------------------------------
if on j; then
echo "j. cold (page cache dropped before each run) and warm, --batch $BATCH, 4 KiB records,"
echo "   whole-process GB/s"
if [ -w /proc/sys/vm/drop_caches ]; then
	drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
	# the median of RUNS cold runs of a command (its wall time)
	median_cold() { median "$1" drop; }
	# cold_warm LABEL CMD: a line with CMD's GB/s cold and warm (medians)
	cold_warm() {
		c=$(median_cold "$2")
		warm $PLAIN
		w=$(median "$2")
		printf "   %-44s %10s %10s\n" "$1" "$(gbps $PLAIN_BYTES "$c")" "$(gbps $PLAIN_BYTES "$w")"
	}
	printf "   %-44s %10s %10s\n" "run" "cold GB/s" "warm GB/s"
	cold_warm "cat > /dev/null" "cat $PLAIN > /dev/null"
	ios="pread direct-pread"
	"$RB" --json --io uring --batch 1 "$W/plain-00000-of-00008.tfrecord" >/dev/null 2>&1 &&
		ios="uring pread direct-uring direct-pread"
	for mode in none buffer global; do
		for io in $ios; do
			case $io in
			direct-*) io="--direct --io ${io#direct-}" ;;
			*) io="--io $io" ;;
			esac
			cold_warm "--shuffle $mode $io" \
				"$RB --workers $WORKERS --batch $BATCH --shuffle $mode --seed 1 $io $W/plain"
		done
	done
	# the ceilings of random 4 KiB reads (the records' own blocks, in a
	# random order, nothing else done; bench/randread.c), cold: what the
	# global shuffle can reach from this device
	make -C "$B" -s bench/randread >/dev/null
	for io in $ios; do
		cold_warm "random 4 KiB reads alone, $io" "$B/bench/randread $io $WORKERS 4096 $PLAIN"
	done
	echo "   (random reads alone: $WORKERS threads, io_uring at depth 32, or 128 under O_DIRECT as"
	echo "   the loader's --direct; cold, O_DIRECT reads are bounded by the device's IOPS, and"
	echo "   buffered ones gain only where the kernel's readahead brought a later record in)"
else
	echo "   skipped: /proc/sys/vm/drop_caches is not writable here (run as root)"
fi
echo
fi
