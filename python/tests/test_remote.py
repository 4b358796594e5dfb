"""Reader and Loader over shards at http:// URLs (the remote shards of
recordio/remote/, the same client S3 URLs use): a small HTTP server in the
test serves the shard files with ranges, ETags and If-Match, as object
stores do. The records, and the loader's batches in every shuffle mode,
are those of the same shards read from the local disk."""
import os
import subprocess
import sys

import numpy as np
import pytest

import recordio
from conftest import DECODE


SERVER = r"""
import email.utils, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

root, log = sys.argv[1], open(sys.argv[2], "a", buffering=1)

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_HEAD(self):
        self.do_GET(body=False)

    def do_GET(self, body=True):
        log.write(self.path + "\n")
        path = os.path.join(root, os.path.basename(self.path))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        st = os.stat(path)
        etag = '"%x-%x"' % (st.st_size, st.st_mtime_ns)
        if self.headers.get("If-Match") not in (None, etag):
            self.send_error(412)
            return
        with open(path, "rb") as f:
            data = f.read()
        start, end, status = 0, len(data), 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            start, end, status = int(a), min(int(b) + 1, len(data)), 206
        self.send_response(status)
        self.send_header("ETag", etag)
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(data)))
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        if body:
            self.wfile.write(data[start:end])

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@pytest.fixture
def serve(tmp_path):
    """serve(dir): the base URL of an HTTP server of dir's files (GET and
    HEAD with Range, ETag and If-Match), in its own process (the binding
    holds the GIL while it reads), and a function giving the paths asked
    for so far."""
    procs = []

    def start(root):
        log = tmp_path / ("requests-%d.log" % len(procs))
        log.write_text("")
        p = subprocess.Popen([sys.executable, "-c", SERVER, str(root), str(log)],
                             stdout=subprocess.PIPE, text=True)
        procs.append(p)
        port = int(p.stdout.readline())
        return "http://127.0.0.1:%d/" % port, lambda: log.read_text().split()

    yield start
    for p in procs:
        p.kill()
        p.wait()


def shard_files(prefix):
    d, base = os.path.split(prefix)
    return sorted(f for f in os.listdir(d) if f.startswith(base + "-") and not f.endswith(".idx"))


@pytest.mark.parametrize("which", ["shards", "gz_shards"])
def test_reader_of_an_http_url(request, serve, which):
    prefix = request.getfixturevalue(which)
    url, seen = serve(os.path.dirname(prefix))
    for name in shard_files(prefix):
        local = list(recordio.Reader(os.path.join(os.path.dirname(prefix), name)))
        remote = list(recordio.Reader(url + name))
        assert remote == local and len(local) > 0
    assert seen(), "the server was not asked"


def test_reader_of_a_missing_url(serve, tmp_path):
    url, _ = serve(tmp_path)
    with pytest.raises(recordio.Error) as e:
        list(recordio.Reader(url + "none-00000-of-00001.tfrecord"))
    assert "404" in str(e.value) and "none-00000-of-00001.tfrecord" in str(e.value)


@pytest.mark.parametrize("shuffle", ["none", "buffer", "global"])
def test_loader_of_http_urls(serve, shards, shuffle):
    url, seen = serve(os.path.dirname(shards))
    names = shard_files(shards)
    spec = ",".join(url + n for n in names)
    local_spec = ",".join(os.path.join(os.path.dirname(shards), n) for n in names)
    opts = dict(batch_size=100, decode=DECODE, shuffle=shuffle, seed=4, rank=0, world=1)
    with recordio.Loader(local_spec, **opts) as a, recordio.Loader(spec, **opts) as b:
        local = [{k: v.copy() for k, v in x.items()} for x in a]  # batches are borrowed
        remote = [{k: v.copy() for k, v in y.items()} for y in b]
    assert len(local) == len(remote) > 0
    for x, y in zip(local, remote):
        assert np.array_equal(x["image"], y["image"]) and np.array_equal(x["label"], y["label"])
    assert any(p.endswith(".tfrecord") for p in seen())


def test_loader_of_gzip_http_urls(serve, gz_shards):
    url, _ = serve(os.path.dirname(gz_shards))
    names = shard_files(gz_shards)
    opts = dict(batch_size=64, shuffle="buffer", seed=2, rank=0, world=1)
    local = ",".join(os.path.join(os.path.dirname(gz_shards), n) for n in names)
    with recordio.Loader(local, **opts) as a, recordio.Loader(",".join(url + n for n in names),
                                                               **opts) as b:
        local = [[bytes(r) for r in x] for x in a]
        remote = [[bytes(r) for r in y] for y in b]
    assert local == remote and len(local) > 0
