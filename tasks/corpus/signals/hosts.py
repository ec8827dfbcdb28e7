"""Host and registered domain of a URL, by the bundled Public Suffix List (both sections,
as browsers and the catalogue's ``host_domains`` view do)."""
from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import urlsplit


@lru_cache(maxsize=1)
def _psl():
    """The list as its package reads it, with every rule also in its ASCII (punycode) form."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@lru_cache(maxsize=1)
def _psl_as_written():
    """The list's rules as written, without their punycode forms: a third of the cost of
    :func:`_psl` (encoding the 459 rules in other scripts is the rest). A punycode form
    holds "xn--" (an IDNA label of another script), so a host without "xn--" matches the
    same rules of both."""
    from publicsuffixlist import PSLFILE, PublicSuffixList

    with open(PSLFILE, "rb") as fh:
        return PublicSuffixList(fh, accept_encoded_idn=False)


def _suffix_list(host: str):
    return _psl() if "xn--" in host.lower() else _psl_as_written()


# An http(s) URL whose authority is a plain host name (no user, port, brackets, percent
# sign or whitespace): its host is that name in lower case, what urlsplit gives, without
# urlsplit's work (the per-archive step asks once per document).
_PLAIN_HOST = re.compile(r"https?://([A-Za-z0-9._-]+)(?=[/?#]|\Z)")


def url_host(url: str | None) -> str | None:
    if not url:
        return None
    plain = _PLAIN_HOST.match(url)
    if plain is not None:
        return plain.group(1).lower().rstrip(".") or None
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
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except (UnicodeError, ValueError):
        return _suffix_list(host).privatesuffix(host)
    return _suffix_list(ascii_host).privatesuffix(ascii_host)
