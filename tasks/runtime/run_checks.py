"""Checks of a run's parameters made before any work, wherever they come from (the command
line, deployments/dumps.toml, a run started from the UI): a mistake is one clear line at
once, not a failure of every archive or a cluster connection timing out a minute later."""
from __future__ import annotations

import socket
from urllib.parse import urlsplit

UNCHECKED = {"inproc", "ucx", "ws", "wss"}  # Dask transports a TCP connect does not tell about
DASK_TIMEOUT = 3.0  # seconds: a scheduler on the network answers a connect far sooner


def check_counts(workers: int | None, max_in_flight: int | None) -> None:
    """ValueError for counts that make no sense (None means the default)."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise ValueError(f"workers {workers!r} is not a count: give 0 (extract in the task's thread) or more")
    if max_in_flight is not None and (isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int)
                                      or max_in_flight < 1):
        raise ValueError(f"max_in_flight {max_in_flight!r} is not a positive number of archives")


def check_dask_address(address: str, timeout: float = DASK_TIMEOUT) -> None:
    """ValueError unless something accepts a TCP connection at the Dask scheduler's address
    (``tcp://host:port`` or ``host:port``)."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme in UNCHECKED:  # an in-process cluster or another transport: Dask's to judge
        return
    if parts.scheme not in ("tcp", "tls") or not parts.hostname:
        raise ValueError(f"Dask scheduler address {address!r} is not tcp://HOST:PORT")
    try:
        port = parts.port or 8786
    except ValueError:
        raise ValueError(f"Dask scheduler address {address!r} has no valid port") from None
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"no Dask scheduler answers at {address} ({reason}, waited {timeout:g}s)") from None
