"""Cookie and consent dialogs: the paragraphs a page's consent banner or its settings panel
holds ("We value your privacy", the list of cookie categories, "Accept all").

Crawlers store these dialogs in the HTML of most modern pages, often with hundreds of words
of well-formed prose, so text features alone do not tell them from content. What does is the
name of their container: the consent platforms name their markup after themselves (OneTrust,
Cookiebot, Didomi, Usercentrics, TrustArc, Complianz, iubenda, Osano, Borlabs, CookieYes,
Cookie Law Info, EU Cookie Compliance, Quantcast Choice, Sourcepoint), and home-made banners
name theirs after what they are ("cookie-banner", "cookie-consent", "gdpr-notice").

A path is in a consent dialog when one of its elements has a class or id that names a
consent platform, holds "consent" or "gdpr", or joins "cookie" with a word for a banner or
a dialog. "cookie" alone is not enough: documentation and recipes have sections on cookies.
"""
from __future__ import annotations

import re
from functools import lru_cache

# class and id names, lower-cased: platforms, then consent words, then cookie + a dialog word
_CONSENT_NAME = re.compile(
    r"onetrust|cookiebot|didomi|usercentrics|trustarc|truste-consent|cmplz|iubenda|osano|"
    r"borlabs|cookieyes|cky-consent|cookielawinfo|cookie-law-info|eu-cookie-compliance|qc-cmp|"
    r"sp_message|consent|gdpr|"
    r"cookies?[-_]?(banner|bar|notice|notification|popup|pop-up|modal|dialog|overlay|law|"
    r"compliance|policy|message|settings|preferences|wall|box|alert|info|disclaimer|warning|"
    r"accept|status)|"
    r"(banner|notice|popup|modal|dialog|overlay|accept)[-_]?cookies?")
# the class and id names of one path element: after its tag, split at "." and "#"
_TAG = re.compile(r"[^.#]*")


@lru_cache(maxsize=8192)
def _names_consent(element: str) -> bool:
    names = element[_TAG.match(element).end():]
    return bool(names) and _CONSENT_NAME.search(names.lower()) is not None


@lru_cache(maxsize=8192)
def in_consent_dialog(path: str) -> bool:
    """Whether a paragraph's CSS path (``body>div.x#y>p``) runs through a consent dialog."""
    parent, sep, element = path.rpartition(">")
    return _names_consent(element) or (bool(sep) and in_consent_dialog(parent))
