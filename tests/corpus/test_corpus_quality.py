"""Quality metrics and rules of the corpus stage, on constructed lake documents."""
import math

import pytest

from warclake.tasks.corpus.signals.quality import (
    QUALITY_RULES,
    RULES_BY_NAME,
    document_metrics,
    evaluate_rules,
    validate_thresholds,
)
from warclake.tasks.sample_dump import SENTENCES

ARTICLE = "body>div#main>article>p"


def lake_text(paragraphs):
    """Lake ``text`` from (path, text) pairs."""
    return "\n\n".join(f"{path}\x1c{text}" for path, text in paragraphs)


# Two Chinese sentences more than the sample dump has, so the page has C4's five sentences.
EXTRA = {"zh": ["图书馆每天早上九点开门，晚上八点关门。", "附近的学生常常在周末来这里看书和学习。"]}


def clean_paragraphs(lang="en"):
    """A page of the sample dump's sentences (each once) under a one-link menu and a title."""
    s = SENTENCES[lang] + EXTRA.get(lang, [])
    sep = "" if lang in ("ja", "zh") else " "
    body = [(ARTICLE, sep.join(s[i:i + 2])) for i in range(0, len(s), 2)]
    return [("body>header>nav>ul>li", "\x02Home\x03"), ("body>div#main>article>h1", "The town")] + body


def fired(text, lang="en", labels=None, thresholds=None):
    return {r.name for r, _, _ in evaluate_rules(document_metrics(text, labels, lang), lang, thresholds)}


def with_body(paragraphs, lang="en"):
    """The clean page with these paragraphs in its article."""
    return lake_text(clean_paragraphs(lang)[:2] + [(ARTICLE, p) for p in paragraphs])


WORDS = ["river", "garden", "market", "winter", "letter", "window", "basket", "candle", "forest",
         "pocket", "silver", "engine", "harbor", "meadow", "ladder", "pepper", "saddle", "tunnel"]
PROSE = " ".join(SENTENCES["en"])


def distinct_words(n):
    return " ".join(f"{WORDS[i % len(WORDS)]}{i // len(WORDS)}" for i in range(n))


# rule name -> (text, lang, labels) of a page that must fail it
FAILING = {
    "gopher_min_words": (with_body(["The museum is closed."]), "en", None),
    "gopher_max_words": (with_body([distinct_words(100_001) + "."]), "en", None),
    "gopher_min_mean_word_length": (with_body([" ".join(["a b to of it is"] * 20) + "."]), "en", None),
    "gopher_max_mean_word_length": (with_body([" ".join(["internationalisation"] * 80) + "."]), "en", None),
    "gopher_symbol_ratio": (with_body([PROSE, " ".join(f"#{w}" for w in WORDS) + " ..."]), "en", None),
    "gopher_bullet_lines": (with_body([f"• {s}" for s in SENTENCES["en"] * 4]), "en", None),
    "gopher_ellipsis_lines": (with_body([s[:40] + "…" for s in SENTENCES["en"] * 2]), "en", None),
    "gopher_alpha_words": (with_body([PROSE, " ".join(str(1000 + i) for i in range(400)) + "."]), "en", None),
    "gopher_stop_words": (with_body(["Cats sleep daily. Dogs bark loudly at night. Birds sing "
                                     "in spring. Rain falls on roofs. Children play outside. "] * 3), "en", None),
    "gopher_dup_lines": (with_body([SENTENCES["en"][0]] * 10), "en", None),
    "gopher_dup_paragraphs": (with_body([SENTENCES["en"][1]] * 10), "en", None),
    "gopher_dup_paragraph_chars": (with_body([PROSE, PROSE]), "en", None),
    "gopher_top_2gram": (with_body([" ".join(f"red apple {w}." for w in WORDS) * 3]), "en", None),
    "gopher_top_3gram": (with_body([" ".join(f"red apple pie {w}." for w in WORDS) * 3]), "en", None),
    "gopher_top_4gram": (with_body([" ".join(f"red apple pie crust {w}." for w in WORDS) * 3]), "en", None),
    **{f"gopher_dup_{n}gram": (with_body([PROSE + " " + PROSE]), "en", None) for n in range(5, 11)},
    "c4_min_sentences": (with_body([distinct_words(80)]), "en", None),
    "c4_lorem_ipsum": (with_body([PROSE, "Lorem ipsum dolor sit amet."]), "en", None),
    "c4_curly_bracket": (with_body([PROSE, "The template prints {name} for every reader of the page."]), "en", None),
    "c4_javascript_lines": (with_body(["Please enable JavaScript to view this site."] * 3 + [PROSE]), "en", None),
    "c4_policy_lines": (with_body([f"This site uses cookies, see line {i}." for i in range(6)] + [PROSE]), "en", None),
    "fineweb_line_punct": (with_body([distinct_words(40) + "\n" + distinct_words(40)] * 30
                                     + [PROSE]), "en", None),
    "fineweb_short_lines": (with_body(["\n".join(WORDS * 4), PROSE]), "en", None),
    "fineweb_dup_line_chars": (with_body(["\n".join(SENTENCES["en"])] * 2), "en", None),
    "fineweb_list_ratio": (with_body(["\n".join(WORDS * 6), PROSE]), "en", None),
    "ja_min_hiragana": (lake_text([(ARTICLE, "東京都千代田区丸ノ内一丁目 株式会社テスト 営業時間 午前九時 "
                                             "午後五時 電話番号 定休日 土曜日 日曜日 祝日。" * 4)]), "ja", None),
    "lake_link_chars": (lake_text([(ARTICLE, f"\x02{s}\x03") for s in SENTENCES["en"]]), "en", None),
    "lake_boilerplate_chars": (lake_text(clean_paragraphs()), "en", ["bad"] * len(clean_paragraphs())),
    # the text spread over a navigation, a sidebar and a footer, none of them the page's frame
    "lake_chrome_paths": (lake_text([(("body>nav>p", "body>div.sidebar>p", "body>div.site-footer>p")[i % 3], p)
                                     for i, (_, p) in enumerate(clean_paragraphs())]), "en", None),
}


def test_every_rule_has_a_failing_page_and_a_doc():
    assert set(FAILING) == set(RULES_BY_NAME)
    assert len(RULES_BY_NAME) == len(QUALITY_RULES)
    for rule in QUALITY_RULES:
        assert rule.op in ("<", ">") and len(rule.doc) > 30, rule.name


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_clean_pages_pass_every_rule(lang):
    labels = ["bad", "good"] + ["good"] * (len(clean_paragraphs(lang)) - 2)
    assert fired(lake_text(clean_paragraphs(lang)), lang, labels) == set()


@pytest.mark.parametrize("name", sorted(FAILING))
def test_rule_fires_on_its_failing_page(name):
    text, lang, labels = FAILING[name]
    assert name in fired(text, lang, labels)
    assert name not in fired(lake_text(clean_paragraphs(lang)), lang)


def test_chrome_counts_only_past_the_frame_of_the_page():
    """An element holding more than half of the text is the page's frame, whatever its name:
    a forum's posts in #comments (the posts' elements differ only in their digits, so they
    hold the text together), an article in a layout's sidebar container. Chrome beside the
    frame still counts."""
    posts = [(f"body>div#main>div#comments>article#elComment_{40 + i}>div.comment-{40 + i}_wrap>p", p)
             for i, (_, p) in enumerate(clean_paragraphs()[2:])]
    forum = lake_text([("body>div#main>h1", "The thread")] + posts)
    assert document_metrics(forum, None, "en")["chrome_path_char_share"] == 0.0
    assert "lake_chrome_paths" not in fired(forum)
    inside = lake_text([(f"body>div.sidebar-container>main>{p}", t) for p, t in clean_paragraphs()[1:]])
    assert "lake_chrome_paths" not in fired(inside)
    # beside the frame: the reply link of one post, and a page-wide menu
    reply = ("body>div#main>div#comments>article#elComment_41>div.comment-41_wrap>nav>a", "Reply to this post")
    menu = ("body>div.menu>a", "Sections of the forum")
    m = document_metrics(lake_text([("body>div#main>h1", "The thread")] + posts + [reply, menu]), None, "en")
    assert m["chrome_path_char_share"] == pytest.approx((len(reply[1]) + len(menu[1])) / (
        len("The thread") + sum(len(p) for _, p in posts) + len(reply[1]) + len(menu[1])))


def test_cjk_pages_are_measured_in_characters_not_words():
    # Two Japanese sentences have no space at all: as words they would be 1 word.
    text = lake_text([(ARTICLE, "".join(SENTENCES["ja"][:2]))])
    m = document_metrics(text, None, "ja")
    assert m["char_units"] == 1.0
    assert m["word_count"] == len("".join(SENTENCES["ja"][:2]))
    assert math.isnan(m["mean_word_length"])
    assert not fired(text, "ja") & {"gopher_min_mean_word_length", "gopher_max_mean_word_length"}
    # Chinese text without a language label is recognised by its characters
    zh = lake_text([(ARTICLE, "".join(SENTENCES["zh"] + EXTRA["zh"]))])
    assert document_metrics(zh, None, None)["char_units"] == 1.0
    assert fired(zh, None) == set()
    # so is Thai (no spaces between words), by its characters alone
    th = lake_text([(ARTICLE, "วันนี้อากาศดีมากและเด็กๆไปเล่นที่สวนสาธารณะ")])
    assert document_metrics(th, None, None)["char_units"] == 1.0


def hand_doc():
    return lake_text([
        ("body>nav>ul>li", "\x02Home\x03 \x02About us\x03"),                 # 3 words, 11 chars
        ("body>div>p", "One two three four five."),                          # 5 words
        ("body>div>p", "One two three four five."),                          # a repeat
        ("body>div>p", "Six, 77 ... ok"),                                    # 4 words, 2 without a letter
    ])


def test_values_match_hand_computed_figures():
    m = document_metrics(hand_doc(), ["bad", "good", "good", "good"], "en")
    assert m["word_count"] == 17
    chars = 11 + 2 * 20 + 11          # non-space characters
    assert m["chars"] == chars
    assert m["mean_word_length"] == pytest.approx(chars / 17)
    assert m["alpha_word_share"] == pytest.approx(15 / 17)
    assert m["symbol_word_ratio"] == pytest.approx(1 / 17)               # one "..."
    assert m["link_char_share"] == pytest.approx(11 / chars)
    # paragraph lengths with spaces: 13, 24, 24, 14
    assert m["boilerplate_char_share"] == pytest.approx(13 / 75)
    assert m["chrome_path_char_share"] == pytest.approx(13 / 75)
    assert m["dup_line_share"] == pytest.approx(1 / 4)
    assert m["dup_para_char_share"] == pytest.approx(24 / 75)
    assert m["terminal_punct_line_share"] == pytest.approx(2 / 4)
    assert m["c4_sentences"] == 2                                         # "Six, 77 ... ok" has none
    assert m["short_line_share"] == 1.0
    assert m["mean_path_depth"] == pytest.approx((4 + 3 + 3 + 3) / 4)
    assert m["en_stop_words"] == 0
    # n-grams of words without the punctuation around them ("five." is "five", "Six," is
    # "six", "..." is left out): 11 + 2 * 19 + 7 characters
    unit_chars = 56
    # "one two three four five" twice: its 5-gram repeats once, covering the second copy
    assert m["dup_5gram_char_share"] == pytest.approx(19 / unit_chars)
    # every 2-gram of that sentence occurs twice; among those the longest counts:
    # "three four" of 9 characters
    assert m["top_2gram_char_share"] == pytest.approx(2 * 9 / unit_chars)
    assert m["dup_6gram_char_share"] == 0.0


def test_japanese_kana_share_and_cjk_sentence_ends():
    text = lake_text([(ARTICLE, "今日は雨です。明日は晴れ！")])
    m = document_metrics(text, None, "ja")
    assert m["hiragana_share"] == pytest.approx(5 / 13)                  # は で す は れ
    assert m["c4_sentences"] == 2
    assert m["terminal_punct_line_share"] == 1.0


def test_thresholds_override_and_validation():
    text, lang, _ = FAILING["gopher_dup_lines"]
    assert "gopher_dup_lines" in fired(text, lang)
    assert "gopher_dup_lines" not in fired(text, lang, thresholds={"gopher_dup_lines": 0.99})
    (rule, value, used), = [f for f in evaluate_rules(document_metrics(text, None, lang), lang,
                                                      {"gopher_dup_lines": 0.5}) if f[0].name == "gopher_dup_lines"]
    assert used == 0.5 and value > 0.5
    with pytest.raises(ValueError, match="unknown quality rule 'no_such_rule'"):
        validate_thresholds({"no_such_rule": 1})
    with pytest.raises(ValueError, match="is a share: 0..1"):
        validate_thresholds({"gopher_dup_lines": 1.5})
    with pytest.raises(ValueError, match="must be >= 0"):
        validate_thresholds({"gopher_min_words": -1})
    with pytest.raises(ValueError, match="must be a number"):
        evaluate_rules({}, "en", {"gopher_min_words": "many"})
    assert validate_thresholds({"gopher_min_words": "20"}) == {"gopher_min_words": 20.0}


def test_empty_document_fails_the_minimum_without_errors():
    m = document_metrics("", None, None)
    assert m["word_count"] == 0
    assert "gopher_min_words" in {r.name for r, _, _ in evaluate_rules(m, None)}


def test_metrics_do_not_depend_on_the_process_hash_seed():
    """n-grams are compared through str hashes, which Python salts per process: the
    figures (ties among the most frequent n-grams included) must not move."""
    import os
    import subprocess
    import sys

    text = hand_doc()    # its most frequent 2-grams tie, with different lengths
    code = ("import json; from warclake.tasks.corpus.signals.quality import document_metrics; "
            f"print(json.dumps(document_metrics({text!r}, None, 'en'), sort_keys=True))")
    outs = [subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                           capture_output=True, text=True, check=True).stdout for seed in ("1", "2", "3")]
    assert outs[0] == outs[1] == outs[2] and outs[0].startswith("{")
