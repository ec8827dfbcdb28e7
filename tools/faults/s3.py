"""An S3-compatible store on 127.0.0.1 for tests and measurements: moto's server
(``moto_server``), and an HTTP proxy in front of it (``S3Proxy``) that records every request
(method, path, query) and can break the connection on purpose, as a network does: reset it
before any reply (``fail``), hold the request until the caller lets it through (``hold``), or
answer it with an S3 error reply in the server's place (``answer``); and it can add a latency
to every request, as a store far away does (``latency``)."""
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
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

# the credentials moto accepts and any S3 client needs to be given
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                  "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def moto_server(workdir: str) -> Iterator[tuple[dict[str, str], subprocess.Popen]]:
    """moto's S3 server on a free loopback port, its log in ``workdir``; yields the
    environment a client (boto3, s3fs, warclake) needs to use it, and its process."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = open(os.path.join(workdir, "s3.log"), "wb")
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(endpoint + "/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the S3 server did not start (see {log.name})") from None
                time.sleep(0.2)
        yield dict(S3_CREDENTIALS, AWS_ENDPOINT_URL=endpoint), proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@dataclass
class Request:
    method: str
    path: str       # without the query
    query: str
    range: str | None = None   # the Range header: a read of part of an object

    @property
    def is_list(self) -> bool:
        """A bucket listing (ListObjects / ListObjectsV2): a GET of the bucket itself."""
        return self.method == "GET" and self.path.strip("/").count("/") == 0

    @property
    def kind(self) -> str:
        """``list`` for a bucket listing, else the method."""
        return "list" if self.is_list else self.method

    def under(self, part: str) -> bool:
        return part in urllib.parse.unquote(self.path)


@dataclass
class Rule:
    match: object            # fn(Request) -> bool
    how: str                 # "reset" | "hold" | "answer"
    until: float | None = None   # reset, answer: monotonic deadline counted from the first match (None: forever)
    seconds: float | None = None
    released: threading.Event = field(default_factory=threading.Event)
    seen: threading.Event = field(default_factory=threading.Event)
    drop: bool = False       # hold: on release, reset instead of passing the request on
    hits: int = 0
    status: int = 0          # answer: the reply's HTTP status and S3 error code
    code: str = ""


class S3Proxy:
    def __init__(self, upstream: str, latency: float = 0.0):
        self.latency = latency   # seconds added to each request
        u = urllib.parse.urlparse(upstream)
        self.upstream = (u.hostname, u.port)
        self.requests: list[Request] = []
        self.rules: list[Rule] = []
        self._lock = threading.Lock()
        self._local = threading.local()   # one kept-alive connection upstream per thread
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                proxy._serve(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.clear()
        self.server.shutdown()
        self.server.server_close()

    # -- what callers use --------------------------------------------------------
    def fail(self, match, seconds: float | None = None) -> Rule:
        """Reset every matching request's connection, for ``seconds`` from the first one
        (None: for ever)."""
        rule = Rule(match, "reset", seconds=seconds)
        self.rules.append(rule)
        return rule

    def hold(self, match) -> Rule:
        """Hold matching requests until ``rule.released`` is set (``rule.seen`` tells one came)."""
        rule = Rule(match, "hold")
        self.rules.append(rule)
        return rule

    def answer(self, match, status: int, code: str, seconds: float | None = None) -> Rule:
        """Answer every matching request with S3's error reply ``status``/``code``, for
        ``seconds`` from the first one (None: for ever)."""
        rule = Rule(match, "answer", status=status, code=code, seconds=seconds)
        self.rules.append(rule)
        return rule

    def release(self, rule: Rule, drop: bool = False) -> None:
        """Let the held requests through (or reset them: ``drop``) and stop holding."""
        if rule in self.rules:
            self.rules.remove(rule)
        rule.drop = drop
        rule.released.set()

    def clear(self) -> None:
        for r in self.rules:
            r.drop = True
            r.released.set()
        self.rules = []

    def reset_counts(self) -> None:
        with self._lock:
            self.requests = []

    def taken(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    def take_counts(self) -> dict[str, int]:
        """The requests since the last count, by kind (``Request.kind``); counting starts anew."""
        with self._lock:
            out, self.requests = Counter(r.kind for r in self.requests), []
        return dict(out)

    # -- the proxy -------------------------------------------------------------------
    def _rule_for(self, req: Request) -> Rule | None:
        for r in list(self.rules):
            if r.match(req):
                if r.how in ("reset", "answer") and r.seconds is not None:
                    now = time.monotonic()
                    if r.until is None:
                        r.until = now + r.seconds
                    if now > r.until:
                        continue
                r.hits += 1
                return r
        return None

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        path, _, query = h.path.partition("?")
        req = Request(h.command, path, query, h.headers.get("Range"))
        body = self._read_body(h)
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            self.requests.append(req)
        rule = self._rule_for(req)
        if rule is not None and rule.how == "hold":
            rule.seen.set()
            rule.released.wait()
        if rule is not None and (rule.how == "reset" or rule.drop):
            # an RST instead of a reply: what a dropped connection looks like to the client
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            h.close_connection = True
            h.connection.close()
            return
        if rule is not None and rule.how == "answer":
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{rule.code}</Code>'
                    f'<Message>{rule.code}</Message></Error>').encode()
            h.send_response_only(rule.status)
            h.send_header("Content-Type", "application/xml")
            h.send_header("Content-Length", "0" if h.command == "HEAD" else str(len(body)))
            h.end_headers()
            if h.command != "HEAD":
                h.wfile.write(body)
            return
        headers = {k: v for k, v in h.headers.items() if k.lower() not in ("transfer-encoding", "connection")}
        if body is not None:
            headers["Content-Length"] = str(len(body))
        status, reason, reply_headers, data = self._upstream(h.command, h.path, body, headers)
        h.send_response_only(status, reason)
        for k, v in reply_headers:
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                h.send_header(k, v)
        length = {k.lower(): v for k, v in reply_headers}.get("content-length", str(len(data)))
        h.send_header("Content-Length", length if h.command == "HEAD" else str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def _upstream(self, method: str, path: str, body: bytes | None, headers: dict):
        for attempt in (0, 1):   # a kept-alive connection the server closed: once more, anew
            conn = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = http.client.HTTPConnection(*self.upstream, timeout=120)
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                return resp.status, resp.reason, resp.getheaders(), resp.read()
            except (ConnectionError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _read_body(h) -> bytes | None:
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += h.rfile.read(size)
                h.rfile.readline()
        n = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(n) if n else (b"" if h.command in ("PUT", "POST") else None)
