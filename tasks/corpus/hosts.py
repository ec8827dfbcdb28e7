"""Host and registered domain of a URL, by the bundled Public Suffix List (both sections,
as browsers and the catalogue's ``host_domains`` view do)."""
from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import urlsplit


@lru_cache(maxsize=1)
def _psl():
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


def url_host(url: str | None) -> str | None:
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".") or None if host else None


@lru_cache(maxsize=65536)
def registered_domain(host: str | None) -> str | None:
    """``www.example.co.uk`` -> ``example.co.uk``; an IP address is its own domain; a host
    that is itself a public suffix has none."""
    if not host:
        return None
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    try:
        return _psl().privatesuffix(host.encode("idna").decode("ascii") if not host.isascii() else host)
    except (UnicodeError, ValueError):
        return _psl().privatesuffix(host)
