"""Loader, Reader and expand of shards in S3: a real S3 server on 127.0.0.1
(SeaweedFS, started by tests/s3_server.sh as the shell tests start theirs:
tests/s3_lib.sh; skipped where it cannot be had), the shards packed there by
recordio-pack. The batches and records are the local copy's; the remote
options (remote_part_size, remote_inflight, remote_attempts, remote_stall)
and the shard cache (shard_cache, shard_cache_limit) reach the C loader,
shown by the requests tests/s3_proxy.py counts and the cache's files. The
arguments' checks need no server."""
import inspect
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import recordio
from recordio import _core
from conftest import DECODE, TOP, pack, tool

SERVER = os.path.join(TOP, "tests", "s3_server.sh")
PROXY = os.path.join(TOP, "tests", "s3_proxy.py")
SHARDS = 4


# ---- the arguments (no server) ---------------------------------------------

def test_remote_defaults_are_the_librarys():
    want = {"remote_part_size": 8 << 20, "remote_inflight": 16, "remote_attempts": 10,
            "remote_stall": 30}
    assert {k: _core.REMOTE[f][0] for k, f in (("remote_part_size", "part_size"),
                                               ("remote_inflight", "inflight"),
                                               ("remote_attempts", "attempts"),
                                               ("remote_stall", "stall"))} == want
    for fn in (recordio.Loader, recordio.Reader, recordio.expand):
        params = inspect.signature(fn).parameters
        for name, value in want.items():
            if name in params:
                assert params[name].default == value, (fn, name)
    loader = inspect.signature(recordio.Loader).parameters
    assert set(want) <= set(loader)
    assert loader["shard_cache"].default is None and loader["shard_cache_limit"].default == 0


@pytest.mark.parametrize("name,value", [
    ("remote_part_size", "1K"), ("remote_part_size", 2 << 30), ("remote_part_size", "lots"),
    ("remote_inflight", 0), ("remote_inflight", 257), ("remote_attempts", 0),
    ("remote_attempts", 101), ("remote_stall", 0), ("remote_stall", 3601),
    ("remote_stall", 1.5), ("remote_inflight", True)])
def test_remote_arguments_checked(shards, name, value):
    for make in (lambda: recordio.Loader(shards, **{name: value}),
                 lambda: recordio.Reader(shards, **{name: value})):
        with pytest.raises(ValueError) as e:
            make()
        assert name in str(e.value)


def test_remote_part_size_takes_a_size(shards):
    with recordio.Loader(shards, remote_part_size="64K", remote_inflight=2, remote_attempts=1,
                         remote_stall=1, batch_size=500, shuffle="none") as loader:
        assert sum(len(b) for b in loader) == loader.records


def test_shard_cache_arguments_checked(shards, tmp_path):
    with pytest.raises(ValueError, match="shard_cache_limit"):
        recordio.Loader(shards, shard_cache_limit="1G")
    with pytest.raises(ValueError, match="shard_cache"):
        recordio.Loader(shards, shard_cache="")
    with pytest.raises(ValueError, match="shard_cache_limit"):
        recordio.Loader(shards, shard_cache=str(tmp_path), shard_cache_limit="lots")
    # local shards are read where they are: nothing is copied
    with recordio.Loader(shards, shard_cache=tmp_path / "c", shard_cache_limit="1M") as loader:
        list(loader)
    assert [f for f in os.listdir(tmp_path / "c") if f.endswith(".shard")] == []


# ---- against the server -------------------------------------------------------

class S3:
    """The server: its endpoint, bucket and port, and the AWS_* settings the
    library reads (set while the module's tests run)."""

    def __init__(self, line, nowhere):
        self.endpoint, self.bucket, key, secret, region = line.split()
        self.port = int(self.endpoint.rsplit(":", 1)[1])
        self.env = {"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
                    "AWS_REGION": region, "AWS_ENDPOINT_URL": self.endpoint,
                    # no ~/.aws files read
                    "AWS_CONFIG_FILE": os.path.join(nowhere, "no-config"),
                    "AWS_SHARED_CREDENTIALS_FILE": os.path.join(nowhere, "no-credentials")}


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    p = subprocess.Popen(["sh", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    if not line or line.startswith("skip:"):
        p.stdin.close()
        p.wait()
        pytest.skip("no S3 server: %s" % (line.strip() or "tests/s3_server.sh failed"))
    server = S3(line, str(tmp_path_factory.mktemp("aws")))
    saved = {k: os.environ.get(k) for k in list(server.env) + ["AWS_PROFILE",
                                                               "AWS_SESSION_TOKEN",
                                                               "AWS_ENDPOINT_URL_S3"]}
    for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        os.environ.pop(k, None)
    os.environ.update(server.env)
    try:
        yield server
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        p.stdin.close()  # the script stops the server and exits
        p.wait()


@pytest.fixture(scope="module")
def s3_shards(s3, dataset):
    """s3://BUCKET/train: the dataset in 4 uncompressed shards with .idx
    sidecars, packed there as `shards` is packed locally."""
    url = "s3://%s/train" % s3.bucket
    pack(dataset, url, shards=SHARDS)
    try:
        recordio.expand(url)
    except recordio.UnsupportedError as e:  # a package built without libcurl
        pytest.skip(str(e))
    return url


@pytest.fixture
def proxy(s3, tmp_path):
    """proxy(*args) starts tests/s3_proxy.py in front of the server (args:
    its --faults, --every...) and points AWS_ENDPOINT_URL at it; it returns
    count(kind), the lines of that kind in its log so far ("request" for
    every request, "503" for each 503 it gave...)."""
    procs = []

    def start(*args):
        log, port_file = tmp_path / "proxy.log", tmp_path / "proxy.port"
        log.write_text("")
        procs.append(subprocess.Popen([sys.executable, PROXY, "--upstream", str(s3.port),
                                       "--port-file", str(port_file), "--log", str(log),
                                       *args]))
        for _ in range(100):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:" + port_file.read_text().strip()
        return lambda kind: sum(1 for ln in log.read_text().splitlines()
                                if ln.startswith(kind + " "))

    yield start
    os.environ["AWS_ENDPOINT_URL"] = s3.endpoint
    for p in procs:
        p.kill()
        p.wait()


def batches(spec, **opts):
    """Every batch of one epoch, copied (a batch's arrays are borrowed)."""
    with recordio.Loader(spec, **opts) as loader:
        return [{k: v.copy() for k, v in b.items()} for b in loader]


def same_batches(a, b):
    return len(a) == len(b) > 0 and all(
        np.array_equal(x["image"], y["image"]) and np.array_equal(x["label"], y["label"])
        for x, y in zip(a, b))


SMALL = dict(remote_part_size="64K", remote_inflight=4, remote_attempts=3, remote_stall=5)


@pytest.mark.parametrize("shuffle", ["none", "buffer", "global"])
def test_loader_from_s3_is_the_local_copy(s3_shards, shards, shuffle):
    opts = dict(batch_size=100, decode=DECODE, shuffle=shuffle, seed=4, rank=0, world=1)
    assert same_batches(batches(shards, **opts), batches(s3_shards, **opts, **SMALL))


def test_reader_and_expand_of_s3(s3_shards, shards):
    urls = recordio.expand(s3_shards, remote_attempts=2, remote_stall=5)
    local = recordio.expand(shards)
    assert [os.path.basename(u) for u in urls] == [os.path.basename(p) for p in local]
    assert all(u.startswith("s3://%s/" % s3_shards.split("/")[2]) for u in urls)
    assert list(recordio.Reader(s3_shards, **SMALL)) == list(recordio.Reader(shards))
    assert list(recordio.Reader(urls[1], remote_part_size="64K")) == \
        list(recordio.Reader(local[1]))


def test_remote_part_size_reaches_the_loader(s3_shards, proxy):
    """Shards of about 400 KB read in shard order: one GET each with the
    default 8 MiB parts, several with 64 KiB parts."""
    opts = dict(batch_size=100, decode=DECODE, shuffle="none", rank=0, world=1)
    count = proxy()
    a = batches(s3_shards, **opts)
    default_gets = count("request")
    count = proxy()
    b = batches(s3_shards, remote_part_size="64K", **opts)
    small_gets = count("request")
    assert same_batches(a, b)
    assert small_gets >= default_gets + SHARDS * 5, (default_gets, small_gets)


@pytest.mark.parametrize("attempts", [1, 3])
def test_remote_attempts_reach_the_loader(s3_shards, proxy, attempts):
    """Every GET answered 503 SlowDown: the run ends after `attempts` tries
    of its first request, with one error naming the URL."""
    count = proxy("--faults", "503", "--every", "1")
    with pytest.raises(recordio.Error) as e:
        recordio.Loader(s3_shards, remote_attempts=attempts, remote_stall=5)
    assert count("503") == attempts
    assert s3_shards.split("/")[2] in str(e.value) and "503" in str(e.value)


def test_remote_stall_reaches_the_loader(s3_shards, proxy):
    """Shards' transfers that stall (headers and half the body, then
    nothing for 20 s) are broken off after remote_stall=1 second and
    retried: every record comes through, each stall costing well under the
    20 s it would with the default 30 s."""
    count = proxy("--faults", "stall", "--every", "3", "--stall", "20", "--min-bytes", "100000")
    t = time.monotonic()
    got = batches(s3_shards, batch_size=100, decode=DECODE, shuffle="none", rank=0, world=1,
                  remote_stall=1)
    took = time.monotonic() - t
    assert count("stall") >= 1 and sum(len(b["label"]) for b in got) == 2000
    assert took < 10 * count("stall"), (took, count("stall"))


def test_shard_cache_of_s3(s3_shards, shards, proxy, tmp_path):
    """The first loader downloads each shard into shard_cache; the next one
    reads the copies: the same batches, and fewer requests than a loader
    without the cache makes."""
    cache = tmp_path / "cache"
    opts = dict(batch_size=100, decode=DECODE, shuffle="buffer", seed=2, rank=0, world=1,
                remote_part_size="64K")
    want = batches(shards, **opts)
    count = proxy()
    assert same_batches(want, batches(s3_shards, **opts))
    uncached = count("request")
    assert same_batches(want, batches(s3_shards, shard_cache=cache, **opts))
    copies = [f for f in os.listdir(cache) if f.endswith(".shard")]
    assert len(copies) == SHARDS
    count = proxy()
    assert same_batches(want, batches(s3_shards, shard_cache=str(cache),
                                      shard_cache_limit="1G", **opts))
    assert count("request") < uncached, (count("request"), uncached)
    assert sorted(f for f in os.listdir(cache) if f.endswith(".shard")) == sorted(copies)


def test_shard_cache_limit_smaller_than_a_shard(s3_shards, shards, tmp_path):
    """A limit below one shard: every shard is read from the network,
    nothing is kept, the batches are the same (never a wait)."""
    opts = dict(batch_size=100, decode=DECODE, shuffle="global", seed=3, rank=0, world=1)
    cache = tmp_path / "small"
    assert same_batches(batches(shards, **opts),
                        batches(s3_shards, shard_cache=cache, shard_cache_limit="100K", **opts))
    assert [f for f in os.listdir(cache) if f.endswith(".shard")] == []


def test_reader_of_s3_uses_the_sidecars(s3_shards, shards, proxy, tmp_path):
    """len() and r[i] of a Reader of S3 shards take each shard's .idx (a
    GET of the sidecar and a HEAD of the shard for its size), not a scan
    (the sidecar was looked for with os.path.exists, never there for a
    URL): no GET of a shard object for len(), and r[i] reads only its own
    shard."""
    proxy()

    def requests(method):  # the paths of the proxy's requests of `method`
        lines = (tmp_path / "proxy.log").read_text().splitlines()
        return [ln.split()[2].split("?")[0] for ln in lines
                if ln.startswith("request " + method + " ")]

    local = recordio.Reader(shards)
    names = [os.path.basename(p) for p in recordio.expand(shards)]
    with recordio.Reader(s3_shards) as r:
        listed = len(requests("GET"))  # the listing and the set's manifest
        assert len(r) == len(local) == 2000
        gets = requests("GET")[listed:]
        assert sorted(os.path.basename(g) for g in gets) == sorted(n + ".idx" for n in names)
        assert sorted(os.path.basename(h) for h in requests("HEAD")) == sorted(names)
        assert r[1234] == local[1234] and r[-1] == local[-1] and r[0] == local[0]
    read = {os.path.basename(g) for g in requests("GET")[listed + len(gets):]}
    assert read == {names[0], names[1234 * SHARDS // 2000], names[-1]}, read


def test_reader_index_read_takes_the_remote_options(s3_shards, proxy):
    """A Reader's .idx sidecars are read with its remote options: every GET
    answered 503, len() fails on the sidecar's GET after remote_attempts=2
    tries (it took the library's default 10 before)."""
    urls = recordio.expand(s3_shards)
    count = proxy("--faults", "503", "--every", "1")
    r = recordio.Reader(urls[:1], remote_attempts=2, remote_stall=5)
    with pytest.raises(recordio.Error) as e:
        len(r)
    assert count("503") == 2
    assert urls[0] + ".idx" in str(e.value) and "503" in str(e.value)


def test_reader_index_build_takes_the_remote_options(s3, s3_shards, dataset, proxy):
    """A shard at a URL without its .idx is scanned with the Reader's remote
    options: its GETs, cut and stalled for 20 s, are broken off after
    remote_stall=1 second (the default 30 s let each stall run its 20 s),
    and every record comes through."""
    url = "s3://%s/noidx" % s3.bucket
    pack(dataset, url, shards=SHARDS)
    shard = recordio.expand(url)[0]
    key = shard.split("/", 3)[3] + ".idx"
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "DELETE",
                          "--aws-sigv4", "aws:amz:%s:s3" % s3.env["AWS_REGION"],
                          "--user", "%s:%s" % (s3.env["AWS_ACCESS_KEY_ID"],
                                               s3.env["AWS_SECRET_ACCESS_KEY"]),
                          "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                          "%s/%s/%s" % (s3.endpoint, s3.bucket, key)],
                         capture_output=True, text=True)
    assert out.stdout == "204", out
    want = len(recordio.Reader([shard]))  # scanned, no sidecar
    count = proxy("--faults", "stall", "--every", "1", "--stall", "20", "--min-bytes", "100000")
    t = time.monotonic()
    r = recordio.Reader([shard], remote_stall=1)
    assert len(r) == want > 0
    took = time.monotonic() - t
    assert count("stall") >= 1 and took < 10 * count("stall"), (took, count("stall"))
