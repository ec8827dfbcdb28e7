"""Cookie and consent dialogs: the sieve never keeps their text, and only theirs."""
import pytest

from warclake.tasks.extract.boilerplate import classify
from warclake.tasks.extract.boilerplate.consent import in_consent_dialog
from warclake.tasks.extract.html_paragraphs import extract_paragraphs


@pytest.mark.parametrize("path", [
    "body>div#onetrust-consent-sdk>div#onetrust-banner-sdk>div#onetrust-policy>p",
    "body>div#CybotCookiebotDialog>div>h2",
    "body>div.cmplz-cookiebanner>div.cmplz-body>p",
    "body>div#iubenda-cs-banner>div>p.iub-p",
    "body>div.wt-cli-cookie-bar-container>div#cookie-law-info-bar>span",
    "body>div.eu-cookie-compliance-banner>div.popup-content>p",
    "body>div.cookie-banner>p",
    "body>div#cookieNotice>div.text>p",
    "body>div.modal.fade#privacy-cmp-banner>div>div.consent-text>p",
    "body>div>div.wt-overlay#gdpr-single-choice-overlay>div>h1",
])
def test_consent_containers_are_recognised(path):
    assert in_consent_dialog(path)


@pytest.mark.parametrize("path", [
    # documentation and recipes on cookies, and words that only contain a platform's letters
    "body>div.document>section#quickstart>section#cookies>h3",
    "body>main>article.recipe>div.cookie-recipes>p",
    "body>main>div.section_home-logos>div.home-trusted_top-grid>div",
    "body>main>div.trusted_section>div.trusted_box>p",
    "body>main>article.post>p",
    # a consent checkbox deep in a page's own form is not the platform's dialog at the top
    "body>main>div.page>section.contact>form>div.marketing-consent>label",
    "body>p",
])
def test_other_containers_are_not(path):
    assert not in_consent_dialog(path)


ARTICLE = " ".join(["The river rose through the night and by morning the old bridge was under water, "
                    "so the town council closed the road and asked drivers to take the northern route."] * 3)
CONSENT = ("We and our partners store and access personal data, like browsing data or unique identifiers, "
           "on your device, and process it to deliver content, measure its delivery and develop our services.")


def test_the_sieve_labels_a_consent_banner_bad_and_keeps_the_article():
    html = ("<html><body><main><article><h1>Flood closes the old bridge</h1>"
            + "".join(f"<p>{ARTICLE}</p>" for _ in range(4))
            + f"</article></main><div id='onetrust-consent-sdk'><div id='onetrust-banner-sdk'>"
            f"<h2>We value your privacy</h2><p>{CONSENT}</p><p>{CONSENT}</p></div></div></body></html>")
    paras = extract_paragraphs(html)
    labels = classify("sieve", paras, "en")
    kept = {p.plain for p, lab in zip(paras, labels) if lab == "good"}
    assert ARTICLE in kept
    assert not any(in_consent_dialog(p.path) for p, lab in zip(paras, labels) if lab == "good")
    assert sum(in_consent_dialog(p.path) for p in paras) == 3


def test_a_page_whose_own_wrapper_is_named_for_consent_keeps_its_text():
    """A dialog never holds all a page keeps: there the name is the page's, not a banner's."""
    html = ("<html><body><div class='consent-forms-app'><main><article><h1>Consent in clinical trials</h1>"
            + "".join(f"<p>{ARTICLE}</p>" for _ in range(4)) + "</article></main></div></body></html>")
    paras = extract_paragraphs(html)
    assert all(in_consent_dialog(p.path) for p in paras)
    kept = {p.plain for p, lab in zip(paras, classify("sieve", paras, "en")) if lab == "good"}
    assert ARTICLE in kept
