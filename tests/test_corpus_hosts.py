"""url_host: the host urlsplit gives, whether or not the URL takes the plain-host way."""
import random
from urllib.parse import urlsplit

from warclake.tasks.corpus.hosts import url_host


def by_urlsplit(url):
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".") or None if host else None


TRICKY = ["https://Example.COM/a", "http://example.com", "http://example.com.", "http://.", "http://...//x",
          "https://user:pw@example.com/", "https://example.com:8080/x", "http://[::1]:80/", "http://[::1/",
          "http://ex%41mple.com/", "http://exa\tmple.com/", "http://example.com\n", " http://example.com/",
          "HTTP://EXAMPLE.com/", "http:///path", "http://a_b.example-site.org?q=1", "https://x.y#frag",
          "ftp://example.com/", "http://example.com\\path", "http://exämple.com/", "http://example.com/\tp",
          "mailto:someone@example.com", "http://-.-/", "http://example.com;x/", "", None]


def test_tricky_urls_give_urlsplit_hosts():
    for url in TRICKY:
        assert url_host(url) == by_urlsplit(url), url


def test_generated_urls_give_urlsplit_hosts():
    rng = random.Random(3)
    alphabet = "aZ09.-_:@[]%/?#\\ \t\nä" + "abcxyz" * 4
    for _ in range(20000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        url = rng.choice(("http://", "https://", "HTTP://", "http:/", "")) + body
        assert url_host(url) == by_urlsplit(url), repr(url)
