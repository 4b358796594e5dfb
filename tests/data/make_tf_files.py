#!/usr/bin/env python3
"""make_tf_files.py — writes the TensorFlow-made golden files of tests/data
that are not copied from elsewhere: tf.train.SequenceExample shards and
TensorBoard event files. Every byte is TensorFlow's (or TensorBoard's) own
serialization and writer; nothing here encodes protobuf by hand.

  tf-sequence-example.tfrecord     3 SequenceExamples, tf.io.TFRecordWriter
  tf-sequence-example.tfrecord.gz  the same records, compression "GZIP"
  events.out.tfevents.tf-2-x       tf.summary.create_file_writer: the
                                   file_version header, then tf.summary.scalar
                                   "loss" and "accuracy" at steps 0..9 (TF 2
                                   writes scalars as tensors, not simple_value)
  events.out.tfevents.tb-simple-value
                                   TensorBoard's EventFileWriter with Events
                                   holding Summary.Value.simple_value (the
                                   TF 1 form): "loss" 2, 1, 0.5 at steps 0, 10, 20 (wall
                                   times 1700000000 + step)

The event files hold wall times, so a rerun gives other bytes (the tests
check the parts that do not change: steps, tags, values). The README lists
the SHA-256 of the committed copies.

Usage: python3 tests/data/make_tf_files.py [OUTDIR]   (default: its own dir)
"""
import glob
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
INT64_MAX = 2 ** 63 - 1


def feature(kind, values):
    """A tf.train.Feature of kind "bytes", "float", "int64" or "none" (also
    imported by tests/tf_interop.py)."""
    if kind == "bytes":
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature()  # no kind set


def sequence_example(context, lists):
    """context: {name: (kind, values)}; lists: {name: [(kind, values), ...]},
    in insertion order (protobuf map order is TensorFlow's own)."""
    se = tf.train.SequenceExample()
    for k, (kind, values) in context.items():
        se.context.feature[k].CopyFrom(feature(kind, values))
    for k, steps in lists.items():
        fl = se.feature_lists.feature_list[k]
        fl.SetInParent()  # an empty FeatureList is kept
        for kind, values in steps:
            fl.feature.add().CopyFrom(feature(kind, values))
    return se.SerializeToString()


def sequence_records():
    nan, inf = float("nan"), float("inf")
    return [
        sequence_example(
            {"id": ("bytes", [b"seq-0"]), "length": ("int64", [3]), "weight": ("float", [0.5])},
            {"tokens": [("bytes", [b"the"]), ("bytes", [b"cat"]), ("bytes", [b"sat", b"!"])],
             "ids": [("int64", [1]), ("int64", [2, 3]), ("int64", [-1, INT64_MAX])],
             "scores": [("float", [0.25]), ("float", [nan, inf]), ("float", [-inf, -0.0])]}),
        sequence_example(
            {"id": ("bytes", [b"seq-1"]), "length": ("int64", [0])},
            {"tokens": [], "unset": [("none", None)]}),
        sequence_example(
            {},
            {"x": [("float", [1.5]), ("float", [2.5])]}),
    ]


def write_records(path, records, compression):
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)


def tf2_event_file(dst):
    d = tempfile.mkdtemp()
    try:
        writer = tf.summary.create_file_writer(d)
        with writer.as_default():
            for step in range(10):
                tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
                tf.summary.scalar("accuracy", step / 10.0, step=step)
        writer.close()
        (src,) = glob.glob(os.path.join(d, "events.out.tfevents.*"))
        shutil.copyfile(src, dst)
    finally:
        shutil.rmtree(d)


def simple_value_event_file(dst):
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    d = tempfile.mkdtemp()
    try:
        w = EventFileWriter(d)
        for step, loss in ((0, 2.0), (10, 1.0), (20, 0.5)):
            s = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="loss", simple_value=loss)])
            w.add_event(event_pb2.Event(wall_time=1700000000.0 + step, step=step, summary=s))
        w.close()
        (src,) = glob.glob(os.path.join(d, "events.out.tfevents.*"))
        shutil.copyfile(src, dst)
    finally:
        shutil.rmtree(d)


def main():
    recs = sequence_records()
    write_records(os.path.join(OUT, "tf-sequence-example.tfrecord"), recs, "")
    write_records(os.path.join(OUT, "tf-sequence-example.tfrecord.gz"), recs, "GZIP")
    tf2_event_file(os.path.join(OUT, "events.out.tfevents.tf-2-x"))
    simple_value_event_file(os.path.join(OUT, "events.out.tfevents.tb-simple-value"))
    print("TensorFlow %s, TensorBoard %s: files written to %s" % (
        tf.__version__, __import__("tensorboard").__version__, OUT))


if __name__ == "__main__":
    main()
