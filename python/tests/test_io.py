"""Reader, Writer and the Example codec against the C tools and the
TensorFlow-written files of tests/data; the values Example.build keeps or
refuses, the paths Writer refuses, and each error class raised for real."""
import base64
import decimal
import errno
import fractions
import glob
import json
import os
import stat

import numpy as np
import pytest

import recordio
from conftest import N_RECORDS, run_tool

TF_FILES = ["tfx-mnist.tfrecord", "tfx-penguin-train.tfrecord.gz",
            "tfx-external-00001-of-00002.tfrecord.gz", "tf-singles.tfrecord",
            "tf-mixed-types.tfrecord", "tf-sequence-example.tfrecord",
            "tf-sequence-example.tfrecord.gz", "events.out.tfevents.tf-2-x"]


def cat_hex(path):
    out = run_tool("recordio-cat", "-f", "hex", path).decode()
    return [bytes.fromhex(line) for line in out.splitlines()]


@pytest.mark.parametrize("name", TF_FILES)
def test_reader_matches_recordio_cat(testdata, name):
    path = os.path.join(testdata, name)
    records = list(recordio.Reader(path))
    assert records == cat_hex(path)
    assert len(records) == int(run_tool("recordio-cat", "-c", path))


@pytest.mark.parametrize("name", ["tfx-mnist.tfrecord", "tfx-penguin-train.tfrecord.gz",
                                  "tf-sequence-example.tfrecord.gz"])
def test_random_access(testdata, name):
    path = os.path.join(testdata, name)
    records = cat_hex(path)
    with recordio.Reader(path) as r:
        assert len(r) == len(records)
        for i in (0, 1, len(records) // 2, len(records) - 1):
            assert r[i] == records[i]
        assert r[-1] == records[-1]
        with pytest.raises(IndexError):
            r[len(records)]


def test_reader_over_a_shard_set_and_its_idx(shards):
    r = recordio.Reader(shards)
    assert len(r.paths) == 4 and len(r) == N_RECORDS
    assert list(r) == cat_hex(shards)
    assert all(os.path.exists(p + ".idx") for p in r.paths)
    assert r[N_RECORDS - 1] == cat_hex(r.paths[-1])[-1]


def test_example_parse_matches_recordio_cat_json(testdata):
    for name in ("tfx-mnist.tfrecord", "tf-mixed-types.tfrecord",
                 "tfx-external-00001-of-00002.tfrecord.gz"):
        path = os.path.join(testdata, name)
        lines = run_tool("recordio-cat", "-f", "json", "-n", "20", path).splitlines()
        for payload, line in zip(recordio.Reader(path), lines):
            want = json.loads(line)
            got = recordio.Example.parse(payload)
            assert list(got) == [k for k in want if k != "_raw"]
            for k, v in got.items():
                (kind, values), = want[k].items() if want[k] else (("none", None),)
                if v is None:
                    assert want[k] == {"none": []}
                elif kind == "bytes":  # recordio-cat writes bytes in base64
                    assert v == [base64.b64decode(x) for x in values]
                elif kind == "int64":
                    assert v.dtype == np.int64 and v.tolist() == [int(x) for x in values]
                else:
                    assert v.dtype == np.float32
                    np.testing.assert_array_equal(v, np.array(values, dtype=np.float32))


@pytest.mark.parametrize("name", ["tfx-mnist.tfrecord", "tf-mixed-types.tfrecord",
                                  "tf-singles.tfrecord", "tfx-penguin-train.tfrecord.gz"])
def test_example_build_is_byte_identical_to_tensorflow(testdata, name):
    for payload in list(recordio.Reader(os.path.join(testdata, name)))[:50]:
        assert recordio.Example.build(recordio.Example.parse(payload)) == payload


def test_example_build_from_python_values():
    data = recordio.Example.build({
        "image": np.arange(6, dtype=np.uint8).reshape(2, 3),   # int64 list
        "raw": ("bytes", b"\x00\x01"), "name": "cat", "names": [b"a", "b"],
        "label": 7, "score": 0.5, "floats": np.array([[1.5, 2.5]]),
        "ints": [1, -2, 2 ** 62], "empty": ("int64", []), "unset": None})
    ex = recordio.Example.parse(data)
    assert ex["image"].tolist() == [0, 1, 2, 3, 4, 5]
    assert ex["raw"] == [b"\x00\x01"] and ex["name"] == [b"cat"] and ex["names"] == [b"a", b"b"]
    assert ex["label"].tolist() == [7] and ex["score"].tolist() == [0.5]
    assert ex["floats"].dtype == np.float32 and ex["floats"].tolist() == [1.5, 2.5]
    assert ex["ints"].tolist() == [1, -2, 2 ** 62] and ex["empty"].size == 0
    assert ex["unset"] is None
    with pytest.raises(recordio.ExampleError):
        recordio.Example.parse(b"\x0a\x05\x01")


def test_sequence_example(testdata):
    for name in ("tf-sequence-example.tfrecord", "tf-sequence-example.tfrecord.gz"):
        first = next(iter(recordio.Reader(os.path.join(testdata, name))))
        context, lists = recordio.SequenceExample.parse(first)
        assert context["id"] == [b"seq-0"] and context["length"].tolist() == [3]
        assert lists["tokens"] == [[b"the"], [b"cat"], [b"sat", b"!"]]
        assert lists["ids"][2].tolist() == [-1, 2 ** 63 - 1]
        assert np.isnan(lists["scores"][1][0]) and lists["scores"][2][0] == -np.inf


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib", "lz4"])
def test_writer_roundtrip_every_codec(tmp_path, compression):
    path = str(tmp_path / ("out.tfrecord" + {"none": "", "gzip": ".gz", "zlib": ".zz",
                                            "lz4": ".lz4"}[compression]))
    payloads = [recordio.Example.build({"i": i, "b": b"x" * i}) for i in range(300)]
    with recordio.Writer(path, index=True) as w:
        assert w.compression == compression
        for p in payloads:
            w.write(p)
        assert not os.path.exists(path)  # a temporary name until close
    assert list(recordio.Reader(path)) == payloads == cat_hex(path)
    assert recordio.Reader(path)[123] == payloads[123]
    assert os.path.exists(path + ".idx")
    run_tool("recordio-verify", path)


def test_writer_exception_leaves_no_file(tmp_path):
    path = str(tmp_path / "partial.tfrecord")
    with pytest.raises(RuntimeError):
        with recordio.Writer(path) as w:
            w.write(b"one")
            raise RuntimeError("stop")
    assert os.listdir(str(tmp_path)) == []


def test_writer_without_overwrite(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with recordio.Writer(path) as w:
        w.write(b"first")
    with pytest.raises(FileExistsError):
        recordio.Writer(path, overwrite=False)
    assert list(recordio.Reader(path)) == [b"first"]


def test_damaged_shard_raises_with_file_and_offset(tmp_path, testdata):
    data = bytearray(open(os.path.join(testdata, "tfx-mnist.tfrecord"), "rb").read())
    data[3203 * 5 + 100] ^= 0xFF  # inside record 5's data
    path = str(tmp_path / "bad.tfrecord")
    open(path, "wb").write(bytes(data))
    with pytest.raises(recordio.CorruptRecordError) as e:
        list(recordio.Reader(path))
    assert e.value.file == path and e.value.offset == 3203 * 5 and e.value.record == 5
    assert path in str(e.value)
    assert isinstance(e.value, recordio.Error)
    r = recordio.Reader(path, skip_damaged=True)
    assert len(list(r)) == 999 and r.skipped == 1


def test_missing_files():
    with pytest.raises(FileNotFoundError):
        list(recordio.Reader(["/nonexistent/x.tfrecord"]))
    with pytest.raises(recordio.ShardSetError) as e:
        recordio.expand("/nonexistent/prefix-*.tfrecord")
    assert "/nonexistent/prefix-*.tfrecord" in str(e.value)
    assert e.value.file == "/nonexistent/prefix-*.tfrecord"


def test_expand_lists_a_set(shards):
    paths = recordio.expand(shards)
    assert paths == sorted(glob.glob(shards + "-*-of-00004.tfrecord"))


# ---- Example.build keeps every value exactly, or refuses it --------------

REFUSED = [  # (value, the exception) for feature "feat"
    ([[1, 2], [3, 4]], TypeError),                  # nested: was a float list
    ([None], TypeError),                            # was [nan]
    (np.array([2 ** 64 - 1], np.uint64), ValueError),  # was -1
    ({"b": 1}, TypeError),                          # a dict: was [b'b']
    (("int64", [2.7, -3.9]), ValueError),           # was [2, -3]
    (2 ** 63, ValueError),                          # outside int64
    ([1, -2 ** 63 - 1], ValueError),
    (1 + 2j, TypeError),                            # was "'complex' object is not iterable"
    (decimal.Decimal("1.5"), TypeError),
    (fractions.Fraction(1, 3), TypeError),
    ({1, 2}, TypeError),                            # unordered
    (np.array([1j]), TypeError),
    (np.complex64(1), TypeError),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), TypeError),
    (np.array([np.array([1, 2]), np.array([3])], dtype=object), TypeError),
    (np.array([1, None], dtype=object), TypeError),
    (1e39, ValueError),                             # was inf: beyond float32
    (np.array([1e300]), ValueError),
    (np.array([1e300], np.longdouble), ValueError),
    ([1.5, 2 ** 2000], ValueError),
    (("int64", [float("nan")]), ValueError),
    (("int64", np.array([2.0 ** 63])), ValueError),
    (("int64", np.array([0.5])), ValueError),
    (("bytes", [1, 2]), TypeError),
    (("bytes", np.arange(3, dtype=np.uint8)), TypeError),  # give .tobytes()
    (("float", ["1.5"]), TypeError),                # was parsed to 1.5
    (("int64", np.array(["7"])), TypeError),
    ([b"x", 1], TypeError),
    (np.ma.masked_array([1, 2], mask=[0, 1]), ValueError),
    ([], TypeError),                                # no kind
    (object(), TypeError),
    (("double", [1.0]), TypeError),                 # no such kind
    ("\udc80", ValueError),                         # no UTF-8
    ([b"a", "\udc80"], ValueError),
]


@pytest.mark.parametrize("value,exc", REFUSED, ids=[repr(v)[:40] for v, _ in REFUSED])
def test_example_build_refuses_what_it_cannot_keep(value, exc):
    with pytest.raises(exc) as e:
        recordio.Example.build({"ok": 1, "feat": value})
    assert "feat" in str(e.value)


def test_example_build_refuses_names_it_would_change():
    with pytest.raises(ValueError, match="NUL"):
        recordio.Example.build({"label\0junk": 1})
    with pytest.raises(TypeError, match="b'label'"):
        recordio.Example.build({b"label": 1})
    with pytest.raises(ValueError, match="surrogate"):
        recordio.Example.build({"\udc80": 1})


KEPT = [  # (value, what Example.parse gives back)
    (True, [1]), ([True, False, 3], [1, 0, 3]),
    (np.array([[True], [False]]), [1, 0]),
    (np.array(5), [5]), (np.int8(-3), [-3]), (np.uint64(2 ** 63 - 1), [2 ** 63 - 1]),
    (np.array([2 ** 63 - 1], np.uint64), [2 ** 63 - 1]),
    ([-2 ** 63, 2 ** 63 - 1], [-2 ** 63, 2 ** 63 - 1]),
    (("int64", [2.0, -3.0]), [2, -3]), (("int64", np.array([4.0, -1.0])), [4, -1]),
    (range(3), [0, 1, 2]), ((x for x in (7, 8)), [7, 8]),
    (np.float16(1.5), [1.5]), (np.array([[0.25, -2.0]], np.float16), [0.25, -2.0]),
    (np.longdouble(0.5), [0.5]), ([1, 2.5, np.float32(-1)], [1.0, 2.5, -1.0]),
    (("float", [1, 2]), [1.0, 2.0]), (float("inf"), [float("inf")]),
    (np.array([3.4028234663852886e38]), [3.4028234663852886e38]),  # float32's largest
    (memoryview(b"abcdef")[::2], [b"ace"]), (bytearray(b"xy"), [b"xy"]),
    (np.array(["a", b"b"], dtype=object), [b"a", b"b"]),
    (np.array([b"ab", b"c"]), [b"ab", b"c"]), (np.array(["é"]), ["é".encode()]),
    (np.bytes_(b"z"), [b"z"]), ("café", ["café".encode()]),
    (("bytes", []), []), (("float", []), []),
]


@pytest.mark.parametrize("value,want", KEPT, ids=[repr(v)[:40] for v, _ in KEPT])
def test_example_build_keeps_values_exactly(value, want):
    got = recordio.Example.parse(recordio.Example.build({"feat": value}))["feat"]
    got = got if isinstance(got, list) else got.tolist()
    assert got == want
    assert [type(x) for x in got] == [type(x) for x in want]


# ---- Writer: only a regular file is ever replaced ------------------------

def make_nodes(d):
    """A FIFO, a character node like /dev/null (root only), a link to a
    regular file, a dangling link and a directory in d: {name: path}."""
    nodes = {"fifo": d / "fifo", "link": d / "link", "dangling": d / "dangling",
             "dir": d / "dir"}
    os.mkfifo(str(nodes["fifo"]))
    (d / "target.tfrecord").write_bytes(b"target")
    os.symlink("target.tfrecord", str(nodes["link"]))
    os.symlink("nothing-here", str(nodes["dangling"]))
    os.mkdir(str(nodes["dir"]))
    try:  # made in the test's directory, never on /dev itself
        os.mknod(str(d / "null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
        nodes["device"] = d / "null"
    except PermissionError:
        pass
    return nodes


def snapshot(d):
    """Each entry of d and what it is (type, device, link target)."""
    out = {}
    for name in os.listdir(str(d)):
        st = os.lstat(str(d / name))
        out[name] = (stat.S_IFMT(st.st_mode), st.st_rdev,
                     os.readlink(str(d / name)) if stat.S_ISLNK(st.st_mode) else None)
    return out


@pytest.mark.parametrize("kind", ["fifo", "device", "link", "dangling", "dir"])
@pytest.mark.parametrize("index", [False, True])
def test_writer_refuses_what_is_not_a_regular_file(tmp_path, kind, index):
    nodes = make_nodes(tmp_path)
    if kind not in nodes:
        pytest.skip("os.mknod needs root (CI runs as root)")
    path = str(nodes[kind])
    before = snapshot(tmp_path)
    want = recordio.SystemCallError if kind == "dir" else recordio.UnsupportedError
    with pytest.raises(want) as e:  # at open, before any write
        recordio.Writer(path, index=index)
    assert e.value.file == path and path in str(e.value)
    assert "not a regular file" in str(e.value)
    if kind == "dir":
        assert isinstance(e.value, IsADirectoryError)
    assert snapshot(tmp_path) == before  # nothing replaced, no temporary left
    assert (tmp_path / "target.tfrecord").read_bytes() == b"target"


def test_writer_refuses_a_non_regular_idx(tmp_path):
    path = str(tmp_path / "out.tfrecord")
    os.mkfifo(path + ".idx")
    with pytest.raises(recordio.UnsupportedError) as e:
        recordio.Writer(path, index=True)  # refused at open, not after the shard is in place
    assert e.value.file == path + ".idx"
    assert sorted(os.listdir(str(tmp_path))) == ["out.tfrecord.idx"]
    with recordio.Writer(path) as w:  # without index=True the .idx is no concern
        w.write(b"x")
    assert stat.S_ISFIFO(os.lstat(path + ".idx").st_mode)


def test_writer_refuses_at_close_what_appeared_meanwhile(tmp_path):
    path = str(tmp_path / "out.tfrecord")
    w = recordio.Writer(path)
    w.write(b"one")
    os.mkfifo(path)
    with pytest.raises(recordio.UnsupportedError):
        w.close()
    assert os.listdir(str(tmp_path)) == ["out.tfrecord"]  # the FIFO, no temporary
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_writer_level_out_of_range(tmp_path):
    for name, level in (("a.tfrecord.gz", 99), ("a.tfrecord.zz", -1), ("a.tfrecord.lz4", 13),
                        ("a.tfrecord", 5), ("a.tfrecord.gz", 1.5)):
        with pytest.raises(ValueError, match="level=%r" % (level,)):
            recordio.Writer(str(tmp_path / name), level=level)
    assert os.listdir(str(tmp_path)) == []
    with recordio.Writer(str(tmp_path / "b.tfrecord.lz4"), level=12) as w:
        w.write(b"x")
    assert list(recordio.Reader(str(tmp_path / "b.tfrecord.lz4"))) == [b"x"]


def test_reader_indices(testdata):
    r = recordio.Reader(os.path.join(testdata, "tfx-mnist.tfrecord"))
    assert r[np.int64(3)] == r[3] == r[np.uint8(3)] and r[-1000] == r[0]
    with pytest.raises(IndexError, match="record -1001 of 1000"):
        r[-1001]
    with pytest.raises(TypeError, match="float"):
        r[1.0]


def test_writer_abort(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with recordio.Writer(path) as w:
        w.write(b"first")
    w = recordio.Writer(path, index=True)
    for i in range(100):
        w.write(b"x" * i)
    assert w.records == 100 and len(os.listdir(str(tmp_path))) == 2  # a.tfrecord, temporary
    w.abort()
    assert os.listdir(str(tmp_path)) == ["a.tfrecord"]  # no temporary, no .idx
    assert list(recordio.Reader(path)) == [b"first"]  # the earlier file untouched
    with pytest.raises(ValueError, match="closed"):
        w.write(b"late")
    w.abort()  # twice, and close after abort: no-ops that publish nothing
    w.close()
    assert os.listdir(str(tmp_path)) == ["a.tfrecord"]


# ---- each error class, raised by a real failure --------------------------

def test_random_access_error_names_the_record(tmp_path):
    path = str(tmp_path / "many.tfrecord")
    with recordio.Writer(path, index=True) as w:
        for i in range(8000):
            w.write(b"%06d" % i)
    data = bytearray(open(path, "rb").read())
    data[7500 * 22 + 12] ^= 0xFF  # record 7500's data (22-byte frames)
    open(path, "wb").write(bytes(data))
    r = recordio.Reader(path)
    assert r[7499] == b"007499" and r[7501] == b"007501"
    with pytest.raises(recordio.CorruptRecordError) as by_index:
        r[7500]
    with pytest.raises(recordio.CorruptRecordError) as in_order:
        list(recordio.Reader(path))
    for e in (by_index.value, in_order.value):
        assert (e.file, e.offset, e.record) == (path, 7500 * 22, 7500)
        assert "(record 7500)" in str(e)
    assert str(by_index.value) == str(in_order.value)


def test_index_file_error(tmp_path):
    path = str(tmp_path / "s.tfrecord")
    with recordio.Writer(path, index=True) as w:
        for i in range(10):
            w.write(b"r%d" % i)
    good = open(path + ".idx").read()
    open(path + ".idx", "w").write(good.replace("\n", "\nnot numbers\n", 1))
    with pytest.raises(recordio.IndexFileError) as e:
        recordio.Reader(path)[3]
    assert e.value.file == path + ".idx" and path + ".idx" in str(e.value)
    other = str(tmp_path / "other.tfrecord")  # as long, its last two records split unlike
    with recordio.Writer(other, index=True) as w:
        for i in range(10):
            w.write(b"r%d" % i if i < 8 else b"x" if i == 8 else b"r9x")
    os.replace(other + ".idx", path + ".idx")  # well formed, but not this shard's
    r = recordio.Reader(path)
    assert r[7] == b"r7"
    with pytest.raises(recordio.IndexFileError) as e:
        r[8]
    assert e.value.file == path and e.value.record == 8 and "index says" in str(e.value)


def test_unsupported_error(gz_shards):
    with pytest.raises(recordio.UnsupportedError) as e:
        recordio.Loader(gz_shards, batch_size=8, shuffle="global")
    assert e.value.file is not None and e.value.file in str(e.value)


def test_system_call_error_without_a_file():
    with pytest.raises(recordio.SystemCallError) as e:  # the C loader names no file here
        recordio.Loader("/nonexistent-dir/x.tfrecord,/nonexistent-dir/y.tfrecord")
    assert e.value.filename is None and not str(e.value).endswith("None"), str(e.value)


def test_system_call_error(tmp_path):
    loop = str(tmp_path / "loop.tfrecord")
    os.symlink("loop.tfrecord", loop)  # ELOOP: no builtin OSError subclass
    with pytest.raises(recordio.SystemCallError) as e:
        list(recordio.Reader([loop]))
    assert type(e.value) is recordio.SystemCallError and isinstance(e.value, OSError)
    assert e.value.errno == errno.ELOOP and e.value.filename == loop and loop in str(e.value)
    plain = str(tmp_path / "plain")
    open(plain, "w").close()
    with pytest.raises(NotADirectoryError) as e:  # and the builtin one where there is one
        recordio.Writer(plain + "/x.tfrecord")
    assert isinstance(e.value, recordio.SystemCallError) and e.value.errno == errno.ENOTDIR
    with pytest.raises(IsADirectoryError) as e:
        list(recordio.Reader([str(tmp_path)]))
    assert isinstance(e.value, recordio.SystemCallError)


# ---- an index never counts another file's records ------------------------

def test_writer_removes_the_index_of_the_file_it_replaces(tmp_path):
    path = str(tmp_path / "s.tfrecord")
    with recordio.Writer(path, index=True) as w:
        for i in range(10):
            w.write(b"old%d" % i)
    with recordio.Writer(path) as w:  # index=False: the old .idx listed 10 records
        for i in range(20):
            w.write(b"new%02d" % i)
    assert os.listdir(str(tmp_path)) == ["s.tfrecord"]
    r = recordio.Reader(path)
    assert len(r) == 20 and r[15] == b"new15"  # len() was 10, from the old .idx
    os.mkfifo(path + ".idx")  # what is not a regular file is never removed
    with recordio.Writer(path) as w:
        w.write(b"x")
    assert stat.S_ISFIFO(os.lstat(path + ".idx").st_mode)


def test_reader_refuses_an_index_of_another_file(tmp_path):
    path, other = str(tmp_path / "s.tfrecord"), str(tmp_path / "o.tfrecord")
    with recordio.Writer(path, index=True) as w:
        for i in range(10):
            w.write(b"A%03d" % i)
    with recordio.Writer(other) as w:
        for i in range(20):
            w.write(b"B%03d" % i)
    os.replace(other, path)  # the shard replaced by another program: its .idx stays
    with pytest.raises(recordio.IndexFileError) as e:
        len(recordio.Reader(path))  # it said 10 records
    assert e.value.file == path + ".idx"
    assert "10 records end at byte 200, the shard is 400 bytes" in str(e.value)
    skip = recordio.Reader(path, skip_damaged=True)  # the shard scanned instead
    assert len(skip) == 20 and skip[19] == b"B019"


def test_reader_skip_damaged_random_access_without_idx(tmp_path):
    """The scan of a shard without .idx under skip_damaged lists its whole
    records (it raised TypeError: its array could not be viewed)."""
    path = str(tmp_path / "d.tfrecord")
    with recordio.Writer(path) as w:
        for i in range(10):
            w.write(b"%04d" % i)
    data = bytearray(open(path, "rb").read())
    data[3 * 20 + 12] ^= 0xFF  # record 3's data (20-byte frames)
    open(path, "wb").write(bytes(data))
    r = recordio.Reader(path, skip_damaged=True)
    assert len(r) == 9 and r[3] == b"0004" and r[-1] == b"0009"


def test_integer_options_take_numpy_integers_not_bools(tmp_path):
    path = str(tmp_path / "a.tfrecord.gz")
    with recordio.Writer(path, level=np.int64(5)) as w:  # was "level=5: want 0 to 9"
        w.write(b"x")
    assert list(recordio.Reader(path, max_record_size=np.uint32(100))) == [b"x"]
    for bad in (True, 1.0):
        with pytest.raises(ValueError, match="level=%r" % (bad,)):
            recordio.Writer(path, level=bad)
        with pytest.raises(ValueError, match="max_record_size=%r" % (bad,)):
            recordio.Reader(path, max_record_size=bad)


def test_compression_names_checked_at_construction(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    w = recordio.Writer(path, compression="GZ", level=5)  # the C library's alias, any case
    assert w.compression == "gzip"
    w.abort()
    for bad in ("bogus", 5, b"gzip", "auto"):  # None: from the name
        with pytest.raises(ValueError, match="Writer: compression="):
            recordio.Writer(path, compression=bad)
    for bad in ("bogus", None, b"none"):
        with pytest.raises(ValueError, match="Reader: compression="):
            recordio.Reader(path, compression=bad)  # it was said only when reading
    assert os.listdir(str(tmp_path)) == []
