"""PyTorch: torch.from_dlpack and from_numpy without a copy, DataLoader
over recordio.torch.IterableDataset, and its state under the
StatefulDataLoader protocol (skipped where torch is not installed)."""
import gc
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import recordio  # noqa: E402
import recordio.torch  # noqa: E402
from conftest import DECODE, N_RECORDS, record_ids  # noqa: E402


def test_from_dlpack_shares_the_batch_memory(shards, dataset):
    images, labels, _ = dataset
    loader = recordio.Loader(shards, batch_size=32, decode=DECODE, shuffle="none")
    b = next(loader)
    address = b["image"].base.address
    t = torch.from_dlpack(b["image"])
    assert t.data_ptr() == address and t.shape == (32, 28, 28) and t.dtype == torch.uint8
    label = torch.from_dlpack(b["label"])
    assert label.dtype == torch.int64 and label.tolist() == labels[:32].tolist()
    del b
    gc.collect()
    assert loader._c.live_batches == 1  # the tensors keep the slot
    assert sum(sum(1 for _ in loader) for _ in range(3)) == 3 * len(loader) - 1
    assert torch.equal(t, torch.from_numpy(images[:32]))  # and its values
    del t, label
    gc.collect()
    assert loader._c.live_batches == 0


def test_dataloader_batch_size_none(shards, dataset):
    images, labels, _ = dataset
    ds = recordio.torch.IterableDataset(shards, batch_size=100, decode=DECODE, shuffle="none")
    dl = torch.utils.data.DataLoader(ds, batch_size=None)
    got = [b["label"].clone() for b in dl]
    assert len(got) == len(ds) == N_RECORDS // 100
    assert torch.equal(torch.cat(got), torch.from_numpy(labels.astype(np.int64)))
    shuffled = recordio.torch.IterableDataset(shards, batch_size=100, decode=DECODE,
                                              shuffle="buffer", seed=4)
    dl = torch.utils.data.DataLoader(shuffled, batch_size=None)
    e0 = [record_ids(b["image"], images) for b in dl]
    e1 = [record_ids(b["image"], images) for b in dl]  # the next epoch
    assert sorted(sum(e0, [])) == sorted(sum(e1, [])) == list(range(N_RECORDS))  # each once
    assert e0 != e1


def test_dataloader_worker_processes_split_the_data(shards, dataset):
    """Each record once across the worker processes: by identity."""
    images, labels, _ = dataset
    ds = recordio.torch.IterableDataset(shards, batch_size=50, decode=DECODE, shuffle="none",
                                        rank=0, world=1)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    ids, got_labels = [], []
    for b in dl:
        ids += record_ids(b["image"], images)
        got_labels += b["label"].tolist()
    assert sorted(ids) == list(range(N_RECORDS))
    assert got_labels == labels[ids].tolist()  # each label with its own image


WORKERS_AFTER_LEN = """
import pickle, sys, torch, recordio.torch
ds = recordio.torch.IterableDataset(sys.argv[1], batch_size=50, decode=%r, shuffle="none",
                                    rank=0, world=1)
dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
n = len(dl)  # opens the dataset's loader here, before the workers fork
labels = [int(x) for b in dl for x in b["label"]]
assert pickle.loads(pickle.dumps(ds))._loader is None  # spawn's workers open their own
print(n, len(labels))
"""


def test_dataloader_workers_after_len(shards):
    """len(dl) before DataLoader(num_workers=2): each worker forked with the
    parent's loader, whose threads it has not, and waited for good."""
    p = subprocess.run([sys.executable, "-c", WORKERS_AFTER_LEN % (DECODE,), shards],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(N_RECORDS // 50), str(N_RECORDS)]


def test_stateful_protocol_resumes_mid_epoch(shards):
    opts = dict(batch_size=64, decode=DECODE, shuffle="buffer", seed=9, shuffle_buffer=300)
    a = recordio.torch.IterableDataset(shards, **opts)
    it = iter(a)
    for _ in range(5):
        next(it)
    state = a.state_dict()
    rest = [b["label"].clone() for b in it]
    b = recordio.torch.IterableDataset(shards, **opts)
    b.load_state_dict(state)  # before the loader opens, as StatefulDataLoader does
    resumed = [x["label"].clone() for x in b]
    assert len(resumed) == len(rest) and all(torch.equal(x, y) for x, y in zip(resumed, rest))


def test_torchdata_stateful_dataloader(shards):
    sdl = pytest.importorskip("torchdata.stateful_dataloader")
    opts = dict(batch_size=64, decode=DECODE, shuffle="global", seed=2)
    dl = sdl.StatefulDataLoader(recordio.torch.IterableDataset(shards, **opts), batch_size=None)
    it = iter(dl)
    for _ in range(4):
        next(it)
    state = dl.state_dict()
    rest = [b["label"].clone() for b in it]
    dl2 = sdl.StatefulDataLoader(recordio.torch.IterableDataset(shards, **opts), batch_size=None)
    dl2.load_state_dict(state)
    resumed = [b["label"].clone() for b in dl2]
    assert len(resumed) == len(rest) and all(torch.equal(x, y) for x, y in zip(resumed, rest))


def test_rank_and_world_from_torch_distributed(shards, tmp_path):
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    dist.init_process_group("gloo", init_method="file://" + str(tmp_path / "pg"), rank=0,
                            world_size=1)
    try:
        loader = recordio.Loader(shards, batch_size=10, decode=DECODE)
        assert (loader.rank, loader.world) == (0, 1)
    finally:
        dist.destroy_process_group()


DDP_RANK = textwrap.dedent("""
    import json, sys
    import numpy as np
    import torch, torch.distributed as dist
    import recordio, recordio.torch
    prefix, init, rank, world, out = sys.argv[1:6]
    rank, world = int(rank), int(world)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        ds = recordio.torch.IterableDataset(prefix, batch_size=64, shuffle="none",
                                            sharding="files", decode={"image": ("u8", 784)})
        dl = torch.utils.data.DataLoader(ds, batch_size=None)
        epochs = [[b["image"].numpy().tobytes().hex() for b in dl] for _ in range(2)]
        report = {"len": len(ds), "full_batches": ds._loader.full_batches,
                  "epoch": ds._loader.epoch, "epochs": epochs}
    finally:
        dist.destroy_process_group()
    json.dump(report, open(out, "w"))
    """)


def test_equal_steps_under_ddp(shards, dataset, tmp_path):
    """Under torch.distributed every rank takes the smallest rank's full
    batches per epoch, and the epoch after it starts at its beginning: 3
    processes, a gloo group, uneven parts (4 shards of 500 records by files:
    rank 0 reads 1000 records, 15 full batches of 64; ranks 1 and 2 read 500,
    7), so every rank takes 7 batches, the first 448 records of its part."""
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    images, _, _ = dataset
    world = 3
    env = dict(os.environ, GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
    outs = [str(tmp_path / ("rank%d.json" % r)) for r in range(world)]
    init = "file://" + str(tmp_path / "pg")
    procs = [subprocess.Popen([sys.executable, "-c", DDP_RANK, shards, init, str(r), str(world),
                               outs[r]], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT) for r in range(world)]
    logs = [p.communicate(timeout=300)[0].decode(errors="replace") for p in procs]
    assert [p.returncode for p in procs] == [0] * world, logs
    reports = [json.load(open(o)) for o in outs]
    assert [r["full_batches"] for r in reports] == [15, 7, 7]
    part_start = [0, 500, 1000]  # files: rank r reads shards r, r + 3 (shard order)
    for r, rep in enumerate(reports):
        assert rep["len"] == 7 and rep["epoch"] == 2
        e0, e1 = rep["epochs"]
        assert len(e0) == len(e1) == 7 and e0 == e1  # e1 began at the start
        ids = sum((record_ids(np.frombuffer(bytes.fromhex(b), np.uint8).reshape(-1, 28, 28),
                              images) for b in e0), [])
        assert ids == list(range(part_start[r], part_start[r] + 7 * 64))


def test_pinned_batches_when_cuda_is_present(shards):
    """With CUDA (a build with it and a device), batches are pinned host
    memory by default, so copies to the device are asynchronous."""
    if not (recordio.HAVE_CUDA and torch.cuda.is_available()):
        if recordio.HAVE_CUDA:  # asking for it without a device is an error, not a silent copy
            with pytest.raises(recordio.Error):
                recordio.Loader(shards, batch_size=8, decode=DECODE, pin_memory=True)
        pytest.skip("no CUDA device")
    loader = recordio.Loader(shards, batch_size=64, decode=DECODE, shuffle="none")
    assert loader.pinned
    b = next(loader)
    t = torch.from_numpy(b["image"])
    assert t.is_pinned()
    g = t.cuda(non_blocking=True)
    torch.cuda.synchronize()
    assert torch.equal(g.cpu(), t)
