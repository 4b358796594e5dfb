"""Fixtures of the recordio package's tests: the C tools of a build
(RIO_BUILDDIR, else on PATH), the TensorFlow-written files of tests/data
(RIO_TESTDATA, else the repository's), and shard sets made by recordio-pack
from a synthetic IDX dataset (Fashion-MNIST's format: 28x28 uint8 images,
labels 0-9) written into a temporary directory."""
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

N_RECORDS = 2000


def tool(name):
    build = os.environ.get("RIO_BUILDDIR")
    if build and os.path.exists(os.path.join(build, name)):
        return os.path.join(build, name)
    found = shutil.which(name)
    if not found:
        pytest.skip("%s not found (set RIO_BUILDDIR to a build directory)" % name)
    return found


def run_tool(name, *args):
    """A tool's stdout (bytes); fails the test when it fails."""
    p = subprocess.run([tool(name), *args], capture_output=True)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stdout


@pytest.fixture(scope="session")
def testdata():
    d = os.environ.get("RIO_TESTDATA", os.path.join(TOP, "tests", "data"))
    assert os.path.isdir(d), d
    return d


def synthetic_images(n=N_RECORDS, seed=5):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    return images, labels


def write_idx(path, array):
    code = {np.dtype(np.uint8): 0x08}[array.dtype]
    with open(path, "wb") as f:
        f.write(struct.pack(">HBB", 0, code, array.ndim))
        f.write(struct.pack(">%dI" % array.ndim, *array.shape))
        f.write(array.tobytes())


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    """(images, labels, dir): the synthetic dataset and its IDX files."""
    d = tmp_path_factory.mktemp("idx")
    images, labels = synthetic_images()
    write_idx(str(d / "images-idx3-ubyte"), images)
    write_idx(str(d / "labels-idx1-ubyte"), labels)
    return images, labels, d


def pack(dataset, out, shards=4, compression="none"):
    images, labels, d = dataset
    if "://" not in out:  # an s3:// set needs no directory
        os.makedirs(os.path.dirname(out), exist_ok=True)
    run_tool("recordio-pack", "--from", "idx", "--images", str(d / "images-idx3-ubyte"),
             "--labels", str(d / "labels-idx1-ubyte"), "-o", out, "-n", str(shards),
             "-c", compression, "-q")
    return out


@pytest.fixture(scope="session")
def shards(dataset, tmp_path_factory):
    """PREFIX of 4 uncompressed shards (with .idx) of the dataset."""
    return pack(dataset, str(tmp_path_factory.mktemp("plain") / "train"))


@pytest.fixture(scope="session")
def gz_shards(dataset, tmp_path_factory):
    return pack(dataset, str(tmp_path_factory.mktemp("gz") / "train"), compression="gzip")


DECODE = {"image": ("u8", (28, 28)), "label": ("i64", ())}


def record_ids(images, dataset_images):
    """Each image's record number in the dataset: the identity of a record
    (the synthetic images are random, their bytes unique), where labels
    (ten values) would let a lost record and a repeated one cancel out."""
    where = {bytes(im.tobytes()): i for i, im in enumerate(np.asarray(dataset_images))}
    assert len(where) == len(dataset_images)
    return [where[bytes(np.asarray(im).tobytes())] for im in images]
