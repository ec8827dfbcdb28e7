"""Cookie and consent dialogs: the paragraphs of a page's consent banner or its settings
panel ("We value your privacy", the cookie categories, "Accept all").

Many modern pages carry such a dialog in their HTML, often with a hundred words or more of
well-formed prose, and the sieve's text features keep some of it (on 22 of 1,189 WCXB tuning
pages). What tells it apart is the name of its container: the consent platforms name their
markup after themselves (OneTrust, Cookiebot, Didomi, Usercentrics, TrustArc, Complianz,
iubenda, Osano, Borlabs, CookieYes, Cookie Law Info, EU Cookie Compliance, Quantcast Choice,
Sourcepoint), and home-made banners after what they are ("cookie-banner", "gdpr-notice").

A path runs through a consent dialog when one of its first ``TOP`` elements (the platforms
put the dialog at the top of ``<body>``) has a class or id that names a platform, holds
"consent" or "gdpr", or joins "cookie" with a word for a banner or a dialog. "cookie" alone
is not enough: documentation and recipes have sections on cookies. When every path a page
keeps runs through such a name, it is the page's own wrapper, not a dialog.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

# class and id names, lower-cased: platforms, then consent words, then cookie + a dialog word
_CONSENT_NAME = re.compile(
    r"onetrust|didomi|usercentrics|trustarc|cmplz|iubenda|osano|borlabs|qc-cmp|sp_message|"
    r"consent|gdpr|cookiebot|cookieyes|"
    r"cookies?[-_]?(banner|bar|notice|notification|popup|pop-up|modal|dialog|overlay|law|"
    r"compliance|policy|message|settings|preferences|wall|box|alert|info|disclaimer|warning|"
    r"accept|status)|"
    r"(banner|notice|popup|modal|dialog|overlay|accept)[-_]?cookies?")
# one of these is in every name the pattern finds: most pages have none and skip the pattern
_WORDS = ("cookie", "consent", "gdpr", "onetrust", "didomi", "usercentrics", "trustarc", "cmplz",
          "iubenda", "osano", "borlabs", "qc-cmp", "sp_message")

TOP = 4   # elements of a path looked at: consent platforms put their dialog at the top of <body>


def in_consent_dialog(path: str) -> bool:
    """Whether a paragraph's CSS path (``body>div.x#y>p``) runs through a consent dialog
    near the top of the page. The path's first elements are searched at once: no tag
    name holds any of the words."""
    low = ">".join(path.split(">", TOP)[:TOP]).lower()
    return any(w in low for w in _WORDS) and _CONSENT_NAME.search(low) is not None


def consent_paths(paths: Iterable[str]) -> set[str]:
    """The paths among ``paths`` (those a page keeps) that run through a consent dialog: the
    distinct tops of all of them searched together first, as most pages have no such dialog.
    None when all of them do: a dialog never holds all a page keeps, so the name is the
    page's own wrapper's."""
    distinct = set(paths)
    tops: set[str] = set()
    for p in distinct:
        tops.update(p.split(">", TOP)[:TOP])
    joined = "\n".join(tops).lower()
    if not any(w in joined for w in _WORDS):
        return set()
    inside = {p for p in distinct if in_consent_dialog(p)}
    return inside if inside != distinct else set()
