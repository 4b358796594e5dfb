#!/usr/bin/env python3
"""gpu_torch.py — the PyTorch peer of bench/gpu.sh's part d on the same GPU:
the same MLP (ReLU hidden layers), batch, SGD with momentum 0.9 and rate as
recordio-train's defaults, on the same Fashion-MNIST, in PyTorch's fastest
form for such a model: the whole dataset decoded into GPU memory once, each
epoch's batches drawn by a shuffled index on the device (no input pipeline
at all, which recordio-train has), plain fp32 (TF32 off, as recordio-train's
cuBLAS calls) or bf16 autocast. Prints one line: the median epoch's samples/s
(every epoch counted), each epoch's, and the test accuracy.

Usage: gpu_torch.py --hidden 256,128 --batch 128 [--epochs 3] [--bf16]
       [--fmnist DIR]
"""
import argparse
import gzip
import statistics
import time

import numpy as np
import torch
import torch.nn as nn


def idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(fm, kind, dev):
    x = idx(f"{fm}/{kind}-images-idx3-ubyte.gz", 16).reshape(-1, 784).astype(np.float32) / 255.0
    y = idx(f"{fm}/{kind}-labels-idx1-ubyte.gz", 8).astype(np.int64)
    return torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", default="256,128")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--fmnist", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(1)
    widths = [784] + [int(h) for h in a.hidden.split(",")]
    layers = []
    for i, o in zip(widths, widths[1:]):
        layers += [nn.Linear(i, o), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(widths[-1], 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xs, ys = load(a.fmnist, "train", dev)
    xt, yt = load(a.fmnist, "t10k", dev)
    steps = len(ys) // a.batch
    rates = []
    for _ in range(a.epochs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        order = torch.randperm(len(ys), device=dev)
        for s in range(steps):
            i = order[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.bf16):
                loss = loss_fn(model(xs[i]), ys[i])
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        rates.append(steps * a.batch / (time.perf_counter() - t0))
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.bf16):
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}, "
          f"784-{a.hidden.replace(',', '-')}-10, batch {a.batch}, {'bf16 autocast' if a.bf16 else 'fp32'}: "
          f"{statistics.median(rates):.0f} samples/s (median epoch; epochs: "
          f"{' '.join('%.0f' % r for r in rates)}), test accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
