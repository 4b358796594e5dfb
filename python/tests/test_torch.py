"""PyTorch: torch.from_dlpack and from_numpy without a copy, DataLoader
over recordio.torch.IterableDataset, and its state under the
StatefulDataLoader protocol (skipped where torch is not installed)."""
import gc

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import recordio  # noqa: E402
import recordio.torch  # noqa: E402
from conftest import DECODE, N_RECORDS  # noqa: E402


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
    e0 = torch.cat([b["label"].clone() for b in dl])
    e1 = torch.cat([b["label"].clone() for b in dl])  # the next epoch
    assert sorted(e0.tolist()) == sorted(labels.tolist()) and not torch.equal(e0, e1)


def test_dataloader_worker_processes_split_the_data(shards, dataset):
    images, labels, _ = dataset
    ds = recordio.torch.IterableDataset(shards, batch_size=50, decode=DECODE, shuffle="none",
                                        rank=0, world=1)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    got = torch.cat([b["label"] for b in dl])
    assert sorted(got.tolist()) == sorted(labels.tolist())


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


def test_equal_steps_under_ddp(shards, tmp_path):
    """Under torch.distributed every rank takes the smallest rank's full
    batches per epoch, and the epoch after it starts at its beginning."""
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    dist.init_process_group("gloo", init_method="file://" + str(tmp_path / "pg"), rank=0,
                            world_size=1)
    try:
        ds = recordio.torch.IterableDataset(shards, batch_size=64, decode=DECODE,
                                            shuffle="none")
        assert len(ds) == N_RECORDS // 64  # full batches only: 31 of 32
        dl = torch.utils.data.DataLoader(ds, batch_size=None)
        e0 = [b["label"].clone() for b in dl]
        e1 = [b["label"].clone() for b in dl]
        assert len(e0) == len(e1) == N_RECORDS // 64
        assert all(torch.equal(x, y) for x, y in zip(e0, e1))  # e1 began at the start
        assert ds._loader.epoch == 2
    finally:
        dist.destroy_process_group()
