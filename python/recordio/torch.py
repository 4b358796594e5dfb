"""recordio.torch: the Loader as a torch.utils.data.IterableDataset.

    ds = recordio.torch.IterableDataset("data/train", batch_size=128,
                                        decode={"image": ("f32", 784, 1 / 255),
                                                "label": ("i64", ())})
    dl = torch.utils.data.DataLoader(ds, batch_size=None)   # batches come batched
    for epoch in range(epochs):
        ds.set_epoch(epoch)                                  # optional
        for batch in dl:                                     # {"image": tensor, ...}
            ...

Each iteration of the dataset is one epoch of the loader. Tensors share the
loader's batch memory (torch.from_numpy, and torch.from_dlpack for bf16
columns, which are torch.bfloat16: no copy; pinned when CUDA is
present, so .cuda(non_blocking=True) is asynchronous). Under DDP (torch.
distributed initialised) each process reads its own part: rank and world
default to the process group's. With DataLoader(num_workers=N) each worker
process runs its own loader over 1/N of the rank's part (rank*N + worker
of world*N); num_workers=0 is the fast path (the loader has its own threads).
state_dict()/load_state_dict() follow torchdata's StatefulDataLoader
protocol: StatefulDataLoader(ds, batch_size=None) saves and restores the
exact mid-epoch position, shuffle state included.
"""
import os

import torch
import torch.utils.data

from ._loader import Loader, _column_of, _dist_rank_world

__all__ = ["IterableDataset"]


class IterableDataset(torch.utils.data.IterableDataset):
    """recordio.Loader(shards, batch_size, **options) for DataLoader(ds,
    batch_size=None). as_tensors=True (default) yields dicts of tensors
    (lists of bytes in undecoded mode). The loader opens at the first
    iteration, in the process that iterates. equal_steps (default: on under
    torch.distributed) makes every rank take the same number of steps per
    epoch, the smallest rank's full batches (see _agree_on_steps). A
    process forked from one whose dataset had opened its loader (len(dl)
    before DataLoader(num_workers=N) forked its workers) opens a loader of
    its own; pickled (the spawn start method), the dataset leaves its
    loader behind."""

    def __init__(self, shards, batch_size=32, as_tensors=True, equal_steps=None, **options):
        super().__init__()
        self.shards = shards
        self.batch_size = batch_size
        self.as_tensors = as_tensors
        self.equal_steps = equal_steps
        self.options = dict(options)
        self._loader = None
        self._steps = None
        self._pending_state = None
        self._pending_epoch = None
        self._pid = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state.update(_loader=None, _steps=None, _pid=None)
        return state

    def _open(self):
        if self._loader is not None and self._pid == os.getpid():
            return self._loader
        self._loader = None  # none yet, or the parent's: its threads are not here
        opts = dict(self.options)
        rank, world = opts.pop("rank", None), opts.pop("world", None)
        if rank is None or world is None:
            r, w = _dist_rank_world()
            rank = r if rank is None else rank
            world = w if world is None else world
        info = torch.utils.data.get_worker_info()
        if info is not None and info.num_workers > 1:
            if rank < 0 or world < 0:  # the environment's, resolved by the C loader
                probe = Loader(self.shards, self.batch_size, **dict(opts, workers=1))
                rank, world = probe.rank, probe.world
                probe.close()
            rank, world = rank * info.num_workers + info.id, world * info.num_workers
        self._loader = Loader(self.shards, self.batch_size, rank=rank, world=world, **opts)
        self._pid = os.getpid()
        self._steps = self._agree_on_steps(self._loader)
        if self._pending_state is not None:
            self._loader.load_state_dict(self._pending_state)
            self._pending_state = None
        elif self._pending_epoch is not None:
            self._loader.set_epoch(self._pending_epoch)
        self._pending_epoch = None
        return self._loader

    def _agree_on_steps(self, loader):
        """With equal_steps (default: when torch.distributed is initialised
        and DataLoader worker processes are not used), the full batches of
        the rank that has fewest, agreed on with one all_reduce: every rank
        takes that many steps per epoch, so none waits at a collective for
        a rank that ran out (uneven shards never hang DDP)."""
        import torch.distributed as dist
        on = self.equal_steps
        if on is None:
            on = dist.is_available() and dist.is_initialized() and \
                torch.utils.data.get_worker_info() is None
        if not on:
            return None
        steps = torch.tensor([loader.full_batches], dtype=torch.int64)
        if dist.is_available() and dist.is_initialized():
            if dist.get_backend() == "nccl":
                steps = steps.cuda()
            dist.all_reduce(steps, op=dist.ReduceOp.MIN)
        return int(steps.item())

    def __iter__(self):
        loader = self._open()
        left = None
        if self._steps is not None:
            left = self._steps - loader.position // self.batch_size
        for batch in loader:
            if left is not None:
                if left <= 0:
                    break
                left -= 1
            if self.as_tensors and isinstance(batch, dict):
                yield {k: torch.from_dlpack(_column_of(v)) if k in loader._bf16
                       else torch.from_numpy(v) for k, v in batch.items()}
            else:
                yield batch
            if left == 0:
                break
        if left is not None and loader.position:  # steps done, records left: next epoch
            loader.set_epoch(loader.epoch + 1)

    def __len__(self):
        """Batches per epoch (the agreed steps with equal_steps)."""
        loader = self._open()
        return self._steps if self._steps is not None else len(loader)

    def set_epoch(self, epoch):
        """Makes the next iteration epoch `epoch` (as DistributedSampler's)."""
        if self._loader is None:
            self._pending_epoch = epoch
        elif self._loader.epoch != epoch or self._loader.position:
            self._loader.set_epoch(epoch)

    def state_dict(self):
        """The loader's position (see recordio.Loader.state_dict)."""
        if self._loader is None:
            return dict(self._pending_state) if self._pending_state else {}
        return self._loader.state_dict()

    def load_state_dict(self, state):
        """Restores a state_dict(): the next batch is the one after it."""
        if not state:
            return
        if self._loader is None:
            self._pending_state = dict(state)
        else:
            self._loader.load_state_dict(state)

    def close(self):
        if self._loader is not None:
            self._loader.close()
            self._loader = None
