"""Random HTML pages made of the markup that paragraph extraction and the boilerplate
features have to get right: nested blocks, links across blocks, <br>, <hr>, empty blocks,
CJK and astral text, odd whitespace, closers after sentence ends, class and id names of
every feature group. Deterministic from a seed."""
from __future__ import annotations

import random

SNIPPETS = [
    "The committee met on Tuesday.", "Is it \"done\"?", "Yes! (finally)", "It works.\u201d Then",
    "e.g. the U.S. market", "Read more...", "Home | About | Contact", "© 2024 Example Inc.",
    "日本語の文章です。", "これは「テスト」です！", "中文的句子。", "한국어 문장입니다.",
    "Привет, МИР. Ёлка", "ΑΘΗΝΑ και Σπάρτη", "emoji 😀 and 𠮷野家", "tab\there\u3000wide\xa0nbsp",
    "zero\u200bwidth", "1,234.56 € / 78%", "ALL CAPS TITLE", "CamelCase iPhone McDonald",
    "don't l'homme dell'anno", "a.b.c", "» next", "Price: 10:30 / 12", "   ", "x",
    "stray \x02 marker", "line one\nline two", "end with closer.)", "what?!\u2019 ok",
]
BLOCKS = ["div", "p", "section", "article", "nav", "footer", "header", "aside", "main", "li",
          "td", "h1", "h2", "h3", "blockquote", "pre", "dd", "form", "center"]
INLINE = ["span", "b", "em", "font", "strong", "code"]
NAMES = ["content", "nav", "menu", "footer", "sidebar", "postBody", "articleText", "AdSlot",
         "related-posts", "share_buttons", "comment", "main", "x1", "BIGBox", "commentsList",
         "top", "byline", "search-form", "entry-content", "col-md-4"]


def _attrs(rng: random.Random) -> str:
    out = ""
    if rng.random() < 0.5:
        out += ' class="' + " ".join(rng.sample(NAMES, rng.randint(1, 3))) + '"'
    if rng.random() < 0.2:
        out += f' id="{rng.choice(NAMES)}{rng.randint(0, 9)}"'
    return out


def _node(rng: random.Random, depth: int) -> str:
    r = rng.random()
    if depth > 6 or r < 0.30:
        return rng.choice(SNIPPETS) + rng.choice(["", " ", "\n", "  \t"])
    if r < 0.40:
        href = rng.choice([' href="/x"', ' href=""', ""])
        return f"<a{href}>{_children(rng, depth + 1, 2)}</a>"
    if r < 0.47:
        return rng.choice(["<br>", "<br/>", "<hr>", "<img src=x>", "<!-- c -->",
                           "<script>var a='<p>no</p>';</script>", "<style>p{}</style>",
                           "<select><option>One</option><option>Two</option></select>"])
    if r < 0.60:
        tag = rng.choice(INLINE)
        return f"<{tag}{_attrs(rng)}>{_children(rng, depth + 1, 3)}</{tag}>"
    tag = rng.choice(BLOCKS)
    inner = "" if rng.random() < 0.1 else _children(rng, depth + 1, 4)  # some blocks are empty
    close = "" if rng.random() < 0.05 else f"</{tag}>"                  # some never closed
    return f"<{tag}{_attrs(rng)}>{inner}{close}"


def _children(rng: random.Random, depth: int, most: int) -> str:
    return "".join(_node(rng, depth) for _ in range(rng.randint(1, most)))


def page(seed: int) -> str:
    rng = random.Random(seed)
    body = "".join(_node(rng, 0) for _ in range(rng.randint(3, 12)))
    return f"<html><head><title>T</title></head><body{_attrs(rng)}>{body}</body></html>"


def text(seed: int) -> str:
    """A paragraph-like string: snippets and single characters of many classes."""
    rng = random.Random(seed)
    alphabet = "aZ0 .!?。！？\"'”’)]|»«•·>/:-—…,;\n\t\xa0\u3000ÀÖØÞАЯЁёß日本かカ한😀𠮷\u200b_©"
    parts = [rng.choice(SNIPPETS) if rng.random() < 0.5 else
             "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
             for _ in range(rng.randint(0, 6))]
    return rng.choice(["", " "]).join(parts)
