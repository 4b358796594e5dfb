"""recordio.Loader over shards made by recordio-pack: values, zero copy,
lifetimes, resume, damage, and memory over many batches."""
import gc
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import recordio
from conftest import DECODE, N_RECORDS, record_ids


def epoch(loader):
    """One epoch as (images, labels), copied."""
    images, labels = [], []
    for b in loader:
        images.append(b["image"].copy())
        labels.append(b["label"].copy())
    return np.concatenate(images), np.concatenate(labels)


def records_of(images, labels):
    return sorted((int(l), im.tobytes()) for im, l in zip(images, labels))


def test_shard_order_matches_the_dataset_and_recordio_cat(shards, dataset):
    images, labels, _ = dataset
    with recordio.Loader(shards, batch_size=128, decode=DECODE, shuffle="none") as loader:
        assert len(loader) == (N_RECORDS + 127) // 128 and loader.records == N_RECORDS
        got_images, got_labels = epoch(loader)
    np.testing.assert_array_equal(got_images, images)
    np.testing.assert_array_equal(got_labels, labels)
    # the same as the Example codec over recordio-cat's view of the shards
    first = recordio.Example.parse(next(iter(recordio.Reader(shards))))
    assert first["image"][0] == images[0].tobytes() and first["label"][0] == labels[0]


@pytest.mark.parametrize("shuffle", ["buffer", "global"])
def test_shuffled_epochs_hold_every_record_once(shards, dataset, shuffle):
    images, labels, _ = dataset
    loader = recordio.Loader(shards, batch_size=100, decode=DECODE, shuffle=shuffle, seed=3)
    e0 = epoch(loader)
    e1 = epoch(loader)
    assert records_of(*e0) == records_of(*e1) == records_of(images, labels)
    assert not np.array_equal(e0[1], labels) and not np.array_equal(e0[1], e1[1])
    again = recordio.Loader(shards, batch_size=100, decode=DECODE, shuffle=shuffle, seed=3,
                            workers=3)
    np.testing.assert_array_equal(epoch(again)[1], e0[1])  # workers never change the order


def test_compressed_shards_and_f32_scale(gz_shards, dataset):
    images, labels, _ = dataset
    loader = recordio.Loader(gz_shards, batch_size=64, shuffle="none",
                             decode={"image": ("f32", 784, 1 / 255), "label": ("i64", 1)})
    b = next(loader)
    assert b["image"].dtype == np.float32 and b["image"].shape == (64, 784)
    assert b["label"].shape == (64, 1)
    np.testing.assert_allclose(b["image"], images[:64].reshape(64, 784) / 255, rtol=1e-6)
    np.testing.assert_array_equal(b["label"][:, 0], labels[:64])


@pytest.mark.parametrize("shuffle", ["none", "buffer"])
def test_cache_gives_the_same_batches(gz_shards, shuffle):
    def epochs(loader):
        return [[b[k].copy() for k in sorted(b)] for _ in range(2) for b in loader]
    opts = dict(batch_size=64, shuffle=shuffle, seed=4, decode=DECODE, world=2, rank=1)
    plain = recordio.Loader(gz_shards, **opts)
    cached = recordio.Loader(gz_shards, cache=1 << 30, **opts)
    small = recordio.Loader(gz_shards, cache=1000, **opts)
    assert plain.stats()["cache_bytes"] == 0 and small.stats()["cache_bytes"] == 0
    assert cached.stats()["cache_bytes"] > 0
    a, b, c = epochs(plain), epochs(cached), epochs(small)
    assert len(a) == len(b) == len(c) > 0
    for x, y, z in zip(a, b, c):
        for u, v, w in zip(x, y, z):
            np.testing.assert_array_equal(u, v)
            np.testing.assert_array_equal(u, w)


def test_undecoded_batches_are_lists_of_bytes(shards):
    payloads = list(recordio.Reader(shards))
    loader = recordio.Loader(shards, batch_size=300, shuffle="none")
    got = [p for batch in loader for p in batch]
    assert all(isinstance(p, bytes) for p in got) and got == payloads


def test_tensorflow_written_file(testdata):
    path = os.path.join(testdata, "tfx-mnist.tfrecord")
    want = [recordio.Example.parse(p) for p in recordio.Reader(path)]
    loader = recordio.Loader(path, batch_size=256, shuffle="none",
                             decode={"image_floats": ("f32", (28, 28)),
                                     "image_class": ("i64", ())})
    floats = np.concatenate([b["image_floats"].copy() for b in loader])
    assert floats.shape == (1000, 28, 28)
    np.testing.assert_array_equal(floats.reshape(1000, 784),
                                  np.stack([w["image_floats"] for w in want]))


def test_arrays_are_views_of_the_batch_memory(shards):
    loader = recordio.Loader(shards, batch_size=32, decode=DECODE, shuffle="none")
    b = next(loader)
    for name, a in b.items():
        assert not a.flags.owndata
        assert isinstance(a.base, recordio._core.Column) and a.base.name == name
        assert a.__array_interface__["data"][0] == a.base.address
        assert a.flags.writeable and a.flags.c_contiguous
    # both columns live in the one batch slot
    assert b["image"].base.batch is b["label"].base.batch
    assert loader._c.live_batches == 1
    del b, a
    gc.collect()
    assert loader._c.live_batches == 0  # the slot went back with the last view


def test_a_batch_kept_alive_keeps_its_values(shards, dataset):
    images, labels, _ = dataset
    # hold=3: the kept batch, the loop's previous batch and the next one
    loader = recordio.Loader(shards, batch_size=16, decode=DECODE, shuffle="none", hold=3)
    kept = next(loader)
    kept_image = kept["image"]  # only one array: its Column keeps the slot
    del kept
    for _ in range(5):  # many times round the pool
        for b in loader:
            b["image"][:] = 0  # the caller may write into its batches
    np.testing.assert_array_equal(kept_image, images[:16])


def test_holding_too_many_batches_is_an_error(shards):
    loader = recordio.Loader(shards, batch_size=16, decode=DECODE, shuffle="none", hold=2)
    kept = [next(loader), next(loader)]
    with pytest.raises(recordio.HoldError, match="hold=2"):
        next(loader)
    kept.pop()
    assert next(loader)["image"].shape == (16, 28, 28)


@pytest.mark.parametrize("shuffle", ["none", "buffer", "global"])
def test_resume_mid_epoch(shards, shuffle):
    opts = dict(batch_size=64, decode=DECODE, shuffle=shuffle, seed=11, shuffle_buffer=500)
    a = recordio.Loader(shards, **opts)
    epoch(a)  # resume in the second epoch: the epoch is part of the state
    for _ in range(7):
        next(a)
    state = a.state_dict()
    rest = epoch(a)
    b = recordio.Loader(shards, **opts)
    b.load_state_dict(state)
    assert b.epoch == 1 and b.position == 7 * 64
    resumed = epoch(b)
    np.testing.assert_array_equal(resumed[0], rest[0])
    np.testing.assert_array_equal(resumed[1], rest[1])
    assert len(rest[1]) == N_RECORDS - 7 * 64
    np.testing.assert_array_equal(epoch(b)[1], epoch(a)[1])  # and the epochs after it


def test_state_of_other_options_is_refused(shards):
    a = recordio.Loader(shards, batch_size=64, decode=DECODE, seed=1)
    next(a)
    b = recordio.Loader(shards, batch_size=32, decode=DECODE, seed=1)
    with pytest.raises(recordio.StateError):
        b.load_state_dict(a.state_dict())


def test_damaged_shard_raises_with_its_name(shards, tmp_path):
    d = str(tmp_path / "bad")
    os.makedirs(d)
    for p in recordio.expand(shards):
        for f in (p, p + ".idx"):
            shutil.copy(f, d)
    victim = sorted(os.listdir(d))[2]  # train-00001-of-00004.tfrecord
    path = os.path.join(d, victim)
    data = bytearray(open(path, "rb").read())
    data[12 + 100] ^= 0xFF  # the first record's data
    open(path, "wb").write(bytes(data))
    prefix = os.path.join(d, "train")
    loader = recordio.Loader(prefix, batch_size=50, decode=DECODE, shuffle="none")
    with pytest.raises(recordio.CorruptRecordError) as e:
        epoch(loader)
    assert e.value.file == path and e.value.offset == 0 and e.value.record == 0
    assert path in str(e.value)
    skip = recordio.Loader(prefix, batch_size=50, decode=DECODE, shuffle="none",
                           skip_damaged=True)
    assert len(epoch(skip)[1]) == N_RECORDS - 1 and skip.stats()["skipped"] == 1


def test_bad_spec_and_options(shards):
    with pytest.raises(recordio.ExampleError) as e:
        epoch(recordio.Loader(shards, batch_size=8, decode={"image": ("u8", 100)},
                              shuffle="none"))
    assert "image" in str(e.value) and e.value.file is not None
    with pytest.raises(ValueError):
        recordio.Loader(shards, decode={"image": ("f16", 784)})
    with pytest.raises(ValueError):
        recordio.Loader(shards, shuffle="sometimes")
    with pytest.raises(recordio.ShardSetError):
        recordio.Loader(shards + "-nothing-here")
    with pytest.raises(recordio.OptionError):
        recordio.Loader(shards, workers=100000)


@pytest.mark.parametrize("spec,batch_size", [
    (("u8", 2 ** 58), 64), (("i64", 2 ** 62), 32), (("u8", 2 ** 57), 128),  # wrapped: SIGBUS
    (("u8", 2 ** 30 + 1), 1), (("f32", (2 ** 40, 2 ** 40)), 1), (("u8", 2 ** 64), 1),
    (("u8", (-2, -3)), 1), (("u8", 0), 1), (("u8", (4, 0)), 1), (("u8", 2.5), 1),
    (("u8", True), 1), (("u8", "784"), 1), (("f32", 3, 0), 1), (("f32", 3, float("nan")), 1),
    (("f32", 3, 1e39), 1), (("u8", 3, 2.0), 1), (("f16", 3), 1), (("no-such-dtype", 3), 1),
])
def test_column_sizes_and_specs_refused_at_construction(shards, spec, batch_size):
    """A record's size that wraps batch_size * its bytes, and every other
    spec the C loader would read otherwise: ValueError naming the column,
    from the constructor (no batch is ever made)."""
    with pytest.raises(ValueError) as e:
        recordio.Loader(shards, batch_size=batch_size, decode={"image": spec})
    assert "image" in str(e.value)


@pytest.mark.parametrize("name", ["label\0junk", "", "x" * 128, "\udc80", b"label", 7])
def test_decode_names_the_c_loader_would_read_otherwise(shards, name):
    with pytest.raises(ValueError) as e:  # "label\0junk" was read as "label"
        recordio.Loader(shards, batch_size=8, decode={name: ("i64", ())})
    assert repr(name) in str(e.value)
    with pytest.raises(ValueError):  # the extension refuses it too, used directly
        recordio._core.Loader(shards, 8, [("label\0junk", "i64", 1, 0.0)])


@pytest.mark.parametrize("option,value", [
    ("seed", -1), ("cache", -1), ("max_record_size", -5), ("batch_size", 2 ** 70),
    ("batch_size", 0), ("workers", 2 ** 40), ("rank", -2), ("hold", 1.5), ("seed", 2 ** 64),
    ("batch_size", True),
])
def test_integer_options_never_wrap(shards, option, value):
    """cache=-1 and seed=-1 were 2**64-1; each is refused, named."""
    with pytest.raises(ValueError, match="%s=" % option):
        recordio.Loader(shards, **{option: value})


def test_sizes_as_text_mean_what_the_tools_say(gz_shards):
    """cache, chunk_bytes and max_record_size take the tools' SIZE: "1G" is
    2**30 bytes, "1GB" 10**9, a fraction needs a unit."""
    assert recordio._core.parse_size("1.5G", 2 ** 64 - 1) == 3 << 29
    assert recordio._core.parse_size("1GB", 2 ** 64 - 1) == 10 ** 9
    assert recordio._core.parse_size("0", 2 ** 64 - 1) == 0
    cached = recordio.Loader(gz_shards, cache="1G", chunk_bytes="64KiB", max_record_size="1M")
    small = recordio.Loader(gz_shards, cache="1KB")
    off = recordio.Loader(gz_shards, cache="0")
    assert cached.stats()["cache_bytes"] > 0
    assert small.stats()["cache_bytes"] == 0 and off.stats()["cache_bytes"] == 0
    assert len(list(cached)) == len(list(recordio.Loader(gz_shards))) > 0


@pytest.mark.parametrize("option", ["cache", "chunk_bytes", "max_record_size"])
@pytest.mark.parametrize("text", ["", " 1M", "1M ", "1m", "1e6", "0x10", "-1", "nan", "inf",
                                  "1.5", "1Q", "1MBB", "1Mi", "18446744073709551616",
                                  "16777216T"])
def test_sizes_the_parser_refuses(shards, option, text):
    with pytest.raises(ValueError) as e:
        recordio.Loader(shards, **{option: text})
    assert str(e.value).startswith("Loader: %s=%r: " % (option, text))
    assert "\n" not in str(e.value)


def test_reader_takes_a_size_too(shards):
    assert len(list(recordio.Reader(shards, max_record_size="64K"))) == N_RECORDS
    with pytest.raises(recordio.Error):  # a record is 800 bytes and more
        list(recordio.Reader(shards, max_record_size="0.5K"))
    with pytest.raises(ValueError, match=r"^Reader: max_record_size='64 K': expected a size"):
        recordio.Reader(shards, max_record_size="64 K")


@pytest.mark.parametrize("option,value,names", [
    ("shuffle", "sometimes", "none, buffer or global"),
    ("sharding", "rows", "auto, files or records"),
    ("io", "nvme", "auto, uring or pread"),
])
def test_option_names_are_the_loaders(shards, option, value, names):
    with pytest.raises(ValueError) as e:
        recordio.Loader(shards, **{option: value})
    assert str(e.value) == "%s='%s': want %s" % (option, value, names)


def test_set_epoch(shards, dataset):
    """set_epoch(e) ends the current epoch where it is and makes the next
    batch the first of epoch e: the same batches as a new loader's epoch e,
    every record once, and the epoch after it is e + 1."""
    images, labels, _ = dataset
    opts = dict(batch_size=64, decode=DECODE, shuffle="buffer", seed=7, shuffle_buffer=300)
    a = recordio.Loader(shards, **opts)
    for _ in range(3):
        next(a)
    a.set_epoch(5)
    assert (a.epoch, a.position) == (5, 0)
    got = epoch(a)
    assert a.epoch == 6
    fresh = _at_epoch(shards, opts, 5)
    want = epoch(fresh)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert sorted(record_ids(got[0], images)) == list(range(N_RECORDS))
    e0 = epoch(recordio.Loader(shards, **opts))  # epoch 5 is another order than epoch 0
    assert not np.array_equal(e0[1], got[1])
    np.testing.assert_array_equal(epoch(a)[1], epoch(fresh)[1])  # both at epoch 6 next
    a.set_epoch(2)  # backwards too, at an epoch's start
    np.testing.assert_array_equal(epoch(a)[0], epoch(_at_epoch(shards, opts, 2))[0])


def _at_epoch(shards, opts, e):
    loader = recordio.Loader(shards, **opts)
    loader.set_epoch(e)
    return loader


def test_two_loaders_in_one_process(shards, gz_shards, dataset):
    images, labels, _ = dataset
    a = recordio.Loader(shards, batch_size=100, decode=DECODE, shuffle="none")
    b = recordio.Loader(gz_shards, batch_size=40, decode=DECODE, shuffle="buffer", seed=2)
    la, lb = [], []
    for x, y in zip(a, b):  # interleaved, until a's epoch (20 batches) ends
        la.append(x["label"].copy())
        lb.append(y["label"].copy())
    lb += [y["label"].copy() for y in b]  # the rest of b's epoch (50 batches)
    np.testing.assert_array_equal(np.concatenate(la), labels)
    assert sorted(np.concatenate(lb).tolist()) == sorted(labels.tolist())


def test_rank_and_world_split_the_records(shards, dataset):
    images, labels, _ = dataset
    parts = [epoch(recordio.Loader(shards, batch_size=50, decode=DECODE, shuffle="none",
                                   rank=r, world=3, sharding="records")) for r in range(3)]
    assert records_of(np.concatenate([p[0] for p in parts]),
                      np.concatenate([p[1] for p in parts])) == records_of(images, labels)


def test_rank_and_world_from_the_environment(shards, monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    loader = recordio.Loader(shards, batch_size=10, decode=DECODE)
    assert (loader.rank, loader.world) == (1, 2) and loader.records == N_RECORDS // 2


def test_close_with_a_batch_alive(shards, dataset):
    images, _, _ = dataset
    loader = recordio.Loader(shards, batch_size=8, decode=DECODE, shuffle="none")
    image = next(loader)["image"]
    loader.close()
    assert loader.closed
    with pytest.raises(ValueError):
        next(loader)
    np.testing.assert_array_equal(image, images[:8])  # still valid after close
    del image
    gc.collect()
    assert loader._c.closed


def statm_rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_no_leak_over_10000_batches(shards):
    loader = recordio.Loader(shards, batch_size=4, decode=DECODE, shuffle="buffer",
                             shuffle_buffer=256, seed=1)
    per_epoch = len(loader)  # 500
    seen = 0

    def run(n):
        nonlocal seen
        while n > 0:
            for b in loader:
                b["image"].sum()
                seen += 1
                n -= 1
                if n == 0:
                    break

    run(1000)
    gc.collect()
    before = statm_rss()
    run(9000)
    gc.collect()
    after = statm_rss()
    assert seen == 10000 and per_epoch == 500
    assert after - before < 4 * 1024 * 1024, (before, after)


def test_ctrl_c_stops_an_iteration(shards):
    code = textwrap.dedent("""
        import os, signal, sys, threading, time
        import recordio
        # as in a terminal: a test run started in the background (nohup, &)
        # hands its children SIGINT ignored, and Python then installs no
        # handler for it
        signal.signal(signal.SIGINT, signal.default_int_handler)
        loader = recordio.Loader(sys.argv[1], batch_size=8, shuffle="buffer",
                                 decode={"image": ("u8", 784), "label": ("i64", 1)})
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            while True:
                for b in loader:
                    pass
        except KeyboardInterrupt:
            print("interrupted", loader.epoch)
            sys.exit(3)
        """)
    p = subprocess.run([sys.executable, "-c", code, shards], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ))
    assert p.returncode == 3 and "interrupted" in p.stdout, p.stderr


def test_set_epoch_takes_numpy_integers_not_bools(shards):
    loader = recordio.Loader(shards, batch_size=50)
    loader.set_epoch(np.int64(3))  # TypeError "an integer is required" before
    assert loader.epoch == 3
    for bad in (True, -1, 1.0, 2 ** 64):
        with pytest.raises(ValueError, match=r"set_epoch\(%r\)" % (bad,)):
            loader.set_epoch(bad)


@pytest.mark.parametrize("scale", [True, "2", b"2"], ids=["bool", "str", "bytes"])
def test_a_scale_is_a_number(shards, scale):
    with pytest.raises(ValueError, match="scale %r" % (scale,)):  # "2" was 2.0, True 1.0
        recordio.Loader(shards, decode={"image": ("f32", 784, scale)})


FORKED = """
import os, sys, recordio
loader = recordio.Loader(sys.argv[1], batch_size=50, decode=%r, shuffle="none")
batch = next(loader)
pid = os.fork()
if pid == 0:  # the child: the loader's threads are not here
    try:
        next(loader)
        os._exit(3)
    except RuntimeError as e:
        assert "fork()" in str(e) and "open a new Loader" in str(e), e
    del batch
    loader.close()
    del loader  # freed without waiting for threads that are not there (SIGSEGV)
    fresh = recordio.Loader(sys.argv[1], batch_size=50, shuffle="none")
    os._exit(0 if sum(len(b) for b in fresh) == %d else 4)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
print(1 + sum(1 for _ in loader))  # the parent's loader goes on
"""


def test_a_forked_child_neither_hangs_nor_crashes(shards):
    """A loader used in a fork()ed child waited forever for batches (its
    threads are the parent's), and freeing it there crashed."""
    code = FORKED % (DECODE, N_RECORDS)
    p = subprocess.run([sys.executable, "-c", code, shards], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(N_RECORDS // 50)]


def test_a_listed_path_with_a_comma_is_refused(shards, tmp_path):
    """The C loader takes one comma-separated specification: a listed
    'a,b.tfrecord' was read as the files 'a' and 'b.tfrecord'."""
    odd = str(tmp_path / "a,b.tfrecord")
    shutil.copy(recordio.expand(shards)[0], odd)
    with pytest.raises(ValueError, match="a,b.tfrecord"):
        recordio.Loader([odd, recordio.expand(shards)[1]], batch_size=10)
    assert recordio.Loader(odd, batch_size=10).shards == [odd]  # alone, it is one file
