"""The archives' side of the dump-scale benchmark (tools/measure/dump_scale.py), on 127.0.0.1:
a threaded HTTP server for the archives and their listing that adds the latency it is given
to every request, as a store far away does, and counts the requests it answers by method.
The lake's side, moto's S3 server behind a proxy, is tools/faults/s3.py's."""
from __future__ import annotations

import os
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
