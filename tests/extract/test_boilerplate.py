"""Boilerplate modes on hand-made paragraph lists whose classes follow from the published
rules (jusText, the seed-002 density filter, BTE), plus the registry and the sieve model."""
import pytest

from warclake.tasks.extract.boilerplate import MODES, bte, classify, clean_text, density, justext
from warclake.tasks.extract.boilerplate.text import (
    function_char_density,
    guess_language,
    stoplist,
    stopword_density,
    word_units,
)
from warclake.tasks.extract.paragraph import Paragraph

# ~230 characters of ordinary English prose: stop-word density well above 0.32.
LONG_EN = ("The committee said that it would not be able to finish the report before the end "
           "of the year, because most of the people who were asked to give their views had "
           "not yet sent them in, and some of them had moved away.")
MEDIUM_EN = "It was one of the best of the days that we had in the summer there."  # < 70
NEAR_EN = ("They said that it was not the kind of thing that he would do in a town like this "
           "one.")  # 70..200 chars, stop-word rich
LIST_EN = ("Laptops Tablets Phones Cameras Printers Monitors Keyboards Mice Speakers Cables "
           "Chargers Adapters")  # > 70 chars, no stop words


def P(text, path="body>div>p", n_tags=1):
    return Paragraph(path, text, n_tags)


def link(text):
    return "\x02" + text + "\x03"


# ------------------------------------------------------------------ stop words and text
def test_stoplists_ship_for_required_languages():
    for lang in ("en", "de", "fr", "es", "it", "nl", "pt", "ru", "pl", "cs", "hu", "ja", "zh"):
        assert len(stoplist(lang)) >= 20, lang
    assert stoplist("xx") == frozenset()


def test_stopword_density_counts_words_with_punctuation_and_elision():
    assert stopword_density("The cat, and the dog.", "en") == pytest.approx(3 / 5)
    # l'homme counts through its elided article
    assert stopword_density("l'homme mange", "fr") == pytest.approx(1 / 2)
    assert stopword_density(LONG_EN, "en") > justext.STOPWORDS_HIGH
    assert stopword_density(LIST_EN, "en") < justext.STOPWORDS_LOW


def test_function_char_density_separates_japanese_prose_from_menus():
    prose = "今日は友達と一緒に公園へ行って、大きな木の下でお弁当を食べました。"
    menu = "会社概要 事業内容 採用情報 製品情報 お問合せ サイトマップ"
    assert function_char_density(prose, "ja") > justext.CJK_FUNC_HIGH["ja"]
    assert function_char_density(menu, "ja") < justext.CJK_FUNC_LOW["ja"]
    assert function_char_density("我们的产品是在中国生产的，这是我们公司的优势。", "zh") > \
        justext.CJK_FUNC_HIGH["zh"]


def test_word_units_and_language_guess():
    assert word_units("Hello, world - again") == 3
    assert word_units("日本語の文章") == 3          # six CJK characters, two to a word
    assert guess_language([LONG_EN]) == "en"
    assert guess_language(["Der Hund und die Katze sind nicht in dem Haus, aber auf der Straße."]) == "de"
    assert guess_language(["今日は友達と公園へ行きました。"]) == "ja"
    assert guess_language(["我们的产品是在中国生产的。"]) == "zh"


# ------------------------------------------------------------------ jusText
def cf(p, lang="en"):
    prm = justext.params_for(lang)
    return justext.context_free(p, lang, prm, bool(stoplist(lang)))


def test_context_free_classes_follow_the_published_table():
    assert cf(P(LONG_EN)) == "good"                           # long, high stop words
    assert cf(P(NEAR_EN)) == "near-good"                      # medium, high stop words
    assert cf(P(MEDIUM_EN)) == "short"                        # < LENGTH_LOW, no link
    assert cf(P(link("Home") + " and the news")) == "bad"    # short with a link
    assert cf(P(LIST_EN)) == "bad"                            # long, low stop words
    assert cf(P(link(LONG_EN[:60]) + LONG_EN[60:])) == "bad"  # link density > 0.2
    assert cf(P(LONG_EN + " © 2024 Example Inc.")) == "bad"   # copyright sign
    assert cf(P(LONG_EN, path="body>form>select>option")) == "bad"


def test_short_block_between_two_goods_is_good_and_between_bads_is_bad():
    paras = [P(LONG_EN), P(MEDIUM_EN), P(LONG_EN), P(LIST_EN), P(MEDIUM_EN), P(LIST_EN)]
    assert justext.classify(paras, "en") == ["good", "good", "good", "bad", "bad", "bad"]


def test_document_edges_count_as_bad():
    paras = [P(MEDIUM_EN), P(LONG_EN), P(MEDIUM_EN)]
    assert justext.classify(paras, "en") == ["bad", "good", "bad"]


def test_near_good_closest_to_the_bad_side_splits_a_mixed_run():
    # bad | short near-good short near-good | good
    paras = [P(LIST_EN), P(MEDIUM_EN), P(NEAR_EN), P(MEDIUM_EN), P(NEAR_EN), P(LONG_EN)]
    assert justext.classify(paras, "en") == ["bad", "bad", "good", "good", "good", "good"]
    # only short blocks between good and bad: all bad
    paras = [P(LONG_EN), P(MEDIUM_EN), P(MEDIUM_EN), P(LIST_EN)]
    assert justext.classify(paras, "en") == ["good", "bad", "bad", "bad"]


def test_heading_before_good_text_is_kept():
    head = P("Annual report", path="body>div>h2")
    # pre-processing: the short heading becomes near-good and keeps the short block after it
    paras = [P(LIST_EN), head, P(MEDIUM_EN), P(LONG_EN), P(LIST_EN)]
    assert justext.classify(paras, "en") == ["bad", "good", "good", "good", "bad"]
    # too far: more than MAX_HEADING_DISTANCE characters of other text in between
    far = [P(LIST_EN), head, P(LIST_EN), P(LIST_EN), P(LIST_EN), P(LONG_EN)]
    assert justext.classify(far, "en")[1] == "bad"
    # a heading that is context-free bad (a link) stays bad
    bad_head = P(link("Annual report"), path="body>div>h2")
    assert justext.classify([P(LIST_EN), bad_head, P(LONG_EN)], "en")[1] == "bad"
    # headings switched off: the same heading is just a short block next to a bad one
    prm = justext.Params(no_headings=True)
    assert justext.classify(paras, "en", prm)[1] == "bad"


def test_post_processing_rescues_a_heading_between_bad_blocks():
    # short heading, then a near-good paragraph (not good), then a good one:
    # pre-processing does not fire (no good within reach? it is: NEAR is < 200 chars)
    head = P("Results", path="body>h3")
    paras = [P(LIST_EN), head, P(LIST_EN), P(LONG_EN)]
    # context-sensitive alone would make the heading bad (bad on both sides);
    # post-processing sees good text within 200 characters and keeps it.
    assert justext.classify(paras, "en") == ["bad", "good", "bad", "good"]


def test_language_without_stoplist_uses_length_only():
    assert cf(P(LIST_EN), lang="xx") == "near-good"
    assert cf(P(LIST_EN + " " + LIST_EN + " " + LIST_EN), lang="xx") == "good"


def test_cjk_uses_character_lengths_and_function_characters():
    ja_good = P("今日は友達と一緒に公園へ行って、大きな木の下でお弁当を食べました。"
                "それから池のまわりを散歩して、夕方に家へ帰りました。とても楽しい一日でした。")
    ja_menu = P("会社概要 事業内容 採用情報 製品情報 お問合せ サイトマップ プライバシー")
    assert cf(ja_good, "ja") == "good"
    assert cf(ja_menu, "ja") == "bad"
    assert justext.classify([ja_menu, ja_good, ja_menu], "ja") == ["bad", "good", "bad"]


# ------------------------------------------------------------------ density filter
def test_density_keeps_text_heavy_and_drops_markup_heavy_and_short():
    text = LONG_EN
    paras = [P(text, n_tags=2), P(text, n_tags=2), P(text, n_tags=60), P("Short one", n_tags=0)]
    # densities: 2 tags -> ~0.8, 60 tags -> ~0.11; threshold 0.5 - stdev
    assert density.classify(paras) == ["good", "good", "bad", "bad"]
    d = density.density(paras[0])
    n = len(text)
    assert d == pytest.approx((n + 1) / (n + 2 * density.MARKUP_CHARS_PER_TAG + 1))


def test_density_threshold_drops_with_spread():
    # one paragraph alone: stdev 0 -> threshold 0.5
    mid = P("x" * 100, n_tags=4)          # density (101)/(221) ~ 0.457 < 0.5
    assert density.classify([mid]) == ["bad"]
    # with widely spread densities the threshold falls below 0.457 and it is kept
    paras = [mid, P("y" * 100, n_tags=0), P("z" * 100, n_tags=40)]
    assert density.classify(paras)[0] == "good"


# ------------------------------------------------------------------ BTE
def test_bte_picks_the_span_where_words_outweigh_tags():
    paras = [
        P("Home About Contact", n_tags=30),        # 3 words, 30 tags
        P(LONG_EN, n_tags=3),                       # ~45 words
        P("Back to top", n_tags=4),                 # inside: 3 words - 4 tags, bridged
        P(LONG_EN, n_tags=3),
        P("Privacy Terms Sitemap", n_tags=40),
    ]
    assert bte.classify(paras) == ["bad", "good", "good", "good", "bad"]
    assert bte.best_span(paras) == (1, 3)


def test_bte_matches_brute_force_on_token_sequences():
    import random
    rnd = random.Random(7)
    for _ in range(200):
        paras = [P(" ".join(["w"] * rnd.randint(1, 8)), n_tags=rnd.randint(0, 9))
                 for _ in range(rnd.randint(1, 8))]
        seq, owner = [], []        # 1 = tag, 0 = word; owner = paragraph of each word
        for k, p in enumerate(paras):
            seq += [1] * p.n_tags + [0] * word_units(p.plain)
            owner += [-1] * p.n_tags + [k] * word_units(p.plain)

        def objective(i, j):       # tags outside [i, j] + words inside
            inside = seq[i:j + 1]
            return (sum(seq) - sum(inside)) + inside.count(0)

        best = max(objective(i, j) for i in range(len(seq)) for j in range(i, len(seq)))
        first, last = bte.best_span(paras)
        i = owner.index(first)
        j = len(owner) - 1 - owner[::-1].index(last)
        assert objective(i, j) == best


# ------------------------------------------------------------------ registry and sieve
def test_registry_returns_one_label_per_paragraph_for_every_mode():
    paras = [P(link("Home") + " | " + link("News")), P(LONG_EN), P(MEDIUM_EN), P(LONG_EN)]
    for mode in MODES:
        labels = classify(mode, paras, "en")
        assert len(labels) == len(paras) and set(labels) <= {"good", "bad"}, mode
    assert classify("none", paras) == ["good"] * 4
    assert classify("justext", [], "en") == []
    with pytest.raises(ValueError):
        classify("nope", paras)
    assert clean_text(paras, ["bad", "good", "bad", "bad"]) == LONG_EN


def test_sieve_keeps_article_text_and_drops_navigation():
    nav = "body>div#header>ul.nav-menu>li"
    paras = ([P(link(w), path=nav, n_tags=2) for w in ("Home", "News", "Sport", "Contact")]
             + [P("Council approves new budget", path="body>div#content>div.article>h1")]
             + [P(t, path="body>div#content>div.article>p", n_tags=1)
                for t in (LONG_EN, NEAR_EN, LONG_EN)]
             + [P(link("Privacy") + " | " + link("Terms") + " | © 2024 Example",
                  path="body>div#footer>p", n_tags=4)])
    labels = classify("sieve", paras, "en")
    assert labels[:4] == ["bad"] * 4
    assert labels[5:8] == ["good"] * 3
    assert labels[-1] == "bad"
