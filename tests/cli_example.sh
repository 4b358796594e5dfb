#!/bin/sh
# cli_example.sh — examples/ builds and runs against an installed copy, the
# way a user builds it: `make install DESTDIR=$T/inst` of this build, then
# examples/Makefile (plain make, pkg-config) with PKG_CONFIG_PATH into that
# copy and PKG_CONFIG_SYSROOT_DIR=$T/inst so the .pc file's paths resolve
# inside it, linked with an rpath to its lib dir. The program must then use
# the installed library, read every packed record each epoch (raw and
# decoded, shuffled or not), resume from its saved state, and fail with exit
# 1 and a one-line message naming a missing shard.
#
# Writes only into $T (the srcdir may be read-only, as under distcheck).
# Skips (77) only without pkg-config, a C compiler or the built tools.
. "$(dirname "$0")/cli_lib.sh"

SRC=${RIO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
MNIST="$TESTDATA/tfx-mnist.tfrecord"
: "${MAKE:=make}"
: "${CC:=cc}"

skip() {
	echo "$(basename "$0"): SKIP: $*"
	rm -rf "$T"
	exit 77
}
[ -x "$PACK" ] || skip "$PACK not built"
[ -f "$BIN/Makefile" ] || skip "$BIN is not a configured build directory"
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config not found (the example's Makefile needs it)"
command -v "${CC%% *}" >/dev/null 2>&1 || skip "no C compiler ($CC) to build the example"
command -v "$MAKE" >/dev/null 2>&1 || skip "$MAKE not found"
cd "$T" || exit 1

# ---- install this build into $T/inst -----------------------------------------
# A make of its own: not the flags, jobserver or variables of the `make
# check` that runs this test.
if (unset MAKEFLAGS MFLAGS MAKELEVEL; "$MAKE" -C "$BIN" install DESTDIR="$T/inst") \
	>install.log 2>&1; then pass; else
	fail "make install DESTDIR=$T/inst"
	tail -20 install.log | sed 's/^/  /' >&2
	finish
fi
PC=$(find "$T/inst" -name recordio.pc -path '*/pkgconfig/*' | head -1)
if [ -z "$PC" ]; then
	fail "no pkgconfig/recordio.pc under $T/inst"
	finish
fi
PCDIR=$(dirname "$PC")
LIBDIR=$(dirname "$PCDIR") # pkgconfigdir is $(libdir)/pkgconfig
HDR=$(find "$T/inst" -name loader.h | head -1)
[ -n "$HDR" ] && pass || fail "loader.h is installed"
PKG_CONFIG="pkg-config"
SHARED=1
if ! ls "$LIBDIR"/librecordio.so* >/dev/null 2>&1 && ! ls "$LIBDIR"/librecordio*.dylib >/dev/null 2>&1; then
	SHARED=0 # a --disable-shared build: link the archive and its dependencies
	PKG_CONFIG="pkg-config --static"
fi

# ---- build examples/ from a copy, against the installed library only ----------
# A library built with sanitizers needs a program built with them too (the
# ASan runtime must come first), as any user of such a build would do.
SAN=$(sed -n 's/^LDFLAGS = //p' "$BIN/Makefile" | grep -o -- '-fsanitize=[^ ]*' | tr '\n' ' ')
mkdir ex
cp "$SRC/examples/Makefile" "$SRC/examples/train_loop.c" ex/ && chmod u+w ex/*
if (unset MAKEFLAGS MFLAGS MAKELEVEL
	PKG_CONFIG_PATH=$PCDIR PKG_CONFIG_SYSROOT_DIR=$T/inst \
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
	CC="$CC $SAN" "$MAKE" -C ex PKG_CONFIG="$PKG_CONFIG" LDFLAGS="-Wl,-rpath,$LIBDIR") \
	>build.log 2>&1; then
	pass
else
	fail "examples/ does not build against $T/inst"
	sed 's/^/  /' build.log | tail -20 >&2
	finish
fi
EX="$T/ex/train_loop"
expect_match "-I$T/inst/[^ ]*include" build.log "compiled with the installed headers"
expect_match "-L$LIBDIR( |$)" build.log "linked with the installed library"
if [ $SHARED = 1 ] && command -v ldd >/dev/null 2>&1; then
	ldd "$EX" >ldd.out 2>&1
	expect_match "librecordio[^ ]* => $LIBDIR/" ldd.out "runs with the installed librecordio"
fi

# ---- data -----------------------------------------------------------------------
mkdir lines idx mn
# 100 lines, in 3 shards
i=0
while [ $i -lt 100 ]; do echo "line $i"; i=$((i + 1)); done >lines.txt
expect_exit 0 "$PACK" --quiet --from lines --output lines/l --shards 3 lines.txt
# 50 images of 2x2 bytes with labels i % 10 (sum 225), in 2 shards
printf '\0\0\10\3\0\0\0\62\0\0\0\2\0\0\0\2' >img.idx
head -c 200 /dev/zero >>img.idx
printf '\0\0\10\1\0\0\0\62' >lab.idx
i=0
while [ $i -lt 50 ]; do printf "\\$(printf %03o $((i % 10)))" >>lab.idx; i=$((i + 1)); done
expect_exit 0 "$PACK" --quiet --from idx --images img.idx --labels lab.idx --output idx/d --shards 2

# epoch N: "RECORDS BATCHES CHECKSUM" from the "epoch N: ..." line of $T/out;
# records N and checksum N: one of them.
epoch() {
	sed -n "s/^epoch $1: \\([0-9]*\\) records, \\([0-9]*\\) batches, checksum \\([0-9]*\\)$/\\1 \\2 \\3/p" \
		"$T/out"
}
records() { epoch "$1" | cut -d' ' -f1; }
checksum() { epoch "$1" | cut -d' ' -f3; }

# ---- raw records ----------------------------------------------------------------
expect_exit 0 "$EX" --batch 7 --epochs 2 --state st-lines lines/l
expect_match "^rank 0 of 1: 3 shards, 100 records per epoch, 14 full batches of 7 \(15 batches\)$" \
	"$T/out" "the plan: full batches"
expect_eq "100 15" "$(epoch 0 | cut -d' ' -f1-2)" "raw: epoch 0 reads every packed record"
expect_eq "100 15" "$(epoch 1 | cut -d' ' -f1-2)" "raw: epoch 1 reads every packed record"
CK=$(checksum 0)
expect_eq "$CK" "$(checksum 1)" "raw: the same checksum each epoch"
expect_match "^state saved to st-lines \([0-9]+ bytes\): next epoch 1$" "$T/out" "state saved"
[ -s st-lines ] && pass || fail "the state file st-lines is written"
expect_match "^stats: 200 records, 30 batches, " "$T/out" "raw: stats"
expect_lines 0 "$T/err" "raw: nothing on stderr"
expect_exit 0 "$EX" --batch 7 --epochs 2 --shuffle global --seed 5 --state st-g lines/l
expect_eq "100 $CK" "$(records 1) $(checksum 1)" "raw, shuffled: the same records"

# ---- decoded columns, shuffled, and resumed --------------------------------------
expect_exit 0 "$EX" --decode image:u8:4,label:i64:1 --batch 8 --epochs 3 --shuffle buffer --seed 2 \
	--state st-idx idx/d
for e in 0 1 2; do
	expect_eq "50 7 225" "$(epoch $e)" "decoded: epoch $e: records, batches and the label sum"
done
expect_exit 0 "$EX" --decode image:u8:4,label:i64:1 --batch 8 --epochs 3 --shuffle buffer --seed 2 \
	--resume st-idx --state st-idx2 idx/d
expect_match "^resumed from st-idx: epoch 1$" "$T/out" "resume: from epoch 1"
expect_eq "" "$(epoch 0)" "resume: epoch 0 is not read again"
expect_eq "50 7 225|50 7 225" "$(epoch 1)|$(epoch 2)" "resume: epochs 1 and 2"
expect_exit 1 "$EX" --decode image:u8:4,label:i64:1 --batch 8 --epochs 3 --shuffle buffer --seed 3 \
	--resume st-idx idx/d
expect_match "^train_loop: st-idx: .*seed" "$T/err" "resume with another seed: refused, named"

# ---- TensorFlow-written data ------------------------------------------------------
if [ -f "$MNIST" ]; then
	expect_exit 0 "$PACK" --quiet --from tfrecord --output mn/m --shards 4 "$MNIST"
	expect_exit 0 "$EX" --decode image_floats:f32:784,image_class:i64:1 --batch 64 --epochs 2 \
		--shuffle global --seed 1 --state st-mn mn/m
	expect_eq "1000 1000" "$(records 0) $(records 1)" "tfx-mnist decoded: every record"
	expect_exit 0 "$EX" --epochs 1 --state st-mn "$MNIST"
	expect_eq 1000 "$(records 0)" "tfx-mnist raw, the TensorFlow file itself"
fi

# ---- errors -------------------------------------------------------------------------
expect_exit 1 "$EX" --decode image:u8:4,nosuch:i64:1 --state st-x idx/d
expect_match "^train_loop: .*d-0000[01]-of-00002\.tfrecord.*(nosuch|feature not found)" "$T/err" \
	"a missing feature: the shard named"
expect_lines 1 "$T/err" "a missing feature: one line"
expect_exit 1 "$EX" --state st-x "$T/nothing-here"
expect_match "^train_loop: .*nothing-here.*no shards match" "$T/err" "no shards: named"
rm lines/l-00001-of-00003.tfrecord
expect_exit 1 "$EX" --state st-x lines/l
expect_match "^train_loop: .*l-00001-of-00003\.tfrecord.*missing shard" "$T/err" "a missing shard: named"
expect_lines 1 "$T/err" "a missing shard: one line"
[ -e st-x ] && fail "no state is saved when the loader fails" || pass
expect_exit 2 "$EX" --shuffle sideways lines/l
expect_exit 2 "$EX" --batch 0 lines/l
expect_exit 2 "$EX" --decode image:u16:4 idx/d
expect_exit 2 "$EX"

finish
