#!/usr/bin/env python3
"""s3_proxy.py — a fault-injecting HTTP proxy between recordio's S3 client
and the test's S3 server (tests/s3_faults.sh).

    s3_proxy.py --upstream PORT --port-file FILE --log FILE
                [--faults KIND,KIND,...] [--every N] [--region R] [--stall S]

                [--methods GET,PUT,...] [--min-bytes N]

Listens on a free port of 127.0.0.1 (written to --port-file once it
listens) and forwards each request to 127.0.0.1:UPSTREAM as it came, the
Host header included (so the client's SigV4 signature still holds). Every
N-th request of --methods (default GET; --every, counting from the first)
gets the next fault of --faults, in turn:

  reset     the status line, the headers and half the body, then a TCP RST
  truncate  the headers (the whole Content-Length) and half the body, then
            the connection closed
  stall     the headers and half the body, then nothing for --stall seconds
            (the client's --remote-stall must break it off), then closed
  503       503 with S3's SlowDown error document
  500       500 with S3's InternalError error document

With --min-bytes N, a reset, truncate or stall only falls on an answer of
N bytes or more (a whole shard's download, not a probe of its first bytes).

With --region R, a signed request whose credential scope names another
region is answered 400 AuthorizationHeaderMalformed, as AWS answers
(SeaweedFS itself accepts any region). Each fault and each refusal is one
line of --log ("KIND METHOD PATH"), after a line "request METHOD PATH" for
every request, so a test can tell that faults came and count requests.
"""
import argparse
import http.client
import os
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ERROR_DOC = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
             '<Message>{msg}</Message>{extra}</Error>')


class State:
    def __init__(self, args):
        self.args = args
        self.faults = [f for f in args.faults.split(",") if f]
        self.lock = threading.Lock()
        self.gets = 0
        self.next_fault = 0
        self.methods = args.methods.split(",")
        self.log = open(args.log, "a", buffering=1)

    def fault_for(self, method):
        """The fault this request gets, or None."""
        if method not in self.methods or not self.faults:
            return None
        with self.lock:
            self.gets += 1
            if self.gets % self.args.every:
                return None
            f = self.faults[self.next_fault % len(self.faults)]
            self.next_fault += 1
            return f

    def note(self, kind, method, path):
        with self.lock:
            self.log.write("%s %s %s\n" % (kind, method, path))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, fmt, *args):
        pass

    def _error(self, status, code, msg, extra=""):
        body = ERROR_DOC.format(code=code, msg=msg, extra=extra).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _wrong_region(self):
        want = self.state.args.region
        if not want:
            return False
        m = re.search(r"Credential=[^/]+/\d+/([^/]+)/s3/aws4_request",
                      self.headers.get("Authorization", ""))
        if not m or m.group(1) == want:
            return False
        self.state.note("region", self.command, self.path)
        self._error(400, "AuthorizationHeaderMalformed",
                    "The authorization header is malformed; the region '%s' is wrong; "
                    "expecting '%s'" % (m.group(1), want), "<Region>%s</Region>" % want)
        return True

    def _forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        up = http.client.HTTPConnection("127.0.0.1", self.state.args.upstream, timeout=60)
        up.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            up.putheader(k, v)
        up.endheaders(body)
        r = up.getresponse()
        data = r.read()
        drop = ("transfer-encoding", "connection") + (() if self.command == "HEAD" else
                                                      ("content-length",))
        headers = [(k, v) for k, v in r.getheaders() if k.lower() not in drop]
        up.close()
        return r.status, r.reason, headers, data

    def _send(self, status, reason, headers, data, cut=None):
        self.send_response(status, reason)
        for k, v in headers:
            self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if cut is None:
            self.wfile.write(data)
        else:
            self.wfile.write(data[:cut])
        self.wfile.flush()

    def _handle(self):
        self.state.note("request", self.command, self.path)
        if self._wrong_region():
            return
        fault = self.state.fault_for(self.command)
        if fault in ("503", "500"):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            self.state.note(fault, self.command, self.path)
            if fault == "503":
                self._error(503, "SlowDown", "Please reduce your request rate.")
            else:
                self._error(500, "InternalError", "We encountered an internal error.")
            return
        status, reason, headers, data = self._forward()
        if fault is not None and len(data) < self.state.args.min_bytes:
            fault = None
        if fault is None or status >= 300 or len(data) < 2:
            self._send(status, reason, headers, data)
            return
        self.state.note(fault, self.command, self.path)
        self._send(status, reason, headers, data, cut=len(data) // 2)
        if fault == "stall":
            time.sleep(self.state.args.stall)
        elif fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        self.close_connection = True

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", type=int, required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--faults", default="")
    p.add_argument("--every", type=int, default=3)
    p.add_argument("--methods", default="GET")
    p.add_argument("--min-bytes", type=int, default=0)
    p.add_argument("--region", default="")
    p.add_argument("--stall", type=float, default=5.0)
    args = p.parse_args()
    Handler.state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
