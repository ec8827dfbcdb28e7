"""An HTTP server on 127.0.0.1 that serves files and breaks on purpose, for tests and
``net_faults``.

Faults, applied to the first ``times`` GETs that carry a body (then it serves normally):

- ``drop``:  send ``after`` bytes of the body, then reset the connection,
- ``short``: send ``after`` bytes, then close cleanly (a body shorter than its Content-Length),
- ``stall``: send ``after`` bytes, then send nothing for ``stall`` seconds,
- ``5xx``:   answer 503,
- ``truncate``: a well-formed reply shorter than the file: its Content-Length says ``after``
  bytes and that many are sent (a HEAD still gives the file's size),
- ``unsized``: no Content-Length (the body ends when the connection closes), ``after``
  bytes sent, then the connection closed.

Range requests are answered (206, ``Accept-Ranges: bytes``) only with ``ranges=True``; without
it every GET gets the whole file with 200, as from a server that cannot resume. The server
is bounded: it stops by itself after ``max_seconds`` or ``max_requests``, so a test or a
script that forgets it leaves nothing running.
"""
from __future__ import annotations

import os
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

FAULTS = ("none", "drop", "short", "stall", "5xx", "truncate", "unsized")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _serve(self, body: bool) -> None:
        srv: FaultServer = self.server.owner
        fault = srv._count(body)
        path = os.path.join(srv.root, unquote(urlsplit(self.path).path).lstrip("/"))
        if not os.path.realpath(path).startswith(os.path.realpath(srv.root) + os.sep) or not os.path.isfile(path):
            return self._status(404)
        if fault == "5xx":
            return self._status(503)
        size = os.path.getsize(path)
        start, status = 0, 200
        rng = self.headers.get("Range")
        if srv.ranges and rng and rng.startswith("bytes=") and rng.endswith("-"):
            start, status = int(rng[len("bytes="):-1]), 206
            if start >= size:
                return self._status(416)
        cut = srv.after if srv.after is not None else (size - start) // 2
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if fault == "truncate":
            self.send_header("Content-Length", str(min(cut, size - start)))
        elif fault == "unsized":
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(size - start))
        self.send_header("Last-Modified", self.date_time_string(int(os.path.getmtime(path))))
        if srv.ranges:
            self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        if not body:
            return
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read()
        if fault in (None, "none"):
            self.wfile.write(data)
            return
        self.wfile.write(data[:cut])
        self.wfile.flush()
        if fault == "stall":
            srv._stop.wait(srv.stall)   # nothing sent; wakes early when the server stops
        elif fault == "drop":           # a reset (RST), not a clean close
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def _status(self, code: int) -> None:
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()


class FaultServer:
    """``with FaultServer(root, fault="drop") as srv: ... srv.url ...``"""

    def __init__(self, root: str, fault: str = "none", ranges: bool = True, after: int | None = None,
                 times: int = 1, stall: float = 5.0, max_seconds: float = 300.0, max_requests: int = 10_000):
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}: one of {', '.join(FAULTS)}")
        self.root, self.ranges, self.stall = os.path.abspath(root), ranges, stall
        self.max_requests = max_requests
        self.requests = 0       # every request served
        self.gets = 0           # GETs with a body
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.set_fault(fault, after=after, times=times)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._timer = threading.Timer(max_seconds, self.stop)
        self._timer.daemon = True

    def set_fault(self, fault: str, after: int | None = None, times: int = 1) -> None:
        """Break the next ``times`` GETs with ``fault`` (``none``: serve normally)."""
        with self._lock:
            self.fault, self.after, self.faults_left = fault, after, times

    def _count(self, body: bool) -> str | None:
        with self._lock:
            self.requests += 1
            if self.requests > self.max_requests:
                threading.Thread(target=self.stop, daemon=True).start()
            if not body:
                return None
            self.gets += 1
            if self.faults_left > 0 and self.fault != "none":
                self.faults_left -= 1
                return self.fault
            return None

    def start(self) -> "FaultServer":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
