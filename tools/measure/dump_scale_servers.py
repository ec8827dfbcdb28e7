"""The remote side of the dump-scale benchmark (tools/measure/dump_scale.py), on 127.0.0.1:
a threaded HTTP server for the archives and their listing, and a proxy in front of the
S3-compatible server (moto) that holds the lake. Each adds the latency it is given to every
request, as a store far away does, and counts the requests it answers by kind."""
from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

# the credentials moto accepts and any S3 client needs to be given
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                  "AWS_DEFAULT_REGION": "us-east-1"}


class Counted:
    """Requests counted by kind, safe across the servers' threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter = Counter()

    def add(self, kind: str) -> None:
        with self._lock:
            self.counts[kind] += 1

    def take(self) -> dict[str, int]:
        """The counts so far, and counting starts again from zero."""
        with self._lock:
            out, self.counts = dict(self.counts), Counter()
        return out


class _Server:
    """A ThreadingHTTPServer on a free loopback port, in a thread of its own."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class FileServer(_Server):
    """Serves the files of ``root`` (GET with one byte range, HEAD), ``latency`` seconds
    added to each request; ``counted`` holds requests by method."""

    def __init__(self, root: str, latency: float = 0.0):
        self.root, self.latency, self.counted = os.path.abspath(root), latency, Counted()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_HEAD(self):
                outer._serve(self, body=False)

            def do_GET(self):
                outer._serve(self, body=True)

        super().__init__(Handler)

    def _serve(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        if self.latency:
            time.sleep(self.latency)
        self.counted.add(h.command)
        rel = urllib.parse.unquote(urllib.parse.urlsplit(h.path).path).lstrip("/")
        path = os.path.normpath(os.path.join(self.root, rel))
        if not path.startswith(self.root + os.sep) or not os.path.isfile(path):
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        ranged = h.headers.get("Range", "")
        if ranged.startswith("bytes="):
            first, _, last = ranged[6:].split(",")[0].partition("-")
            start = int(first) if first else max(0, size - int(last))
            end = min(int(last), size - 1) if first and last else size - 1
        if ranged and start >= size:
            h.send_response(416)
            h.send_header("Content-Range", f"bytes */{size}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(206 if ranged else 200)
        if ranged:
            h.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Length", str(end - start + 1))
        h.send_header("Last-Modified", h.date_time_string(int(os.path.getmtime(path))))
        h.end_headers()
        if body:
            with open(path, "rb") as fh:
                fh.seek(start)
                h.wfile.write(fh.read(end - start + 1))


class S3Proxy(_Server):
    """Passes every request on to the S3 server at ``upstream`` after ``latency`` seconds;
    ``counted`` holds requests by kind: ``list`` (a bucket listing), else the method."""

    def __init__(self, upstream: str, latency: float = 0.0):
        u = urllib.parse.urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.latency, self.counted = latency, Counted()
        self._local = threading.local()   # one kept-alive connection upstream per thread
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                outer._serve(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        super().__init__(Handler)

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        path = urllib.parse.urlsplit(h.path).path
        n = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(n) if n else None
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = _read_chunked(h)
        if self.latency:
            time.sleep(self.latency)
        # a GET of the bucket itself is a listing (ListObjects, ListObjectsV2)
        self.counted.add("list" if h.command == "GET" and path.strip("/").count("/") == 0 else h.command)
        headers = {k: v for k, v in h.headers.items() if k.lower() not in ("transfer-encoding", "connection")}
        if body is not None:
            headers["Content-Length"] = str(len(body))
        status, reason, reply_headers, data = self._upstream(h.command, h.path, body, headers)
        h.send_response_only(status, reason)
        for k, v in reply_headers:
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                h.send_header(k, v)
        length = dict((k.lower(), v) for k, v in reply_headers).get("content-length", str(len(data)))
        h.send_header("Content-Length", length if h.command == "HEAD" else str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def _upstream(self, method, path, body, headers):
        for attempt in (0, 1):   # a kept-alive connection the server closed: once more, anew
            conn = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = http.client.HTTPConnection(*self.upstream, timeout=120)
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                return resp.status, resp.reason, resp.getheaders(), data
            except (ConnectionError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


def _read_chunked(h: BaseHTTPRequestHandler) -> bytes:
    out = bytearray()
    while True:
        size = int(h.rfile.readline().split(b";")[0].strip(), 16)
        if size == 0:
            while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return bytes(out)
        out += h.rfile.read(size)
        h.rfile.readline()


@contextmanager
def s3_server(workdir: str, bucket: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """moto's S3 server on a free loopback port with ``bucket`` made; yields its URL and
    its process (for its memory)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(os.path.join(workdir, "s3.log"), "wb")
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the S3 server did not start (s3.log)") from None
                time.sleep(0.2)
        urllib.request.urlopen(urllib.request.Request(f"{url}/{bucket}", method="PUT"), timeout=10).close()
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
