"""Checks of a run's parameters made before any work, wherever they come from (the command
line, deployments/dumps.toml, a run started from the UI): a mistake is one clear line at
once, not a failure of every archive or a cluster connection timing out a minute later."""
from __future__ import annotations

import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from warclake.tasks.extract.boilerplate import MODES
from warclake.tasks.extract.language import KNOWN_LANGS

UNCHECKED = {"inproc", "ucx", "ws", "wss"}  # Dask transports a TCP connect does not tell about
DASK_TIMEOUT = 3.0  # seconds: a scheduler on the network answers a connect far sooner


def extract_config(langs: str | list[str] | None = None, **settings):
    """The ExtractConfig of a run's settings, checked (ValueError); a setting not given
    (None) is the dataclass's default."""
    from warclake.tasks.extract.config import ExtractConfig

    return ExtractConfig.from_langs(langs, **{k: v for k, v in settings.items() if v is not None})


def check_extract_settings(langs: Sequence[str], settings: dict) -> None:
    """ValueError for extraction settings that make no sense (``ExtractConfig.from_langs``
    asks before it builds one): caught here, before any work, rather than in every worker."""
    if not langs:
        raise ValueError("no target language: give ISO 639-1 codes (e.g. ja or ja,en) or 'all'")
    unknown = sorted(set(langs) - KNOWN_LANGS - {"all"})
    if unknown:
        raise ValueError(f"unknown target language(s) {unknown}: use ISO 639-1 codes "
                         f"({', '.join(sorted(KNOWN_LANGS))}) or 'all'")
    if "min_lang_score" in settings and not 0.0 <= settings["min_lang_score"] <= 1.0:
        raise ValueError(f"min_lang_score {settings['min_lang_score']} is not between 0 and 1")
    if "net_timeout" in settings and settings["net_timeout"] <= 0:
        raise ValueError(f"net_timeout {settings['net_timeout']} is not a positive number of seconds")
    if "min_chars" in settings and settings["min_chars"] < 0:
        raise ValueError(f"min_chars {settings['min_chars']} is negative")
    for key in ("record_seconds", "worker_memory_mb"):
        if key in settings and settings[key] <= 0:
            raise ValueError(f"{key} {settings[key]} is not a positive number")
    if "boilerplate" in settings and settings["boilerplate"] not in MODES:
        raise ValueError(f"unknown boilerplate mode {settings['boilerplate']!r}: choose from {', '.join(MODES)}")


def check_extract_workers(workers) -> None:
    """``warclake extract`` reads one archive at a time, in one watched worker or in its own process."""
    if workers not in (0, 1) or isinstance(workers, bool):
        raise ValueError(f"--workers {workers}: extract reads one archive at a time, in a watched worker process "
                         "(1, the default) or in its own process, unwatched (0); `warclake run --workers N` "
                         "extracts N at once")


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
