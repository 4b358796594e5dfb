#!/usr/bin/env python3
"""python.py — one timed run of bench/python.sh: decoded Fashion-MNIST
(image as float32 scaled to [0,1], label as int64), batch 128, iterated from
Python with every batch touched (one element read), through one of

  recordio SHUFFLE   recordio.Loader (shuffle none|buffer|global, buffer 10000)
  tfdata SHUFFLE     TFRecordDataset with AUTOTUNE interleave over the shards,
                     batch, map(tf.io.parse_example), shuffle 10000 before the
                     batch (buffer) or the whole set (global), prefetch
  torch SHUFFLE      torch.utils.data.DataLoader, num_workers 2, over a
                     map-style Dataset of the same records (read by index
                     through recordio.Reader and parsed with Example.parse)

Prints one JSON line: records, seconds (first batch asked for to the last
one touched, over EPOCHS epochs), records_per_s and peak_rss_mib (the
process's ru_maxrss, imports included).

Usage: python.py recordio|tfdata|torch none|buffer|global PREFIX [EPOCHS]
"""
import json
import resource
import sys
import time

BATCH, BUFFER = 128, 10000


def run_recordio(shuffle, prefix, epochs):
    import recordio
    loader = recordio.Loader(prefix, batch_size=BATCH, shuffle=shuffle, seed=1,
                             shuffle_buffer=BUFFER,
                             decode={"image": ("f32", 784, 1 / 255), "label": ("i64", ())})
    n, touch = 0, 0.0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for b in loader:
            touch += float(b["image"][0, 0]) + float(b["label"][0])
            n += len(b["label"])
    return n, time.perf_counter() - t0


def run_tfdata(shuffle, prefix, epochs):
    import tensorflow as tf
    files = tf.data.Dataset.list_files(prefix + "-*-of-*.tfrecord", shuffle=shuffle != "none",
                                       seed=1)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4,
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=shuffle == "none")
    if shuffle != "none":
        ds = ds.shuffle(BUFFER if shuffle == "buffer" else 60000, seed=1,
                        reshuffle_each_iteration=True)
    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}

    def parse(serialized):
        f = tf.io.parse_example(serialized, spec)
        img = tf.io.decode_raw(f["image"], tf.uint8)
        return {"image": tf.cast(img, tf.float32) / 255.0, "label": f["label"]}

    ds = ds.batch(BATCH).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.prefetch(tf.data.AUTOTUNE)
    n, touch = 0, 0.0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for b in ds:
            img, lab = b["image"].numpy(), b["label"].numpy()
            touch += float(img[0, 0]) + float(lab[0])
            n += len(lab)
    return n, time.perf_counter() - t0


class _Records:
    """The shards' records by index, parsed into tensors (what a PyTorch
    user writes over TFRecord files)."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.reader = None
        import recordio
        self.n = len(recordio.Reader(prefix))

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import numpy as np
        import recordio
        import torch
        if self.reader is None:  # one per worker process
            self.reader = recordio.Reader(self.prefix)
        ex = recordio.Example.parse(self.reader[i])
        img = np.frombuffer(ex["image"][0], dtype=np.uint8).astype(np.float32) / 255.0
        return torch.from_numpy(img), int(ex["label"][0])


def run_torch(shuffle, prefix, epochs):
    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)
    dl = DataLoader(_Records(prefix), batch_size=BATCH, shuffle=shuffle != "none",
                    num_workers=2, persistent_workers=True)
    n, touch = 0, 0.0
    t0 = time.perf_counter()
    for _ in range(epochs):
        for img, lab in dl:
            touch += float(img[0, 0]) + float(lab[0])
            n += len(lab)
    return n, time.perf_counter() - t0


def main():
    kind, shuffle, prefix = sys.argv[1:4]
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    n, secs = {"recordio": run_recordio, "tfdata": run_tfdata, "torch": run_torch}[kind](
        shuffle, prefix, epochs)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if kind == "torch":  # the worker processes hold their own memory
        rss += resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"kind": kind, "shuffle": shuffle, "records": n, "seconds": secs,
                      "records_per_s": n / secs, "peak_rss_mib": rss}))


if __name__ == "__main__":
    main()
