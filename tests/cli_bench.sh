#!/bin/sh
# cli_bench.sh — recordio-bench, and through it the loader's promises that a
# shell can see: --help and the exit codes of usage, missing-data and damage
# errors; --json parses and counts every record; --dump-order lists every
# delivered record once, in shard order without shuffling; a global shuffle
# is a permutation that depends on the seed (and the epoch) only; the order
# is the same whatever the workers or the I/O backend; the ranks of a world
# together read every record exactly once; --decode of Fashion-MNIST-like and
# tfx-mnist Examples, and a spec naming a missing feature; --cache gives the
# order of the files and says what it holds; --direct and --map deliver the
# same records in the same order as the default, and open with O_DIRECT and
# map the shards (their system calls, under strace).
#
# Data: tfx-mnist (written by TensorFlow, 1000 Examples) repacked by
# recordio-pack into 4 shards of 250 with .idx sidecars, and a small
# Fashion-MNIST-like IDX pair (made here) packed with --from idx.
. "$(dirname "$0")/cli_lib.sh"

B="$BIN/recordio-bench"
MNIST="$TESTDATA/tfx-mnist.tfrecord"
for p in "$B" "$PACK"; do
	if [ ! -x "$p" ]; then
		echo "$(basename "$0"): $p not built" >&2
		exit 77
	fi
done
if ! command -v python3 >/dev/null 2>&1; then
	echo "$(basename "$0"): SKIP: python3 not found (needed to read --json)"
	rm -rf "$T"
	exit 77
fi
cd "$T" || exit 1

# ---- helpers -----------------------------------------------------------------

# json_get KEY: the value of KEY in the JSON object in $T/out (fails the
# parse check, and prints PARSE-ERROR, when it is not one JSON object).
json_get() {
	python3 -c 'import json,sys; v = json.load(sys.stdin)[sys.argv[1]]; print(v)' "$1" <"$T/out" 2>/dev/null ||
		echo PARSE-ERROR
}

# bench_dump NAME ARGS...: recordio-bench --dump-order NAME.order ARGS,
# expected to succeed.
bench_dump() {
	name=$1; shift
	expect_exit 0 "$B" --dump-order "$name.order" "$@"
}

# same A B WHAT: files A and B are identical.
same() {
	if cmp -s "$1" "$2"; then pass; else fail "$3: $1 and $2 differ"; fi
}
# differ A B WHAT
differ() {
	if cmp -s "$1" "$2"; then fail "$3: $1 and $2 are identical"; else pass; fi
}
# same_set A B WHAT: A and B hold the same lines, in any order.
same_set() {
	sort "$1" >"$1.sorted"
	sort "$2" >"$2.sorted"
	same "$1.sorted" "$2.sorted" "$3"
}

# flip FILE OFFSET: inverts the byte at OFFSET.
flip() {
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# ---- data ----------------------------------------------------------------------

mkdir m fm bad
expect_exit 0 "$PACK" --quiet --from tfrecord --output m/mn --shards 4 "$MNIST"
M=m/mn
N=1000
# the order of --shuffle none: shard by shard, record by record
for s in 0 1 2 3; do
	awk -v s=$s '{print s, NR - 1}' "m/mn-0000$s-of-00004.tfrecord.idx"
done >shard-order
expect_lines $N shard-order "the packed shards hold every tfx-mnist record"

# Fashion-MNIST-like IDX files: 300 images of 28x28 bytes, labels 0..9
python3 - <<'EOF'
import struct
n = 300
with open("img.idx", "wb") as f:
    f.write(struct.pack(">IIII", 0x803, n, 28, 28))
    f.write(bytes((i * 7 + j) % 256 for i in range(n) for j in range(784)))
with open("lab.idx", "wb") as f:
    f.write(struct.pack(">II", 0x801, n))
    f.write(bytes(i % 10 for i in range(n)))
EOF
expect_exit 0 "$PACK" --quiet --from idx --images img.idx --labels lab.idx --output fm/fm --shards 3

# ---- usage ----------------------------------------------------------------------

expect_exit 0 "$B" --help
expect_match '^Usage: recordio-bench' "$T/out" "--help on stdout"
expect_lines 0 "$T/err" "--help: nothing on stderr"
expect_exit 2 "$B"
expect_match "Try 'recordio-bench --help'" "$T/err" "no SHARDS"
expect_exit 2 "$B" --bogus $M
expect_match "bogus" "$T/err" "unknown option named"
expect_exit 2 "$B" --shuffle sideways $M
expect_match "sideways" "$T/err" "bad --shuffle value named"
expect_exit 2 "$B" --io nvme $M
expect_match "nvme" "$T/err" "bad --io value named"
expect_exit 2 "$B" --sharding rows $M
expect_match "rows" "$T/err" "bad --sharding value named"
expect_exit 2 "$B" --batch 0 $M
expect_match "--batch" "$T/err" "--batch 0 named"
expect_exit 2 "$B" --workers many $M
expect_match "--workers.*many" "$T/err" "bad --workers named"
expect_exit 2 "$B" --epochs -1 $M
expect_exit 2 "$B" --seed 1x $M
expect_exit 2 "$B" --read-size 1Q $M
expect_exit 2 "$B" --prefetch 0 $M
expect_exit 2 "$B" --rank 3 --world 3 $M
expect_match "--rank" "$T/err" "rank outside the world named"
# the loader's own limits (RIO_LOADER_MAX_* in loader.h): each limit
# accepted, one past it refused as a usage error naming the option (the
# loader refuses the same values: test_loader's option limits)
expect_exit 0 "$B" --batch 16777216 --prefetch 1 $M
expect_exit 0 "$B" --workers 256 $M
expect_exit 0 "$B" --prefetch 4096 $M
expect_exit 0 "$B" --shuffle buffer --shuffle-buffer 1073741824 --interleave 256 $M
expect_exit 0 "$B" --queue-depth 4096 $M
expect_exit 0 "$B" --read-size 1G $M
expect_exit 0 "$B" --read-size 4K $M
expect_exit 0 "$B" --rank 16777215 --world 16777216 $M
for past in "--batch 16777217" "--workers 257" "--prefetch 4097" "--shuffle-buffer 1073741825" \
	"--interleave 257" "--queue-depth 4097" "--read-size 1073741825" "--read-size 4095" \
	"--world 16777217"; do
	# shellcheck disable=SC2086
	expect_exit 2 "$B" $past $M
	expect_match "^recordio-bench: ${past% *}: expected" "$T/err" "$past refused, named"
done
expect_exit 2 "$B" --rank 1 $M
expect_match "--world" "$T/err" "--rank without --world"
expect_exit 2 "$B" --decode image:u16:784 fm/fm
expect_match "u16" "$T/err" "bad --decode type named"
expect_exit 2 "$B" --decode image fm/fm
expect_exit 2 "$B" $M ""
expect_match "empty" "$T/err" "an empty SHARDS argument"

# ---- missing data (exit 1, the name in the message) -------------------------
expect_exit 1 "$B" "$T/missing.tfrecord"
expect_match "missing\.tfrecord" "$T/err" "missing shard named"
expect_lines 1 "$T/err" "missing shard: one line"
expect_lines 0 "$T/out" "missing shard: no figures"
expect_exit 1 "$B" $M "$T/missing.tfrecord"
expect_match "missing\.tfrecord" "$T/err" "missing shard among good ones named"
mkdir gap
cp m/mn-00000-of-00004.tfrecord m/mn-00001-of-00004.tfrecord m/mn-00003-of-00004.tfrecord gap/
expect_exit 1 "$B" gap/mn
expect_match "mn-00002-of-00004\.tfrecord" "$T/err" "the missing shard of a PREFIX set named"
expect_exit 1 "$B" --dump-order "$T/no/such/dir/order" $M
expect_match "no/such/dir/order" "$T/err" "unwritable --dump-order FILE named"

# ---- --json -----------------------------------------------------------------------
expect_exit 0 "$B" --json $M
expect_lines 1 "$T/out" "--json: one line"
if python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/out"; then pass; else fail "--json output parses"; fi
expect_eq $N "$(json_get records)" "--json records"
expect_eq 32 "$(json_get batches)" "--json batches (1000 / 32, rounded up)"
expect_eq 0 "$(json_get skipped)" "--json skipped"
expect_eq 2 "$(json_get workers)" "--json workers (default)"
expect_eq none "$(json_get shuffle)" "--json shuffle"
expect_match '"io": "(uring|pread)"' "$T/out" "--json io"
expect_match '"peak_rss_bytes": [1-9][0-9]*' "$T/out" "--json peak_rss_bytes"
for k in bytes seconds records_per_s bytes_per_s wait_s; do
	v=$(json_get $k)
	case $v in PARSE-ERROR | "" | -*) fail "--json $k: '$v'" ;; *) pass ;; esac
done
expect_eq $((N * 3187)) "$(json_get bytes)" "--json bytes: the payload bytes"
IO_DEFAULT=$(json_get io)
# the route the epoch took: the pages just read are in the page cache, so
# a global shuffle of plain shards maps them; a named reading is taken
expect_exit 0 "$B" --json --shuffle global $M
expect_eq placed/map "$(json_get route)" "--json route: warm shards, shuffled, mapped"
expect_exit 0 env RIO_LOADER_READING=buffered "$B" --json --shuffle global $M
expect_eq placed/buffered "$(json_get route)" "--json route: RIO_LOADER_READING=buffered"
expect_exit 0 "$B" --shuffle global $M
expect_match "^route: +placed/map " "$T/out" "the table's route line"
expect_exit 0 "$B" --json --epochs 3 --batch 100 $M
expect_eq $((3 * N)) "$(json_get records)" "--epochs 3: every record three times"
expect_eq 30 "$(json_get batches)" "--epochs 3 --batch 100: 30 batches"
expect_eq $(($(json_get file_bytes) / 3)) "$(json_get first_epoch_file_bytes)" \
	"--epochs 3: first_epoch_file_bytes, a third of file_bytes"
if python3 -c 'import json, sys; j = json.load(sys.stdin)
sys.exit(not 0 < j["first_epoch_s"] < j["seconds"])' <"$T/out"; then pass; else
	fail "--epochs 3: 0 < first_epoch_s < seconds"; fi
expect_exit 0 "$B" --json --drop-remainder $M
expect_eq 992 "$(json_get records)" "--drop-remainder: 31 full batches"
expect_eq 31 "$(json_get batches)" "--drop-remainder: the short batch dropped"
expect_exit 0 "$B" --json "m/mn-00000-of-00004.tfrecord,m/mn-00001-of-00004.tfrecord" \
	"m/mn-0000[23]-of-00004.tfrecord"
expect_eq $N "$(json_get records)" "SHARDS: a list and a glob make one set"
# the table
expect_exit 0 "$B" $M
expect_match "^records/s: +[0-9]" "$T/out" "table: records/s"
expect_match "^MB/s: +[0-9]" "$T/out" "table: MB/s"
expect_match "^batches/s: +[0-9]" "$T/out" "table: batches/s"
expect_match "^wait: +[0-9.]+ s \([0-9.]+% of wall time\)" "$T/out" "table: wait"
expect_match "^io: +(uring|pread)$" "$T/out" "table: io"
expect_match "^skipped: +0$" "$T/out" "table: skipped"
expect_match "^peak RSS: +[0-9.]+ [KMG]?i?B$" "$T/out" "table: peak RSS"

# ---- --dump-order -------------------------------------------------------------
bench_dump none $M
expect_lines $N none.order "--dump-order: one line per record"
same shard-order none.order "--shuffle none: shard order"
bench_dump none-b7 --batch 7 $M
same shard-order none-b7.order "--shuffle none, --batch 7: shard order"
bench_dump none2 --epochs 2 $M
expect_lines $((2 * N)) none2.order "--dump-order covers every epoch"
cat shard-order shard-order >shard-order2
same shard-order2 none2.order "--shuffle none: every epoch in shard order"

# global shuffle: a permutation, fixed by the seed
bench_dump g1 --shuffle global --seed 1 $M
expect_lines $N g1.order "global: one line per record"
same_set none.order g1.order "--shuffle global --seed 1 is a permutation"
differ none.order g1.order "--shuffle global --seed 1 is not shard order"
bench_dump g1again --shuffle global --seed 1 $M
same g1.order g1again.order "--shuffle global --seed 1 twice: the same order"
bench_dump g2 --shuffle global --seed 2 $M
same_set none.order g2.order "--shuffle global --seed 2 is a permutation"
differ g1.order g2.order "--seed 1 and --seed 2 differ"
bench_dump g1e2 --shuffle global --seed 1 --epochs 2 $M
head -n $N g1e2.order >g1e2.first
tail -n $N g1e2.order >g1e2.second
same g1.order g1e2.first "global: epoch 0 as in a one-epoch run"
same_set none.order g1e2.second "global: epoch 1 is a permutation too"
differ g1e2.first g1e2.second "global: each epoch has its own order"

# buffer shuffle: a permutation too
bench_dump b1 --shuffle buffer --seed 1 --shuffle-buffer 100 --interleave 2 $M
same_set none.order b1.order "--shuffle buffer is a permutation"
differ none.order b1.order "--shuffle buffer is not shard order"
bench_dump b2 --shuffle buffer --seed 2 --shuffle-buffer 100 --interleave 2 $M
differ b1.order b2.order "--shuffle buffer: --seed 1 and --seed 2 differ"

# the order never depends on the workers or the I/O backend
for mode in none global buffer; do
	bench_dump w1-$mode --workers 1 --shuffle $mode --seed 5 --batch 10 --shuffle-buffer 64 $M
	bench_dump w2-$mode --workers 2 --shuffle $mode --seed 5 --batch 10 --shuffle-buffer 64 $M
	bench_dump w4-$mode --workers 4 --shuffle $mode --seed 5 --batch 10 --shuffle-buffer 64 $M
	same w1-$mode.order w2-$mode.order "--shuffle $mode: --workers 1 and 2 give the same order"
	same w1-$mode.order w4-$mode.order "--shuffle $mode: --workers 1 and 4 give the same order"
	bench_dump pread-$mode --io pread --shuffle $mode --seed 5 --batch 10 --shuffle-buffer 64 $M
	same w2-$mode.order pread-$mode.order "--shuffle $mode: --io pread and the default give the same order"
	RIO_LOADER_IO=pread "$B" --json --shuffle $mode --seed 5 $M >"$T/out" 2>"$T/err"
	expect_eq pread "$(json_get io)" "--shuffle $mode: RIO_LOADER_IO=pread is used"
	expect_exit 0 "$B" --json --io pread --shuffle $mode $M
	expect_eq pread "$(json_get io)" "--shuffle $mode: --io pread is used"
	if [ "$IO_DEFAULT" = uring ]; then
		bench_dump uring-$mode --io uring --shuffle $mode --seed 5 --batch 10 --shuffle-buffer 64 $M
		same w2-$mode.order uring-$mode.order "--shuffle $mode: --io uring and the default give the same order"
	fi
done
# other read sizes and queue depths do not change it either
bench_dump small-reads --read-size 4K --queue-depth 2 --prefetch 1 --shuffle global --seed 5 --batch 10 $M
same w2-global.order small-reads.order "--read-size 4K --queue-depth 2 --prefetch 1: the same order"

# ---- --direct and --map ------------------------------------------------------------
# the same records, in the same order, as the default for every order
# (--map maps only when shuffled: with none it reads as without it)
for mode in none global buffer; do
	for opt in direct map; do
		bench_dump $opt-$mode --$opt --shuffle $mode --seed 5 --batch 10 --shuffle-buffer 64 $M
		same w2-$mode.order $opt-$mode.order "--$opt, --shuffle $mode: the same records in the same order"
	done
done
# ... and they do what they say, seen in their system calls (strace, on the
# pread backend, whose reads are system calls): --direct opens each shard
# with O_DIRECT; --map maps each shard and reads none of its records from
# the file (only the few bytes of the headers and index checks)
if command -v strace >/dev/null 2>&1; then
	for opt in direct map; do
		# (LeakSanitizer does not run under ptrace)
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -y \
			-e trace=openat,mmap,pread64,read -o $opt.trace \
			"$B" --$opt --io pread --shuffle global --seed 5 --dump-order traced-$opt.order $M \
			>/dev/null 2>"$T/err"
		expect_eq 0 $? "--$opt under strace"
		same w2-global.order traced-$opt.order "--$opt under strace: the same order"
		python3 - $opt $opt.trace m/mn-0000?-of-00004.tfrecord <<'EOF' && pass || fail "--$opt's system calls"
import os, re, sys
opt, trace, shards = sys.argv[1], sys.argv[2], [os.path.basename(p) for p in sys.argv[3:]]
size = {os.path.basename(p): os.path.getsize(p) for p in sys.argv[3:]}
calls, pending = [], {}
for line in open(trace):  # "PID call(...) = R", split around other threads' calls
    pid, rest = line.rstrip("\n").split(None, 1)
    if rest.endswith("<unfinished ...>"):
        pending[pid] = rest[: -len("<unfinished ...>")]
        continue
    m = re.match(r"<\.\.\. \w+ resumed>(.*)", rest)
    calls.append(pending.pop(pid, "") + m.group(1) if m else rest)

def shard_of(text):
    names = [s for s in shards if s in text]
    return names[0] if names else None

if opt == "direct":
    direct = {shard_of(c) for c in calls if c.startswith("openat(") and "O_DIRECT" in c}
    print("opened with O_DIRECT:", sorted(filter(None, direct)))
    assert set(shards) <= direct, "a shard not opened with O_DIRECT"
else:
    mapped = {shard_of(c) for c in calls if c.startswith("mmap(") and "MAP_SHARED" in c}
    read = {s: 0 for s in shards}
    for c in calls:
        m = re.match(r"(pread64|read)\(\d+<([^>]*)>.*= (\d+)$", c)
        if m and shard_of(m.group(2)):
            read[shard_of(m.group(2))] += int(m.group(3))
    print("mapped:", sorted(filter(None, mapped)), "bytes read from each:", read)
    assert set(shards) <= mapped, "a shard not mapped"
    assert all(read[s] < size[s] / 10 for s in shards), "records read from a mapped shard"
EOF
	done
else
	echo "strace not found: what --direct and --map do is not checked, only what they deliver"
fi

# ---- ranks ------------------------------------------------------------------------
# every record exactly once over the ranks of a world, for each sharding and order
for sharding in auto records files; do
	for mode in none global; do
		: >ranks-$sharding-$mode
		for r in 0 1 2; do
			bench_dump r$r-$sharding-$mode --rank $r --world 3 --sharding $sharding \
				--shuffle $mode --seed 3 $M
			cat r$r-$sharding-$mode.order >>ranks-$sharding-$mode
		done
		expect_lines $N ranks-$sharding-$mode "--sharding $sharding --shuffle $mode: ranks 0-2 read $N records"
		same_set none.order ranks-$sharding-$mode \
			"--sharding $sharding --shuffle $mode: ranks 0-2 read every record once"
	done
done
# records sharding: balanced contiguous ranges (334, 333, 333)
expect_lines 334 r0-records-none.order "--sharding records: rank 0 has 334 records"
expect_lines 333 r2-records-none.order "--sharding records: rank 2 has 333 records"
sed -n '1,334p' shard-order >range0
same range0 r0-records-none.order "--sharding records: rank 0 reads the first range in order"
# files sharding: rank r reads shards r, r + 3
expect_eq "0 3" "$(cut -d' ' -f1 r0-files-none.order | uniq | tr '\n' ' ' | sed 's/ $//')" \
	"--sharding files: rank 0 reads shards 0 and 3"
expect_eq "1" "$(cut -d' ' -f1 r1-files-none.order | uniq | tr '\n' ' ' | sed 's/ $//')" \
	"--sharding files: rank 1 reads shard 1"
# the environment gives the rank when the options do not
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3 "$B" --json --dump-order env.order $M >"$T/out" 2>"$T/err"
expect_eq 1 "$(json_get rank)" "OMPI_COMM_WORLD_RANK gives the rank"
expect_eq 3 "$(json_get world)" "OMPI_COMM_WORLD_SIZE gives the world"
same r1-auto-none.order env.order "the rank from the environment reads the same records"

# ---- compressed shards ----------------------------------------------------------
expect_exit 0 "$PACK" --quiet --from tfrecord --output m/lz --shards 4 --compression lz4 "$MNIST"
bench_dump lz-none m/lz
same shard-order lz-none.order "lz4 shards, --shuffle none: shard order"
bench_dump lz-buffer --shuffle buffer --seed 1 --shuffle-buffer 100 m/lz
same_set none.order lz-buffer.order "lz4 shards, --shuffle buffer: a permutation"
bench_dump lz-buffer-w1 --workers 1 --shuffle buffer --seed 1 --shuffle-buffer 100 m/lz
same lz-buffer.order lz-buffer-w1.order "lz4 shards, --shuffle buffer: --workers 1 and 2 agree"
# --cache: the shards in memory, the same order; too small: not used
bench_dump lz-buffer-cache --cache 64M --shuffle buffer --seed 1 --shuffle-buffer 100 m/lz
same lz-buffer.order lz-buffer-cache.order "lz4 shards, --cache 64M: the same order"
expect_match "^cache: +[0-9.]+ [KM]iB$" "$T/out" "--cache 64M: the bytes held"
bench_dump lz-none-cache --cache 64M m/lz
same shard-order lz-none-cache.order "lz4 shards, --cache 64M, --shuffle none: shard order"
bench_dump lz-buffer-cache1k --cache 1K --shuffle buffer --seed 1 --shuffle-buffer 100 m/lz
same lz-buffer.order lz-buffer-cache1k.order "lz4 shards, --cache 1K: the same order"
expect_match "^cache: +not used " "$T/out" "--cache 1K: not used"
expect_exit 0 "$B" --json --cache 64M m/lz
expect_eq 1 "$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["cache_bytes"] > 0))' <"$T/out")" \
	"--json: cache_bytes"
expect_exit 2 "$B" --cache lots m/lz
expect_match "^recordio-bench: --cache: expected a size" "$T/err" "--cache lots: a usage error"
expect_exit 1 "$B" --shuffle global m/lz
expect_match "lz-0000[0-3]-of-00004\.tfrecord\.lz4" "$T/err" "lz4 shards, --shuffle global: refused, the shard named"
: >lz-ranks
for r in 0 1 2; do
	bench_dump lz-r$r --rank $r --world 3 m/lz
	cat lz-r$r.order >>lz-ranks
done
same_set none.order lz-ranks "lz4 shards: ranks 0-2 read every record once"
rm m/lz-*.idx
: >lz-ranks-noidx
for r in 0 1 2; do
	bench_dump lz-noidx-r$r --rank $r --world 3 m/lz
	cat lz-noidx-r$r.order >>lz-ranks-noidx
done
same_set none.order lz-ranks-noidx "lz4 shards without .idx: ranks 0-2 read every record once"

# ---- --decode -------------------------------------------------------------------
expect_exit 0 "$B" --json --decode image:u8:784,label:i64:1 fm/fm
expect_eq 300 "$(json_get records)" "--decode image:u8:784,label:i64:1: every record"
expect_eq 2 "$(json_get columns)" "--decode: two columns"
expect_eq 0 "$(json_get skipped)" "--decode: nothing skipped"
expect_exit 0 "$B" --json --decode image:f32:784:0.00392157,label:i64:1 --shuffle global --seed 1 fm/fm
expect_eq 300 "$(json_get records)" "--decode of bytes as f32 with a scale, shuffled"
expect_exit 0 "$B" --json --decode image_floats:f32:784,image_class:i64:1 $M
expect_eq $N "$(json_get records)" "--decode of tfx-mnist: every record"
expect_exit 0 "$B" --json --decode image_floats:f32:784,image_class:i64:1 --workers 1 --batch 64 "$MNIST"
expect_eq $N "$(json_get records)" "--decode of the TensorFlow-written file itself"
bench_dump dec-g --decode image_floats:f32:784,image_class:i64:1 --shuffle global --seed 1 $M
same g1.order dec-g.order "--decode does not change the order"
expect_exit 1 "$B" --decode image:u8:784,nosuch:i64:1 fm/fm
expect_match "nosuch|feature not found" "$T/err" "--decode: the missing feature is reported"
expect_match "fm-0000[0-2]-of-00003\.tfrecord" "$T/err" "--decode: the shard is named"
expect_lines 1 "$T/err" "--decode: a one-line message"
expect_exit 1 "$B" --decode image:u8:100,label:i64:1 fm/fm
expect_match "fm-0000[0-2]-of-00003\.tfrecord" "$T/err" "--decode: a feature of another length"
expect_exit 0 "$B" --json --skip-damaged --decode image:u8:784,nosuch:i64:1 fm/fm
expect_eq 300 "$(json_get skipped)" "--skip-damaged: records without the feature are skipped"
expect_eq 0 "$(json_get records)" "--skip-damaged: and none is delivered"

# ---- damage ---------------------------------------------------------------------
R=3203 # framed size of every tfx-mnist record
cp m/mn-0000[0-3]-of-00004.tfrecord m/mn-0000[0-3]-of-00004.tfrecord.idx bad/
flip bad/mn-00001-of-00004.tfrecord $((5 * R + 100)) # the data of record 5 of shard 1
grep -v '^1 5$' shard-order >skip-expected
for mode in none global buffer; do
	expect_exit 1 "$B" --shuffle $mode bad/mn
	expect_match "mn-00001-of-00004\.tfrecord: offset $((5 * R))" "$T/err" \
		"--shuffle $mode: the damaged shard and offset are named"
	expect_lines 1 "$T/err" "--shuffle $mode: a one-line message"
	expect_exit 0 "$B" --json --skip-damaged --shuffle $mode bad/mn
	expect_eq $((N - 1)) "$(json_get records)" "--shuffle $mode --skip-damaged: the others delivered"
	expect_eq 1 "$(json_get skipped)" "--shuffle $mode --skip-damaged: one skipped"
	# every record but the damaged one, each under its own shard and number
	bench_dump skip-$mode --skip-damaged --shuffle $mode --seed 1 bad/mn
	same_set skip-expected skip-$mode.order "--shuffle $mode --skip-damaged: every other record, numbered as in its shard"
done
same skip-expected skip-none.order "--shuffle none --skip-damaged: the others in shard order"
expect_exit 0 "$B" --json --no-crc bad/mn
expect_eq $N "$(json_get records)" "--no-crc: a bad data CRC goes unseen"
# the batches before the damage are delivered: record 5 of shard 1 is record
# 255 of the set, in batch 7 (224..255) of 32
expect_exit 1 "$B" --dump-order bad.order bad/mn
sed -n '1,224p' shard-order >before-damage
same before-damage bad.order "the batches before the damage are delivered, and no more"
# a truncated shard without an .idx (scanned when the loader opens)
head -c $((100 * R + 50)) m/mn-00002-of-00004.tfrecord >bad/cut.tfrecord
expect_exit 1 "$B" bad/cut.tfrecord
expect_match "cut\.tfrecord: offset $((100 * R))" "$T/err" "a truncated shard: name and offset"
expect_lines 1 "$T/err" "a truncated shard: a one-line message"

# an .idx that disagrees with its shard (stale: another shard's) is never
# used silently: --skip-damaged rebuilds it from the shard and says so, the
# damaged record still counted; without it, an error naming the .idx
head -n 50 m/mn-00000-of-00004.tfrecord.idx >bad/mn-00001-of-00004.tfrecord.idx
for mode in none global buffer; do
	expect_exit 0 "$B" --json --skip-damaged --shuffle $mode bad/mn
	expect_match "warning: .*mn-00001-of-00004\.tfrecord\.idx: disagrees with its shard \(50 entries, the shard holds [0-9]+ records\): rebuilt from the shard" \
		"$T/err" "--shuffle $mode --skip-damaged, stale .idx: the warning names it"
	expect_eq $((N - 1)) "$(json_get records)" "--shuffle $mode --skip-damaged, stale .idx: the others delivered"
	expect_eq 1 "$(json_get skipped)" "--shuffle $mode --skip-damaged, stale .idx: the damaged one counted"
	expect_eq 1 "$(json_get index_mismatches)" "--shuffle $mode --skip-damaged, stale .idx: counted"
done
# a gzip shard whose .idx lists half its records: found while the stream is
# read, each epoch; the records it leaves out counted, the .idx once
mkdir -p gz
expect_exit 0 "$PACK" --quiet --from tfrecord --compression gzip --output gz/mn --shards 1 "$MNIST"
head -n $((N / 2)) gz/mn-00000-of-00001.tfrecord.gz.idx >gz/half.idx
mv gz/half.idx gz/mn-00000-of-00001.tfrecord.gz.idx
expect_exit 0 "$B" --json --skip-damaged --epochs 3 gz/mn
expect_match "warning: .*mn-00000-of-00001\.tfrecord\.gz\.idx: disagrees with its shard" "$T/err" \
	"gzip, short .idx, --skip-damaged: the warning names it"
expect_eq $((3 * N)) "$(($(json_get records) + $(json_get skipped)))" \
	"gzip, short .idx, 3 epochs: delivered + skipped = the records the shard holds, each epoch"
expect_eq 1 "$(json_get index_mismatches)" "gzip, short .idx, 3 epochs: the one .idx counted once"
expect_exit 0 "$B" --skip-damaged bad/mn
expect_match "^skipped: +1$" "$T/out" "--skip-damaged: the table prints the skipped count"
expect_exit 1 "$B" bad/mn
expect_match "mn-00001-of-00004\.tfrecord(\.idx)?: " "$T/err" "FAIL, stale .idx: the shard or its .idx named"
expect_lines 1 "$T/err" "FAIL, stale .idx: a one-line message"

finish
