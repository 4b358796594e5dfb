#!/usr/bin/env python3
"""ddp_baseline.py — the PyTorch DistributedDataParallel run that
recordio-train is measured against (bench/train.sh): the same MLP
(784-256-128-10, ReLU), batch 128 per process, SGD with momentum 0.9 and the
rate scaled linearly with the processes, on the same Fashion-MNIST, read the
way PyTorch users do: the IDX files decoded into tensors in memory, a
TensorDataset, DistributedSampler and DataLoader; gloo for the allreduce.
Prints one line per process count: the median epoch's samples/s (every
epoch counted), each epoch's, and the final test accuracy.

Usage: ddp_baseline.py --procs N [--epochs E] [--threads T]
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

FM = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(kind):
    x = idx(f"{FM}/{kind}-images-idx3-ubyte.gz", 16).reshape(-1, 784).astype(np.float32) / 255.0
    y = idx(f"{FM}/{kind}-labels-idx1-ubyte.gz", 8).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def worker(rank, world, args, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(29500 + args.procs)
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(args.seed)
    model = DDP(nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr * world, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xs, ys = load("train")
    xt, yt = load("t10k")
    sampler = DistributedSampler(TensorDataset(xs, ys), num_replicas=world, rank=rank,
                                 shuffle=True, seed=args.seed, drop_last=True)
    loader = DataLoader(TensorDataset(xs, ys), batch_size=args.batch, sampler=sampler,
                        drop_last=True)
    rates = []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        t0, n = time.perf_counter(), 0
        for x, y in loader:
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
            n += len(y)
        elapsed = time.perf_counter() - t0
        total = torch.tensor([float(n)])
        dist.all_reduce(total)
        rates.append(total.item() / elapsed)
    if rank == 0:
        model.eval()
        with torch.no_grad():
            acc = (model(xt).argmax(1) == yt).float().mean().item()
        out.put((sorted(rates)[(len(rates) - 1) // 2], rates, acc))
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    mp.spawn(worker, args=(args.procs, args, out), nprocs=args.procs, join=True)
    rate, rates, acc = out.get()
    print(f"PyTorch {torch.__version__} DDP, {args.procs} process(es), {args.threads} thread(s) "
          f"each: {rate:.0f} samples/s (median epoch; epochs: "
          f"{' '.join('%.0f' % r for r in rates)}), test accuracy {acc:.4f} after {args.epochs} epochs")


if __name__ == "__main__":
    main()
