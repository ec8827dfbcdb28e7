"""An HTTP(S) archive as a forward-only binary stream that survives the network.

Every request has a timeout (connecting and each read), so a stalled server cannot hang a
run. When the body breaks off -- reset, stalled past the timeout, or closed before its
Content-Length -- reading resumes with a ``Range`` request from the byte reached, a bounded
number of times, and the caller sees the same bytes an unbroken transfer gives. When it
cannot resume (no Range support, the file changed, the resumes ran out) it raises
:class:`TransientInputError`: a body that ended early is never handed on as a short file,
because the reader would take that for a truncated archive and record it as ``salvaged``.

"Early" is measured against every size the source states: the size a HEAD request gave
(``expected_size``), the reply's Content-Length and a resumed reply's Content-Range total.
They must agree, and the body must reach that size: a well-formed reply shorter than the
file, or one without Content-Length that breaks off, is resumed or transient, never an end.

Errors no retry can fix are raised as such: 404/410 as FileNotFoundError, 401/403 as
PermissionError.

``http_head`` asks an input's headers over a connection kept open per host and thread, so
a plan that asks thousands of inputs of one host pays one connection (and TLS handshake)
per thread, not one per input.
"""
from __future__ import annotations

import http.client
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from warclake.tasks.archive.reader import TransientInputError

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0   # seconds without a byte before a connection counts as stalled
DEFAULT_RESUMES = 5      # Range resumes within one attempt; the flow's retries come after
_BACKOFF_CAP = 5.0       # seconds between two resumes at most


def http_request(method: str, url: str, timeout: float = DEFAULT_TIMEOUT, headers: dict | None = None):
    """One HTTP request, its errors sorted the way retries need them: only 404/410 are
    "not found" and 401/403 "forbidden"; 5xx, refused connections and timeouts are transient."""
    req = urllib.request.Request(url, method=method, headers={"User-Agent": "warclake", **(headers or {})})
    try:
        return urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code in (404, 410):
            raise FileNotFoundError(f"{url}: HTTP {exc.code}") from exc
        if exc.code in (401, 403):
            raise PermissionError(f"{url}: HTTP {exc.code}") from exc
        raise TransientInputError(f"{url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise TransientInputError(f"{url}: {getattr(exc, 'reason', None) or exc!r}") from exc


_REDIRECTS = (301, 302, 303, 307, 308)
_kept = threading.local()   # (scheme, host:port) -> an open connection, per thread


def http_head(url: str, timeout: float = DEFAULT_TIMEOUT, redirects: int = 5):
    """The headers of a HEAD request, over a kept-alive connection (redirects followed),
    its errors sorted as ``http_request`` sorts them. Through a proxy the environment
    names, urllib asks instead (a connection each)."""
    for _ in range(redirects + 1):
        parts = urllib.parse.urlsplit(url)
        if _proxied(parts):
            with http_request("HEAD", url, timeout) as resp:
                return resp.headers
        resp = _kept_alive_head(parts, url, timeout)
        if resp.status in _REDIRECTS and resp.getheader("Location"):
            url = urllib.parse.urljoin(url, resp.getheader("Location"))
            continue
        if resp.status in (404, 410):
            raise FileNotFoundError(f"{url}: HTTP {resp.status}")
        if resp.status in (401, 403):
            raise PermissionError(f"{url}: HTTP {resp.status}")
        if resp.status >= 300:
            raise TransientInputError(f"{url}: HTTP {resp.status} {resp.reason}")
        return resp.headers
    raise TransientInputError(f"{url}: more than {redirects} redirects")


def _proxied(parts: urllib.parse.SplitResult) -> bool:
    proxies = urllib.request.getproxies()
    return parts.scheme in proxies and not urllib.request.proxy_bypass(parts.netloc)


def _kept_alive_head(parts: urllib.parse.SplitResult, url: str, timeout: float):
    conns = _kept.__dict__.setdefault("conns", {})
    key = (parts.scheme, parts.netloc)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    while True:
        conn = conns.pop(key, None)
        fresh = conn is None
        if conn is None:
            cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            conn = cls(parts.hostname or "", parts.port, timeout=timeout)
        elif conn.sock is not None:
            conn.sock.settimeout(timeout)
        try:
            conn.request("HEAD", target, headers={"User-Agent": "warclake"})
            resp = conn.getresponse()
            resp.read()   # a HEAD reply has no body: this frees the connection for the next
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            if fresh:
                raise TransientInputError(f"{url}: {exc!r}") from exc
            continue   # a kept connection the server closed meanwhile: once more, on a new one
        if resp.will_close:
            conn.close()
        else:
            conns[key] = conn
        return resp


class RemoteStream:
    """``read(n)`` over an HTTP GET, resumed with Range requests when the body breaks off."""

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT, resumes: int = DEFAULT_RESUMES,
                 expected_size: int | None = None):
        self.url, self.timeout, self.resumes_left = url, timeout, resumes
        self.pos = 0          # bytes handed to the caller so far
        self.resumed = 0      # how many times the body was resumed
        self._resp = http_request("GET", url, timeout)
        h = self._resp.headers
        length = _int(h.get("Content-Length")) if self._resp.status == 200 else None
        if expected_size is not None and length is not None and length > expected_size:
            self._close_response()   # a longer reply than the file: it changed since the HEAD
            raise TransientInputError(f"{url}: the reply announces {length} bytes where the file had "
                                      f"{expected_size} (it changed meanwhile)")
        # A shorter Content-Length than the HEAD's size is a reply cut short on purpose (a
        # proxy, a server's limit): its end is resumed from like any other break.
        self.size = expected_size if expected_size is not None else length
        # What pins the resumed bytes to the same file: a changed file answers If-Range with
        # the whole new body (200), which is refused below.
        self._validator = h.get("ETag") or h.get("Last-Modified")
        self.ranges = (h.get("Accept-Ranges", "").strip().lower() == "bytes") and self.size is not None

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            parts = []
            while chunk := self.read(1 << 20):
                parts.append(chunk)
            return b"".join(parts)
        while True:
            try:
                data = self._resp.read(size) if self._resp is not None else b""
            except (OSError, http.client.HTTPException) as exc:  # reset, timeout, broken chunking
                if self.size is not None and self.pos >= self.size:
                    return b""   # every byte arrived; only the connection's end went wrong
                self._resume(f"{exc!r}")
                continue
            if data or size == 0:
                self.pos += len(data)
                if self.size is not None and self.pos > self.size:
                    raise TransientInputError(f"{self.url}: more than the {self.size} bytes the server "
                                              f"stated (the file changed meanwhile)")
                return data
            if self.size is None or self.pos >= self.size:
                return b""    # the real end (or a body of unknown length: its end is all we know)
            self._resume(f"the body ended at byte {self.pos} of {self.size}")

    def _resume(self, why: str) -> None:
        """Reopen from ``pos``, or raise TransientInputError when that cannot work."""
        self._close_response()
        where = f"{self.url}: reading stopped at byte {self.pos}"
        if not self.ranges:
            raise TransientInputError(f"{where} ({why}); the server does not resume (no Range support)")
        last = why
        while self.resumes_left > 0:
            self.resumes_left -= 1
            self.resumed += 1
            log.warning("%s (%s); resuming", where, last)
            time.sleep(min(_BACKOFF_CAP, 0.1 * 2 ** (self.resumed - 1)))
            headers = {"Range": f"bytes={self.pos}-"}
            if self._validator:
                headers["If-Range"] = self._validator
            try:
                resp = http_request("GET", self.url, self.timeout, headers)
            except TransientInputError as exc:  # a 5xx or a refused connection: try again
                last = str(exc)
                continue
            crange = resp.headers.get("Content-Range", "")
            if resp.status != 206 or not crange.startswith(f"bytes {self.pos}-"):
                resp.close()
                raise TransientInputError(f"{where} ({why}); the server answered the resume with "
                                          f"HTTP {resp.status} (file changed or no Range support)")
            total = crange.rpartition("/")[2].strip()
            if total != "*" and _int(total) != self.size:
                resp.close()
                raise TransientInputError(f"{where} ({why}); the resumed reply gives the file as {total} "
                                          f"bytes, not {self.size} (it changed meanwhile)")
            self._resp = resp
            return
        raise TransientInputError(f"{where} ({last}); no resume left")

    def _close_response(self) -> None:
        if self._resp is not None:
            try:
                self._resp.close()
            except Exception:  # a broken connection may fail to close: it is dropped anyway
                pass
            self._resp = None

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._close_response()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
