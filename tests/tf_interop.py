#!/usr/bin/env python3
"""tf_interop.py — TensorFlow interoperability checks, run by cli_tensorflow.sh.

Proves the format is TensorFlow's in both directions, with TensorFlow itself
as the judge (the unit tests can only compare our writer with our reader):

  1. shards written by recordio-pack (--from lines and --from idx, every
     compression; lz4 through the `lz4` CLI, since TF cannot read it) read
     in tf.data.TFRecordDataset as exactly the expected payloads, in order;
  2. files written by tf.io.TFRecordWriter (raw payloads of varied sizes,
     tf.train.Example with every kind of feature and awkward values) pass
     recordio-verify, and recordio-cat (--count, --format hex and json),
     recordio-index and recordio-pack --from tfrecord agree with TensorFlow;
     the TensorFlow-written golden files are checked the same way, the
     SequenceExample ones against tf.train.SequenceExample and
     tf.io.parse_single_sequence_example.

One process imports TensorFlow once (the import costs seconds) and calls the
tools through subprocess. Each check prints "PASS name" or "FAIL name: why";
"DONE" ends a complete run. Exit status: 0 all passed, 1 a check failed,
77 TensorFlow cannot be imported (the caller skips).

Usage: tf_interop.py BIN SCRATCH TESTDATA
"""
import base64
import glob
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
try:
    import numpy as np
    import tensorflow as tf
except Exception as e:  # absent or broken: not this project's failure
    print("SKIP: %s cannot import tensorflow (%s): pip install tensorflow-cpu "
          "(scripts/test.sh puts it in build-python/venv, first on PATH)" % (sys.executable, e))
    sys.exit(77)

# feature(kind, values) -> tf.train.Feature, shared with the golden files' maker
sys.dont_write_bytecode = True  # no __pycache__ in tests/data
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
from make_tf_files import feature  # noqa: E402

BIN, SCRATCH, TESTDATA = sys.argv[1:4]
TF_COMPRESSION = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}
SUFFIX = {"none": "", "gzip": ".gz", "zlib": ".zz", "lz4": ".lz4"}
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1

passed = failed = 0


def check(name, ok, why=""):
    """Counts one check and prints its line for the shell to tally."""
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, str(why).replace("\n", "\n  ")))
    sys.stdout.flush()
    return ok


def group(name, fn, *args):
    """Runs a group of checks; an exception counts as one failure, not a crash."""
    try:
        fn(*args)
    except Exception:
        check(name, False, "exception:\n" + traceback.format_exc())


def tool(name, *args):
    """Runs $BIN/recordio-NAME; returns the CompletedProcess (bytes output)."""
    return subprocess.run([os.path.join(BIN, "recordio-" + name)] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def tool_ok(check_name, name, *args):
    """Runs a tool and checks that it exits 0; returns its stdout or None."""
    p = tool(name, *args)
    why = "exit %d: recordio-%s %s\n  stderr: %s" % (
        p.returncode, name, " ".join(args), p.stderr.decode(errors="replace").strip()[:500])
    return p.stdout if check(check_name, p.returncode == 0, why) else None


def short(b, n=40):
    if not isinstance(b, (bytes, str)):
        return repr(b)
    return (repr(b[:n]) + ("...(%d bytes)" % len(b) if len(b) > n else ""))


def first_difference(want, got):
    """Describes where two payload lists first differ."""
    if len(want) != len(got):
        prefix = "count %d, want %d" % (len(got), len(want))
    else:
        prefix = "same count %d" % len(want)
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            return "%s; item %d: want %s, got %s" % (prefix, i, short(w), short(g))
    return prefix


def tf_read(files, compression):
    """All payloads of FILES, in order, as TensorFlow reads them."""
    ds = tf.data.TFRecordDataset(files, compression_type=compression)
    return [bytes(r) for r in ds.as_numpy_iterator()]


def tf_write(path, payloads, compression):
    opts = tf.io.TFRecordOptions(compression_type=compression)
    with tf.io.TFRecordWriter(path, opts) as w:
        for p in payloads:
            w.write(p)


def expected_index(payloads):
    """The .idx text: "<offset> <framed size>" per record, uncompressed offsets."""
    lines, off = [], 0
    for p in payloads:
        lines.append("%d %d\n" % (off, len(p) + 16))
        off += len(p) + 16
    return "".join(lines)


def lz4_decompress(src, dst):
    subprocess.run(["lz4", "-d", "-q", "-f", src, dst], check=True)


# ---- the JSON of recordio-cat --format json ------------------------------------
#
# One object per record: {"name": {"KIND": [values]}, ...}, KIND one of bytes
# (values base64), float (numbers, or "NaN" / "Infinity" / "-Infinity"),
# int64 (numbers), none (a Feature with no kind set: []). A payload that is
# not an Example (or has no features) is {"_raw": "<base64>"}.

KIND_NAME = {"bytes_list": "bytes", "float_list": "float", "int64_list": "int64", None: "none"}


def float_bits(x):
    return struct.pack("<f", x)


def same_float32(want, got):
    if want != want:
        return got != got
    return float_bits(want) == float_bits(got)  # keeps -0.0 apart from 0.0


def json_float(s):
    if s == "NaN":
        return float("nan")
    if s == "Infinity":
        return float("inf")
    if s == "-Infinity":
        return float("-inf")
    return float(s)


def compare_features(obj, feats):
    """Compares the members of a JSON object (as pairs) with a protobuf
    map<string, Feature>: None when equal, else why."""
    names = [k for k, _ in obj]
    if len(set(names)) != len(names):
        return "a feature name repeated: %r" % names
    if set(names) != set(feats.keys()):
        return "features %r, TensorFlow has %r" % (sorted(names), sorted(feats.keys()))
    for name, val in obj:
        why = compare_feature(name, val, feats[name])
        if why:
            return why
    return None


def compare_feature(name, val, f):
    """Compares one {"KIND": [values]} (as pairs) with a tf.train.Feature."""
    want_kind = KIND_NAME[f.WhichOneof("kind")]
    if not (isinstance(val, list) and len(val) == 1 and isinstance(val[0], tuple)
            and isinstance(val[0][1], list)):
        return "feature %r: %r is not one {kind: [values]}" % (name, val)
    kind, values = val[0]
    if kind != want_kind:
        return "feature %r: kind %r, TensorFlow has %r" % (name, kind, want_kind)
    if kind == "none":
        if values != []:
            return "feature %r: kind none with values %r" % (name, values)
    elif kind in ("bytes", "int64"):
        if kind == "bytes":
            got = [base64.b64decode(v, validate=True) for v in values]
            want = list(f.bytes_list.value)
        else:
            got = [int(v) for v in values]
            want = list(f.int64_list.value)
        if got != want:
            return "feature %r: %s" % (name, first_difference(want, got))
    elif kind == "float":
        want = list(f.float_list.value)
        if len(values) != len(want):
            return "feature %r: %d floats, want %d" % (name, len(values), len(want))
        for i, (w, s) in enumerate(zip(want, values)):
            if not same_float32(w, json_float(s)):
                return "feature %r: float %d is %r, want %r (float32 %s)" % (
                    name, i, s, w, float_bits(w).hex())
    return None


def compare_sequence_json_line(line, payload):
    """Returns None if the JSON line describes the SequenceExample in
    payload exactly (context, every feature list, every step and value),
    with nothing in "_raw" (TensorFlow wrote it: nothing is unknown)."""
    se = tf.train.SequenceExample.FromString(payload)
    try:
        obj = json.loads(line, object_pairs_hook=list, parse_int=str, parse_float=str)
    except ValueError as e:
        return "not valid JSON: %s" % e
    if [k for k, _ in obj] != ["_type", "context", "feature_lists"] or obj[0][1] != "SequenceExample":
        return "members %r, want _type SequenceExample, context, feature_lists" % [k for k, _ in obj]
    why = compare_features(obj[1][1], se.context.feature)
    if why:
        return "context: " + why
    lists = se.feature_lists.feature_list
    got = obj[2][1]
    names = [k for k, _ in got]
    if sorted(names) != sorted(lists.keys()) or len(set(names)) != len(names):
        return "feature lists %r, TensorFlow has %r" % (sorted(names), sorted(lists.keys()))
    for name, steps in got:
        want = lists[name].feature
        if not isinstance(steps, list) or len(steps) != len(want):
            return "feature list %r: %r steps, TensorFlow has %d" % (name, steps, len(want))
        for i, (v, f) in enumerate(zip(steps, want)):
            why = compare_feature("%s[%d]" % (name, i), v, f)
            if why:
                return "feature list " + why
    return None


def compare_json_line(line, payload):
    """Returns None if the JSON line describes the Example in payload, else why."""
    if line.startswith('{"_type": "SequenceExample"'):
        return compare_sequence_json_line(line, payload)
    ex = tf.train.Example.FromString(payload)
    # Numbers are kept as their text: "-0" must stay negative, int64 exact.
    try:
        obj = json.loads(line, object_pairs_hook=list, parse_int=str, parse_float=str)
    except ValueError as e:
        return "not valid JSON: %s" % e
    if not isinstance(obj, list):
        return "not a JSON object"
    feats = ex.features.feature
    if len(obj) == 1 and obj[0][0] == "_raw":
        if len(feats) != 0:
            return "shown as _raw, but TensorFlow parses %d features" % len(feats)
        if base64.b64decode(obj[0][1]) != payload:
            return "_raw is not the payload"
        return None
    # Features and a "_raw" member: the record holds more than the features
    # (unknown fields: TensorFlow keeps them too); _raw must be the payload.
    raw = [v for k, v in obj if k == "_raw" and isinstance(v, str)]
    if raw:
        if base64.b64decode(raw[0]) != payload:
            return "_raw is not the payload"
        obj = [(k, v) for k, v in obj if not (k == "_raw" and isinstance(v, str))]
    return compare_features(obj, feats)


def check_json(name, path, payloads):
    out = tool_ok(name + ": cat --format json exits 0", "cat", "--format", "json", path)
    if out is None:
        return
    lines = out.decode("utf-8").split("\n")
    if not check(name + ": json has one line per record", lines[-1] == "" and len(lines) - 1 == len(payloads),
                 "%d lines for %d records" % (len(lines) - 1, len(payloads))):
        return
    for i, (line, p) in enumerate(zip(lines, payloads)):
        why = compare_json_line(line, p)
        if why:
            check(name + ": json values equal TensorFlow's", False, "record %d: %s\n  line: %s" % (i, why, line[:300]))
            return
    check(name + ": json values equal TensorFlow's", True)


def check_tools_read(name, path, payloads, examples):
    """The tools against a file TensorFlow wrote (or TensorFlow read) as PAYLOADS."""
    tool_ok(name + ": verify exits 0", "verify", "-q", path)
    out = tool_ok(name + ": cat --count exits 0", "cat", "--count", path)
    if out is not None:
        check(name + ": cat --count", out.strip() == str(len(payloads)).encode(),
              "got %r, want %d" % (out.strip(), len(payloads)))
    out = tool_ok(name + ": cat --format hex exits 0", "cat", "--format", "hex", path)
    if out is not None:
        got = out.decode().split("\n")
        ok = got[-1] == "" and got[:-1] == [p.hex() for p in payloads]
        why = "" if ok else first_difference([p.hex() for p in payloads], got[:-1])
        check(name + ": cat --format hex equals the payloads", ok, why)
    if examples:
        check_json(name, path, payloads)
    idx = path + ".idx"
    if os.path.exists(idx):
        os.remove(idx)
    if tool_ok(name + ": index exits 0", "index", "-q", path) is not None:
        with open(idx) as f:
            got = f.read()
        want = expected_index(payloads)
        check(name + ": .idx equals offsets computed here", got == want,
              "first lines got %r, want %r" % (got[:80], want[:80]))
        tool_ok(name + ": verify with its .idx exits 0", "verify", "-q", path)


# ---- 1. recordio-pack writes, TensorFlow reads ------------------------------------

def pack_outputs(prefix, shards, comp):
    files = sorted(f for f in glob.glob(prefix + "-*") if not f.endswith(".idx"))
    want = ["%s-%05d-of-%05d.tfrecord%s" % (prefix, k, shards, SUFFIX[comp]) for k in range(shards)]
    check("%s: shard names" % os.path.basename(prefix), files == want, "got %r, want %r" % (files, want))
    return files


def tf_read_shards(name, files, comp):
    """Reads each shard in TensorFlow (lz4: after `lz4 -d`); returns per-shard payloads."""
    per = []
    for f in files:
        if comp == "lz4":
            plain = f[:-len(".lz4")]
            lz4_decompress(f, plain)
            per.append(tf_read([plain], ""))
        else:
            per.append(tf_read([f], TF_COMPRESSION[comp]))
    # and all shards as one dataset, the way training reads them
    if comp != "lz4":
        whole = tf_read(files, TF_COMPRESSION[comp])
        check(name + ": one TFRecordDataset over all shards", whole == [p for s in per for p in s],
              first_difference([p for s in per for p in s], whole))
    return per


def check_pack_idx_sidecars(name, files, per):
    for f, payloads in zip(files, per):
        try:
            with open(f + ".idx") as fh:
                got = fh.read()
        except OSError as e:
            check(name + ": pack wrote .idx sidecars", False, str(e))
            return
        if got != expected_index(payloads):
            check(name + ": pack's .idx equals offsets computed here", False,
                  "%s: got %r..., want %r..." % (f, got[:60], expected_index(payloads)[:60]))
            return
    check(name + ": pack's .idx equals offsets computed here", True)


def make_lines(d):
    rng = np.random.default_rng(1)
    first = [b"first line", b"", b"with\ttab", b"crlf kept\r", b"\x00nul\x00",
             bytes(b for b in range(256) if b != 10), "ünïcödé".encode(), b"x" * 70000, b" "]
    for i in range(200):
        n = int(rng.integers(0, 300))
        first.append(bytes(b for b in rng.integers(0, 256, n, dtype=np.uint8).tobytes() if b != 10))
    second = [b"second file", b"", b"last line, no newline"]
    with open(os.path.join(d, "a.txt"), "wb") as f:
        f.write(b"\n".join(first) + b"\n")
    with open(os.path.join(d, "b.txt"), "wb") as f:
        f.write(b"\n".join(second))
    return [os.path.join(d, "a.txt"), os.path.join(d, "b.txt")], first + second


def write_idx(path, magic, dims, data, compress):
    raw = struct.pack(">I", magic) + b"".join(struct.pack(">I", n) for n in dims) + data
    opener = gzip.open if compress else open
    with opener(path, "wb") as f:
        f.write(raw)


def make_idx(d):
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, (50, 4, 5), dtype=np.uint8)
    images[0] = 0       # an all-black and an all-white image
    images[1] = 255
    labels = rng.integers(0, 10, 50, dtype=np.uint8)
    labels[2] = 255     # the largest label a u8 IDX can hold
    for gz in (False, True):
        s = ".gz" if gz else ""
        write_idx(os.path.join(d, "images-idx3-ubyte" + s), 0x803, (50, 4, 5), images.tobytes(), gz)
        write_idx(os.path.join(d, "labels-idx1-ubyte" + s), 0x801, (50,), labels.tobytes(), gz)
    return images, labels


def check_idx_examples(name, payloads, images, labels):
    if not check(name + ": 50 Examples", len(payloads) == 50, "got %d" % len(payloads)):
        return
    bad = None
    for i, p in enumerate(payloads):
        ex = tf.train.Example.FromString(p)
        feats = ex.features.feature
        if set(feats.keys()) != {"image", "label"}:
            bad = "record %d: features %r" % (i, sorted(feats.keys()))
        elif list(feats["image"].bytes_list.value) != [images[i].tobytes()]:
            bad = "record %d: image %r, want %r" % (i, list(feats["image"].bytes_list.value), images[i].tobytes())
        elif list(feats["label"].int64_list.value) != [int(labels[i])]:
            bad = "record %d: label %r, want %d" % (i, list(feats["label"].int64_list.value), labels[i])
        if bad:
            break
    check(name + ": tf.train.Example image and label equal the IDX arrays", bad is None, bad)
    # the op a training input pipeline uses
    parsed = tf.io.parse_example(tf.constant(payloads), {
        "image": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64)})
    img = np.stack([np.frombuffer(b, np.uint8) for b in parsed["image"].numpy()]).reshape(50, 4, 5)
    check(name + ": tf.io.parse_example agrees",
          np.array_equal(img, images) and np.array_equal(parsed["label"].numpy(), labels.astype(np.int64)),
          "parsed tensors differ from the IDX arrays")


def pack_lines_to_tf(d, comp, inputs, lines):
    """--from lines into 3 shards; TensorFlow must read the lines back."""
    name = "pack lines %s" % comp
    prefix = os.path.join(d, "lines-" + comp)
    if tool_ok(name + ": pack exits 0", "pack", "--from", "lines", "--output", prefix, "--shards", "3",
               "--compression", comp, "-q", *inputs) is None:
        return
    files = pack_outputs(prefix, 3, comp)
    per = tf_read_shards(name, files, comp)
    got = [p for s in per for p in s]
    check(name + ": TensorFlow reads exactly the lines, in order", got == lines, first_difference(lines, got))
    n = len(lines)
    want_counts = [(k + 1) * n // 3 - k * n // 3 for k in range(3)]
    check(name + ": shard k holds records [k*n/3, (k+1)*n/3)", [len(s) for s in per] == want_counts,
          "counts %r, want %r" % ([len(s) for s in per], want_counts))
    check_pack_idx_sidecars(name, files, per)


def pack_idx_to_tf(d, comp, images, labels):
    """--from idx into 2 shards (gzip'd IDX inputs for zlib output); TensorFlow
    must parse Examples equal to the arrays."""
    name = "pack idx %s" % comp
    prefix = os.path.join(d, "mnist-" + comp)
    gz = ".gz" if comp == "zlib" else ""
    if tool_ok(name + ": pack exits 0", "pack", "--from", "idx",
               "--images", os.path.join(d, "images-idx3-ubyte" + gz),
               "--labels", os.path.join(d, "labels-idx1-ubyte" + gz),
               "--output", prefix, "--shards", "2", "--compression", comp, "-q") is None:
        return
    files = pack_outputs(prefix, 2, comp)
    per = tf_read_shards(name, files, comp)
    check_idx_examples(name, [p for s in per for p in s], images, labels)
    check_pack_idx_sidecars(name, files, per)


def direction_pack_to_tf():
    d = os.path.join(SCRATCH, "pack2tf")
    os.makedirs(d)
    inputs, lines = make_lines(d)
    images, labels = make_idx(d)
    comps = ["none", "gzip", "zlib"]
    if shutil.which("lz4"):
        comps.append("lz4")
    else:
        print("NOTE: no lz4 CLI: lz4 shards not checked in TensorFlow")
    for comp in comps:
        group("pack lines %s" % comp, pack_lines_to_tf, d, comp, inputs, lines)
        group("pack idx %s" % comp, pack_idx_to_tf, d, comp, images, labels)


def pack_csv_specials_to_tf():
    """CSV nan/inf cells: a float column TensorFlow parses as NaN and +-inf."""
    d = os.path.join(SCRATCH, "csv2tf")
    os.makedirs(d)
    src = os.path.join(d, "special.csv")
    with open(src, "w") as f:
        f.write("x,label\nnan,0\n-inf,1\nInfinity,2\n1.5,3\n,4\n")
    prefix = os.path.join(d, "sp")
    if tool_ok("pack csv specials exits 0", "pack", "--from", "csv", "--label", "label",
               "--output", prefix, src) is None:
        return
    spec = {"x": tf.io.FixedLenFeature([1], tf.float32),
            "label": tf.io.FixedLenFeature([1], tf.int64)}
    got = [tf.io.parse_single_example(p, spec) for p in tf_read([prefix + "-00000-of-00001.tfrecord"], "")]
    xs = [float(e["x"].numpy()[0]) for e in got]
    labels = [int(e["label"].numpy()[0]) for e in got]
    check("csv specials: TensorFlow reads every row", labels == [0, 1, 2, 3, 4], labels)
    want = ["nan", "-inf", "inf", "1.5", "nan"]
    check("csv specials: TensorFlow reads nan as NaN, -inf and Infinity as infinities",
          [repr(x) for x in xs] == want, "got %r, want %r" % (xs, want))


# ---- 2. TensorFlow writes, the tools read ----------------------------------------

def raw_payloads():
    rng = np.random.default_rng(3)
    sizes = [0, 1, 2, 3, 7, 16, 100, 127, 128, 255, 256, 4095, 4096, 4097, 65535, 65536, 100 * 1024, 0, 5]
    out = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes]
    out.append(b"\x00" * 30000)             # compresses to almost nothing
    out.append(b"\n" * 10 + b"\r\n")        # newlines inside a payload
    return out


def example(feats):
    ex = tf.train.Example()
    for k, (kind, values) in feats.items():
        ex.features.feature[k].CopyFrom(feature(kind, values))
    return ex.SerializeToString()


def pb_varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_field(num, wire, body):
    if wire == 2:
        return pb_varint(num << 3 | 2) + pb_varint(len(body)) + body
    return pb_varint(num << 3 | wire) + body


def unpacked_example():
    """An Example with float and int64 lists NOT packed (one tag per value), as
    older writers produce: TensorFlow must parse it, and so must we."""
    floats = b"".join(pb_field(1, 5, struct.pack("<f", v)) for v in (1.0, -2.5, 0.0))
    ints = b"".join(pb_field(1, 0, pb_varint(v)) for v in (1, -1, INT64_MIN, 300))
    mixed = pb_field(1, 0, pb_varint(7)) + pb_field(1, 2, pb_varint(8) + pb_varint(9))  # both in one list
    entries = [(b"f", pb_field(2, 2, floats)), (b"i", pb_field(3, 2, ints)), (b"m", pb_field(3, 2, mixed))]
    fmap = b"".join(pb_field(1, 2, pb_field(1, 2, k) + pb_field(2, 2, v)) for k, v in entries)
    return pb_field(1, 2, fmap)


def example_payloads():
    rng = np.random.default_rng(4)
    inf, nan = float("inf"), float("nan")
    big_floats = rng.standard_normal(1000).astype(np.float32).tolist()
    exs = [
        example({
            "bytes": ("bytes", [b"a", b"", b"\x00\xff\xfe binary", "ünïcödé".encode(), b"\"quoted\"\\", b"x" * 3000]),
            "bytes_one_empty": ("bytes", [b""]),
            "floats": ("float", [1.5, nan, -0.0, 0.0, inf, -inf, 3.4028234663852886e38, -3.4028234663852886e38,
                                 1.401298464324817e-45, 1.1754943508222875e-38, 0.1, -1e-10, 16777217.0]),
            "int64s": ("int64", [0, -1, 1, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, 127, 128, -128,
                                 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53 + 1, -(2 ** 53) - 1]),
            "empty_bytes": ("bytes", []),
            "empty_floats": ("float", []),
            "empty_int64s": ("int64", []),
            "no_kind": ("none", None),
            "name with space, \"quote\", ünï": ("int64", [42]),
            "": ("bytes", [b"empty name"]),
        }),
        example({"label": ("int64", [3])}),
        example({"big_floats": ("float", big_floats),
                 "big_int64s": ("int64", rng.integers(INT64_MIN, INT64_MAX, 500, dtype=np.int64, endpoint=True).tolist()),
                 "many_bytes": ("bytes", [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes()
                                          for n in rng.integers(0, 50, 200)])}),
        example({"only_no_kind": ("none", None)}),
        example({}),                               # an Example with no features: empty payload
        tf.train.Example(features=tf.train.Features()).SerializeToString(),  # features set, empty map
        unpacked_example(),
        # unknown fields (a newer schema's, say): TensorFlow parses the
        # features and keeps the rest; cat's json must keep it in "_raw"
        example({"k": ("int64", [1])}) + pb_field(3, 0, pb_varint(5)) + pb_field(9, 2, b"later"),
    ]
    # the unpacked encoding must mean to TensorFlow what it is meant to mean
    ex = tf.train.Example.FromString(unpacked_example())
    f = ex.features.feature
    check("hand-encoded unpacked Example parses in TensorFlow",
          list(f["f"].float_list.value) == [1.0, -2.5, 0.0] and
          list(f["i"].int64_list.value) == [1, -1, INT64_MIN, 300] and
          list(f["m"].int64_list.value) == [7, 8, 9], str(ex))
    return exs


def direction_tf_to_tools():
    d = os.path.join(SCRATCH, "tf2tools")
    os.makedirs(d)
    sets = {"raw": (raw_payloads(), False), "examples": (example_payloads(), True)}
    for kind, (payloads, is_ex) in sets.items():
        for comp in ("none", "gzip", "zlib"):
            path = os.path.join(d, "%s.tfrecord%s" % (kind, SUFFIX[comp]))
            tf_write(path, payloads, TF_COMPRESSION[comp])
            back = tf_read([path], TF_COMPRESSION[comp])
            check("tf %s %s: TensorFlow reads back what it wrote" % (kind, comp), back == payloads,
                  first_difference(payloads, back))
            group("tf %s %s" % (kind, comp), check_tools_read, "tf %s %s" % (kind, comp), path, payloads, is_ex)

    # The Example with unknown fields (the last one): its json line keeps
    # the whole payload in "_raw", next to the features TensorFlow sees.
    out = tool("cat", "--format", "json", os.path.join(d, "examples.tfrecord"))
    last = json.loads(out.stdout.decode().split("\n")[-2])
    check("unknown fields: cat json adds _raw, the whole payload",
          "_raw" in last and base64.b64decode(last["_raw"]) == sets["examples"][0][-1]
          and last.get("k") == {"int64": [1]}, repr(last)[:300])

    # A plain file whose first bytes look like a zlib header (78 9c: a first
    # record of 0x9c78 bytes) must still be read as uncompressed.
    path = os.path.join(d, "zlib-lookalike.tfrecord")
    payloads = [b"z" * 0x9c78, b"next"]
    tf_write(path, payloads, "")
    with open(path, "rb") as f:
        head = f.read(2)
    check("zlib lookalike starts with 78 9c", head == b"\x78\x9c", head.hex())
    check_tools_read("tf zlib-lookalike", path, payloads, False)

    # recordio-pack --from tfrecord: TF's GZIP file -> lz4 -> none, TF reads it the same.
    for kind, (payloads, _) in sets.items():
        group("pack --from tfrecord %s" % kind, repack, d, kind, payloads)


def repack(d, kind, payloads):
    name = "pack --from tfrecord %s gzip->lz4->none" % kind
    src = os.path.join(d, "%s.tfrecord.gz" % kind)
    p4 = os.path.join(d, "re-%s-lz4" % kind)
    p0 = os.path.join(d, "re-%s-none" % kind)
    if tool_ok(name + ": pack to lz4 exits 0", "pack", "--from", "tfrecord", "--output", p4,
               "--compression", "lz4", "-q", src) is None:
        return
    f4 = p4 + "-00000-of-00001.tfrecord.lz4"
    if shutil.which("lz4"):
        plain = os.path.join(d, "re-%s-lz4-decompressed.tfrecord" % kind)
        lz4_decompress(f4, plain)
        got = tf_read([plain], "")
        check(name + ": lz4 -d of the lz4 shard reads in TensorFlow", got == payloads,
              first_difference(payloads, got))
    if tool_ok(name + ": pack back to none exits 0", "pack", "--from", "tfrecord", "--output", p0,
               "--compression", "none", "-q", f4) is None:
        return
    got = tf_read([p0 + "-00000-of-00001.tfrecord"], "")
    check(name + ": TensorFlow reads the original payloads", got == payloads, first_difference(payloads, got))


def golden_file(f):
    path = os.path.join(TESTDATA, f)
    payloads = tf_read([path], "GZIP" if f.endswith(".gz") else "")
    name = "golden " + f
    out = tool_ok(name + ": cat --format hex exits 0", "cat", "--format", "hex", path)
    if out is not None:
        got = out.decode().split("\n")[:-1]
        want = [p.hex() for p in payloads]
        check(name + ": cat --format hex equals TensorFlow's payloads", got == want, first_difference(want, got))
    check_json(name, path, payloads)


def sequence_golden_parsed(f):
    """The SequenceExample golden file: recordio-cat's json of every record
    equals what tf.io.parse_single_sequence_example makes of it (the op a
    pipeline uses), list by list, step by step."""
    path = os.path.join(TESTDATA, f)
    payloads = tf_read([path], "GZIP" if f.endswith(".gz") else "")
    out = tool_ok("golden %s: cat --format json exits 0" % f, "cat", "--format", "json", path)
    if out is None:
        return
    lines = out.decode().split("\n")[:-1]
    bad = None
    for i, (line, p) in enumerate(zip(lines, payloads)):
        obj = json.loads(line, parse_int=str, parse_float=str)  # "-0" stays negative
        dtype = {"bytes": tf.string, "int64": tf.int64, "float": tf.float32}
        ctx_spec = {k: tf.io.VarLenFeature(dtype[next(iter(v))])
                    for k, v in obj["context"].items() if next(iter(v)) != "none"}
        seq_spec = {}
        for k, steps in obj["feature_lists"].items():
            kinds = {next(iter(s)) for s in steps} - {"none"}
            if len(kinds) == 1:
                seq_spec[k] = tf.io.RaggedFeature(dtype[kinds.pop()])
        ctx, seq = tf.io.parse_single_sequence_example(p, ctx_spec, seq_spec)
        for k in ctx_spec:
            want = list(ctx[k].values.numpy())
            got = decode_values(obj["context"][k])
            if not same_values(want, got):
                bad = "record %d: context %r: TensorFlow %r, cat %r" % (i, k, want, got)
        for k in seq_spec:
            want = [list(r) for r in seq[k].to_list()]
            got = [decode_values(s) for s in obj["feature_lists"][k]]
            if not all(same_values(w, g) for w, g in zip(want, got)) or len(want) != len(got):
                bad = "record %d: feature list %r: TensorFlow %r, cat %r" % (i, k, want, got)
        if bad:
            break
    check("golden %s: json equals tf.io.parse_single_sequence_example" % f,
          bad is None and len(lines) == len(payloads), bad or "%d lines" % len(lines))


def decode_values(v):
    """The values of one {"KIND": [values]} as Python values."""
    kind, values = next(iter(v.items()))
    if kind == "bytes":
        return [base64.b64decode(x) for x in values]
    if kind == "float":
        return [json_float(x) for x in values]
    return [int(x) for x in values]


def same_values(want, got):
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        if isinstance(w, bytes):
            if w != g:
                return False
        elif isinstance(w, (float, np.floating)):
            if not same_float32(float(w), float(g)):
                return False
        elif int(w) != int(g):
            return False
    return True


def golden_files():
    """The TensorFlow-written golden files: the tools' hex and json against TF."""
    files = sorted(f for f in os.listdir(TESTDATA) if ".tfrecord" in f)
    check("golden files found in " + TESTDATA, len(files) >= 7, "found %r" % files)
    for f in files:
        if f.startswith("tf-sequence-example"):
            group("golden %s parsed" % f, sequence_golden_parsed, f)
    for f in files:
        group("golden " + f, golden_file, f)


def main():
    group("TensorFlow reads what recordio-pack writes", direction_pack_to_tf)
    group("TensorFlow reads csv nan and inf as floats", pack_csv_specials_to_tf)
    group("the tools read what TensorFlow writes", direction_tf_to_tools)
    group("golden files", golden_files)
    print("DONE %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
