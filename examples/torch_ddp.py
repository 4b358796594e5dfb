#!/usr/bin/env python3
"""torch_ddp.py — the Fashion-MNIST MLP of recordio-train (784-256-128-10,
ReLU) trained with PyTorch DistributedDataParallel (gloo), fed by
recordio.Loader: each process reads its own part of the shards, decoded
into float32 images scaled to [0,1] and int64 labels, without a copy into
PyTorch. The same recipe as `recordio-train` in scripts/demo.sh: batch 128
per process, SGD with momentum 0.9, the rate scaled linearly with the
processes after a one-epoch warmup, cosine decay, weight decay 1e-4.

Run it with torchrun or mpirun (the rank and world come from either):
  torchrun --nproc_per_node 2 examples/torch_ddp.py --train data/fashion-mnist/train \\
      --test data/fashion-mnist/test
  mpirun -np 2 python3 examples/torch_ddp.py --train ... --test ...
(make the shards as scripts/demo.sh does, with recordio-pack --from idx).

Every process takes the same number of steps per epoch (the smallest
rank's full batches: no process waits at an allreduce for one that ran
out), and --checkpoint DIR saves the model, the optimiser and each
process's loader position, so a run stopped mid-way continues exactly.
Prints each epoch's samples/s (all processes) and the final test accuracy.
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import recordio

DECODE = {"image": ("f32", 784, 1 / 255), "label": ("i64", ())}


def init_distributed():
    """rank and world from torchrun (RANK, WORLD_SIZE) or mpirun (OMPI_*)."""
    env = os.environ
    rank = int(env.get("RANK", env.get("OMPI_COMM_WORLD_RANK", env.get("PMI_RANK", 0))))
    world = int(env.get("WORLD_SIZE", env.get("OMPI_COMM_WORLD_SIZE", env.get("PMI_SIZE", 1))))
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", "29512")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    return rank, world


def evaluate(model, test):
    loader = recordio.Loader(test, batch_size=1024, decode=DECODE, shuffle="none", rank=0,
                             world=1)
    right = total = 0
    model.eval()
    with torch.no_grad():
        for b in loader:
            x, y = torch.from_numpy(b["image"]), torch.from_numpy(b["label"])
            right += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    model.train()
    loader.close()
    return right / total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True, help="training shards (a PREFIX, glob, ...)")
    p.add_argument("--test", required=True, help="test shards")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch", type=int, default=128, help="records per process and step")
    p.add_argument("--lr", type=float, default=0.05, help="the rate for one process's batch")
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--workers", type=int, default=1, help="loader threads per process")
    p.add_argument("--checkpoint", help="a directory: save each epoch, resume from it")
    args = p.parse_args()

    rank, world = init_distributed()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = DDP(nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9,
                          weight_decay=args.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    # rank and world from torch.distributed; buffer shuffle as tf.data does
    loader = recordio.Loader(args.train, batch_size=args.batch, decode=DECODE,
                             shuffle="buffer", seed=args.seed, workers=args.workers,
                             drop_remainder=True)
    steps = torch.tensor([loader.full_batches])
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)
    steps = int(steps.item())
    total_steps, warmup = steps * args.epochs, steps

    def rate(step):  # linear scaling, warmup from lr over one epoch, cosine decay
        peak = args.lr * world
        if step < warmup:
            return args.lr + (peak - args.lr) * step / warmup
        return peak * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total_steps - warmup)))

    start = 0
    ckpt = os.path.join(args.checkpoint, "rank%d.pt" % rank) if args.checkpoint else None
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        loader.load_state_dict(state["loader"])
        start = state["epoch"]
    for epoch in range(start, args.epochs):
        t0, seen = time.perf_counter(), 0
        it = iter(loader)
        for step in range(steps):
            b = next(it)
            x, y = torch.from_numpy(b["image"]), torch.from_numpy(b["label"])
            for g in opt.param_groups:
                g["lr"] = rate(epoch * steps + step)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            seen += len(y)
        loader.set_epoch(epoch + 1)  # the steps all ranks agreed on are done
        elapsed = time.perf_counter() - t0
        total = torch.tensor([float(seen)])
        dist.all_reduce(total)
        if ckpt:
            os.makedirs(args.checkpoint, exist_ok=True)
            torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(),
                        "loader": loader.state_dict(), "epoch": epoch + 1}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
        if rank == 0:
            print("epoch %d: loss %.4f, %.0f samples/s on %d processes" % (
                epoch + 1, loss.item(), total.item() / elapsed, world), flush=True)
    if rank == 0:
        print("test accuracy %.4f after %d epochs" % (evaluate(model.module, args.test),
                                                       args.epochs), flush=True)
    loader.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
