#!/usr/bin/env python3
"""make_seeds.py DATA_DIR OUT_DIR — seed corpora for the fuzz targets, made
from the TensorFlow-written files of tests/data (scripts/fuzz.sh runs it).

OUT_DIR/<target>/ gets, for
  fuzz_reader:  each shard's first 48 KiB (cut mid-record where it is
                longer) after the target's two mode bytes, as is and
                decompressed-then-rewrapped with each codec;
  fuzz_example: record payloads (tf.train.Example, SequenceExample);
  fuzz_sequence_example, fuzz_event: the payloads of the SequenceExample
                and TensorBoard event files, when tests/data has them;
  fuzz_index:   the true .idx of fuzz_index's own shard, and of a file here;
  fuzz_loader:  each codec and sidecar state with no damage.
Only the standard library: it runs wherever the tests do."""
import gzip
import os
import struct
import sys
import zlib

LIMIT = 48 * 1024


def payloads(raw):
    """The records of an uncompressed TFRecord stream (stops at damage)."""
    out, at = [], 0
    while at + 12 <= len(raw):
        (n,) = struct.unpack_from("<Q", raw, at)
        if at + 16 + n > len(raw):
            break
        out.append((at, raw[at + 12 : at + 12 + n]))
        at += 16 + n
    return out


def uncompressed(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if path.endswith(".zz"):
        return zlib.decompress(data)
    return data


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    data_dir, out = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(data_dir)):
        path = os.path.join(data_dir, name)
        if "tfrecord" not in name and "tfevents" not in name:
            continue
        raw = uncompressed(path)
        records = payloads(raw)
        # reader: mode byte 0 = FAIL, CRC checked, bytes as they are;
        # 8/16/24 = rewrapped as gzip/zlib/LZ4 by the target itself
        head = raw[:LIMIT]
        write(out, "fuzz_reader", name, b"\x00\x00" + head)
        write(out, "fuzz_reader", name + ".skip", b"\x01\x03" + head)
        write(out, "fuzz_reader", name + ".gzip", b"\x08\x01" + head)
        write(out, "fuzz_reader", name + ".zlib", b"\x10\x02" + head)
        write(out, "fuzz_reader", name + ".lz4", b"\x18\x00" + head)
        if name.endswith(".gz"):
            write(out, "fuzz_reader", name + ".file", b"\x01\x00" + open(path, "rb").read()[:LIMIT])
        target = "fuzz_example"
        if "sequence" in name:
            target = "fuzz_sequence_example"
        elif "tfevents" in name:
            target = "fuzz_event"
        for i, (_, p) in enumerate(records[:16]):
            if len(p) <= LIMIT:
                write(out, target, "%s.%d" % (name, i), p)
                if target != "fuzz_example":
                    write(out, "fuzz_example", "%s.%d" % (name, i), p)
        idx = "".join("%d %d\n" % (at, len(p) + 16) for at, p in records[:200])
        write(out, "fuzz_index", name + ".idx", idx.encode())
    # fuzz_index's own shard: record i has i * 7 % 50 bytes
    at, lines = 0, []
    for i in range(40):
        n = i * 7 % 50 + 16
        lines.append("%d %d\n" % (at, n))
        at += n
    write(out, "fuzz_index", "target.idx", "".join(lines).encode())
    # fuzz_loader: codec (b0 % 4), sidecar state ((b0 >> 2) % 5), records
    # per shard, no damage
    for codec in range(4):
        for state in range(5):
            write(out, "fuzz_loader", "c%d-i%d" % (codec, state),
                  bytes([codec | state << 2, 9, 5, 0]))


if __name__ == "__main__":
    main()
