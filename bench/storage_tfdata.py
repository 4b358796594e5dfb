"""storage_tfdata.py — tf.data as a peer of bench/storage.sh: reads TFRecord
shards (s3:// through tensorflow-io, or local paths) with TFRecordDataset in
batches of 256 and prints one number, GB/s of shard bytes (each record's
payload and its 16 framing bytes) from the dataset's creation to its last
batch (TensorFlow's import, seconds long, is left out).

Usage: python storage_tfdata.py [--parallel 1|auto] SHARD...
  --parallel 1: one shard after another (shard order, as tf.data reads by
  default); auto: num_parallel_reads=tf.data.AUTOTUNE (interleaved).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import tensorflow_io  # noqa: E402,F401  (registers the s3:// file system)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parallel", default="1", choices=("1", "auto"))
    ap.add_argument("shards", nargs="+")
    a = ap.parse_args()
    reads = None if a.parallel == "1" else tf.data.AUTOTUNE
    start = time.perf_counter()
    ds = tf.data.TFRecordDataset(a.shards, num_parallel_reads=reads).batch(256)
    ds = ds.map(lambda b: (tf.reduce_sum(tf.strings.length(b)), tf.size(b)))
    total = 0
    for payload, n in ds:
        total += int(payload) + 16 * int(n)
    seconds = time.perf_counter() - start
    if total == 0:
        sys.exit("storage_tfdata.py: no records read")
    print("%.4f" % (total / seconds / 1e9), flush=True)
    # tensorflow-io's S3 client aborts in its exit handlers (SIGABRT after
    # the figure is out): leave without them
    os._exit(0)


if __name__ == "__main__":
    main()
