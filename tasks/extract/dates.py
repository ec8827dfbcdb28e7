"""Document date: the minimum of crawl time, HTTP Date and Last-Modified (Uzushio rule)."""
from __future__ import annotations

from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

# Dates before this are clock errors or epoch defaults, not real publication dates.
EARLIEST = datetime(1999, 1, 1, tzinfo=timezone.utc)


def parse_warc_date(value: str | None) -> datetime | None:
    """WARC-Date is ISO 8601 (WARC/1.1 allows fractional seconds); also WARC/0.18 and ARC 14-digit forms."""
    if not value:
        return None
    v = value.strip()
    if v.isdigit() and len(v) >= 14:  # ARC style 20080430204825
        try:
            return datetime.strptime(v[:14], "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
        except ValueError:
            return None
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def parse_http_date(value: str | None) -> datetime | None:
    """RFC 7231 HTTP-date (and the obsolete RFC 850 / asctime forms); None when unparsable."""
    if not value:
        return None
    try:
        dt = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def document_date(warc_date: str | None, http_date: str | None, last_modified: str | None) -> datetime | None:
    candidates = [parse_warc_date(warc_date), parse_http_date(http_date), parse_http_date(last_modified)]
    valid = [d for d in candidates if d is not None and d >= EARLIEST]
    return min(valid) if valid else None
