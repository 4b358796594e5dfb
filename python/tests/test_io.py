"""Reader, Writer and the Example codec against the C tools and the
TensorFlow-written files of tests/data."""
import glob
import json
import os

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
                elif kind == "bytes":
                    assert len(v) == len(values)
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


def test_expand_lists_a_set(shards):
    paths = recordio.expand(shards)
    assert paths == sorted(glob.glob(shards + "-*-of-00004.tfrecord"))
