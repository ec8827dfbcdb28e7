"""A real HTTP server on 127.0.0.1 for remote-input tests: Range requests, keep-alive
(HTTP/1.1), optional failures of the first N requests to exercise retries, and a latency
added to each request. It counts requests (each one's method and path) and connections."""
from __future__ import annotations

import os
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class _Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # a connection serves requests until the client closes it

    def log_message(self, *a):  # keep test output quiet
        pass

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def _maybe_fail(self) -> bool:
        srv = self.server
        if srv.latency:
            time.sleep(srv.latency)
        with srv.lock:
            srv.requests += 1
            srv.taken.append((self.command, self.path))
            fail = srv.fail_first > 0
            if fail:
                srv.fail_first -= 1
        if fail:
            self.send_error(503, "try again later")
        return fail

    def do_HEAD(self):
        if not self._maybe_fail():
            super().do_HEAD()

    def do_GET(self):
        if self._maybe_fail():
            return
        path = self.translate_path(self.path)
        rng = self.headers.get("Range")
        if not rng or not os.path.isfile(path):
            return super().do_GET()
        size = os.path.getsize(path)
        start_s, _, end_s = rng.replace("bytes=", "").partition("-")
        start = int(start_s) if start_s else 0
        end = min(int(end_s), size - 1) if end_s else size - 1
        if start >= size:
            self.send_error(416)
            return
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self.wfile.write(data)


class LocalHTTPServer:
    """Serves ``root`` on 127.0.0.1 (an ephemeral port) in a background thread."""

    def __init__(self, root: str, fail_first: int = 0, latency: float = 0.0):
        handler = lambda *a, **kw: _Handler(*a, directory=root, **kw)  # noqa: E731
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True   # a kept-alive connection does not hold up the end
        self.httpd.fail_first = fail_first
        self.httpd.latency = latency
        self.httpd.requests = 0
        self.httpd.connections = 0
        self.httpd.taken = []
        self.httpd.lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def fail_next(self, n: int) -> None:
        with self.httpd.lock:
            self.httpd.fail_first = n

    @property
    def requests(self) -> int:
        return self.httpd.requests

    @property
    def connections(self) -> int:
        return self.httpd.connections

    def taken(self) -> list[tuple[str, str]]:
        """Every request so far: (method, path)."""
        with self.httpd.lock:
            return list(self.httpd.taken)

    def reset_counts(self) -> None:
        with self.httpd.lock:
            self.httpd.requests = self.httpd.connections = 0
            self.httpd.taken = []

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
