"""url_host: the host urlsplit gives, whether or not the URL takes the plain-host way."""
import random
from urllib.parse import urlsplit

from warclake.tasks.corpus.signals.hosts import url_host


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


def by_full_list(psl, host):
    """registered_domain's definition: the package's list with its punycode forms, asked with
    the host's IDNA form (an IP address is its own domain)."""
    import ipaddress

    if not host:
        return None
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    try:
        return psl.privatesuffix(host.encode("idna").decode("ascii") if not host.isascii() else host)
    except (UnicodeError, ValueError):
        return psl.privatesuffix(host)


def test_registered_domains_are_those_of_the_full_list_for_every_rule_and_script():
    """The list read without its punycode forms gives every host without "xn--" the
    registered domain the full list does; hosts with "xn--" ask the full list."""
    from publicsuffixlist import PSLFILE, PublicSuffixList

    from warclake.tasks.corpus.signals import hosts

    full = PublicSuffixList()
    as_written = hosts._psl_as_written()
    assert as_written._maxlabel == full._maxlabel    # the rules' depth, which bounds the look-up
    assert all("xn--" in r for r in full._publicsuffix - as_written._publicsuffix)
    rules = [ln.split()[0].lower() for ln in open(PSLFILE, encoding="utf-8") if ln.strip() and not ln.startswith("//")]
    names = [r.lstrip("!").replace("*", "w") for r in rules]
    rng = random.Random(11)
    samples = ["www.example.co.uk", "EXAMPLE.COM", "a.b.kobe.jp", "city.kobe.jp", "user.github.io",
               "xn--fiqs8s.example.cn", "WWW.XN--FIQS8S", "例え.テスト", "ｅｘａｍｐｌｅ.com", "müller.de",
               "a..b.com", "com", "localhost", "192.168.0.1", "[::1]", "bad\udcff.com", "-.-", "a.b.c.d.e.f.g.h.i.j"]
    for name in names:
        samples += [name, "x." + name, "y.x." + name, "WWW." + name.upper()]
    for _ in range(20000):
        labels = rng.choice(names).split(".")
        samples.append(".".join(rng.sample(labels, len(labels)) if rng.random() < 0.2 else labels)
                       if rng.random() < 0.5 else rng.choice(("a.", "ab.cd.", "")) + rng.choice(names))
    hosts.registered_domain.cache_clear()
    for host in samples:
        assert hosts.registered_domain(host) == by_full_list(full, host), repr(host)
