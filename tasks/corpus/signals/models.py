"""A user's quality models and word lists, and the scores they give a table of lake
documents: a fastText classifier's probability of one label per document (as DCLM and
FineWeb-Edu classifiers are used), an n-gram language model's log-probability per
paragraph (KenLM binary or ARPA, as CCNet and Uzushio use), and the matches of a word list
per paragraph (as Uzushio's NG-word filter counts them).

Nothing here downloads a model: every model is a file the user names. Each file's
SHA-256 is its fingerprint, stored with the scores it gave, so a changed model recomputes
its scores and nothing else does.

Which text each model reads:
- fastText: the document's paragraphs the corpus would keep before repeated-text removal
  (those labelled good; all when the document has no labels), plain text, joined by a
  space (fastText reads one line); the decision step scores again, less the paragraphs
  repeated-text removal drops, the documents that lose one (``steps/kept_metrics.py``).
  It is scored by the compiled scorer
  (``tasks/native/corpus_fasttext.pyx``) straight from the documents' Arrow buffers, which
  gives what the ``fasttext`` package's ``predict`` gives (``fasttext_format.py`` defines
  it); the package scores instead when the scorer is not built, fails its check, meets a
  model it does not read (quantised), or ``WARCLAKE_NATIVE=0``.
- the language model and word lists: every paragraph, normalised as the stage compares
  paragraphs (NFKC, lower case, link markers out, whitespace runs as one space). The
  decision step sums them over the paragraphs the corpus keeps.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from dataclasses import dataclass, field

import pyarrow as pa

from warclake.tasks.corpus.signals.normalise import normalise, split_paragraphs
from warclake.tasks.corpus.signals.quality import CHAR_UNIT_LANGS
from warclake.tasks.extract.paragraph import LINK_END, LINK_START, PARA_SEP, PATH_SEP

ANY_LANG = "*"   # the key of a model or list that applies to every language without its own
LM_TOKENS = ("words", "chars")

DOC_SCORES = pa.schema([
    ("docId", pa.string()), ("fasttext_score", pa.float64()), ("fasttext_label", pa.string()),
    ("fasttext_model", pa.string()),
])
PARA_SCORES = pa.schema([
    ("docId", pa.string()), ("idx", pa.int32()), ("good", pa.bool_()), ("n_chars", pa.int32()),
    ("lm_log10", pa.float64()), ("lm_tokens", pa.int32()), ("perplexity", pa.float64()),
    ("lm_model", pa.string()), ("word_matches", pa.int32()), ("word_match_chars", pa.int32()),
    ("word_list", pa.string()),
])


@dataclass(frozen=True)
class ScoreModels:
    """The user's models: paths, keyed by language (``*``: every other language)."""
    fasttext: str | None = None                 # a supervised fastText model (.bin)
    fasttext_label: str = "__label__hq"         # the label whose probability is the score
    lm: dict = field(default_factory=dict)      # lang -> KenLM binary or ARPA file
    lm_tokens: str = "words"                    # words: split on spaces; chars: every character a token
    word_lists: dict = field(default_factory=dict)   # lang -> file, one word or phrase per line

    def __post_init__(self):
        if self.lm_tokens not in LM_TOKENS:
            raise ValueError(f"lm tokens {self.lm_tokens!r}: use {' or '.join(LM_TOKENS)}")
        if self.fasttext is not None and not self.fasttext_label.strip():
            raise ValueError("the fastText label is empty")
        for what, path in self.files():
            if not os.path.isfile(path):
                raise ValueError(f"{what}: no such file: {path}")

    def __hash__(self):
        return hash(repr(self))

    @property
    def any(self) -> bool:
        return bool(self.fasttext or self.lm or self.word_lists)

    @property
    def paragraph_scores(self) -> bool:
        return bool(self.lm or self.word_lists)

    def fasttext_path(self) -> str:
        """The fastText model's file, for a caller that scores with it."""
        if self.fasttext is None:
            raise ValueError("no fastText model given")
        return self.fasttext

    def files(self) -> list[tuple[str, str]]:
        out = [("fastText model", self.fasttext)] if self.fasttext else []
        out += [(f"language model {lang}", p) for lang, p in sorted(self.lm.items())]
        out += [(f"word list {lang}", p) for lang, p in sorted(self.word_lists.items())]
        return out

    def fingerprints(self) -> dict:
        """What the scores depend on: each file's SHA-256, the label and the tokens."""
        return {"fasttext": file_sha256(self.fasttext) if self.fasttext else None,
                "fasttext_label": self.fasttext_label if self.fasttext else None,
                "lm": {lang: file_sha256(p) for lang, p in sorted(self.lm.items())},
                "lm_tokens": self.lm_tokens if self.lm else None,
                "word_lists": {lang: file_sha256(p) for lang, p in sorted(self.word_lists.items())},
                "normalise": "1"}

    @classmethod
    def from_dict(cls, d: dict | None) -> "ScoreModels | None":
        """From a flow parameter (``as_dict``); None for no model."""
        return cls(**d) if d else None

    def as_dict(self) -> dict:
        return {"fasttext": self.fasttext, "fasttext_label": self.fasttext_label, "lm": dict(self.lm),
                "lm_tokens": self.lm_tokens, "word_lists": dict(self.word_lists)}


_SHA: dict[tuple, str] = {}
_SHA_LOCK = threading.Lock()


def file_sha256(path: str) -> str:
    """The file's SHA-256 (hex), computed once per process per (path, size, mtime)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    with _SHA_LOCK:
        if key in _SHA:
            return _SHA[key]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    with _SHA_LOCK:
        _SHA[key] = h.hexdigest()
    return _SHA[key]


def for_lang(paths: dict, lang: str | None) -> str | None:
    """The file of ``lang`` in a lang -> file map (``*`` for the others)."""
    return paths.get(lang or "", paths.get(ANY_LANG))


# -- loaded models, once per process ----------------------------------------------------

_LOADED: dict[tuple, object] = {}
_LOAD_LOCK = threading.Lock()


def _loaded(kind: str, path: str, load):
    key = (kind, file_sha256(path))
    with _LOAD_LOCK:
        if key not in _LOADED:
            _LOADED[key] = load(path)
        return _LOADED[key]


def fasttext_model(path: str):
    def load(p):
        import fasttext

        return fasttext.load_model(p)
    return _loaded("fasttext", path, load)


def compiled_fasttext(path: str):
    """The compiled scorer's model of the file (``corpus_fasttext.Model``), or None when the
    scorer is not in use or does not read this model and the ``fasttext`` package is
    installed to score it; a model neither reads: ValueError (one line)."""
    from warclake.tasks.corpus.signals import fasttext_native

    native = fasttext_native.compiled_module()
    if native is None:
        return None

    def load(p):
        from warclake.tasks.corpus.signals.fasttext_format import UnsupportedModel, read_model

        try:
            return fasttext_native.compiled_model(native, read_model(p))
        except UnsupportedModel as exc:
            return exc
    model = _loaded("fasttext-compiled", path, load)
    if isinstance(model, Exception):
        try:
            import fasttext  # noqa: F401 - the package scores what the compiled scorer does not read
        except ImportError:
            raise ValueError(str(model)) from None
        return None
    return model


def language_model(path: str):
    def load(p):
        import kenlm

        return kenlm.Model(p)
    return _loaded("kenlm", path, load)


class WordList:
    """Matches of a list's words in normalised text. In a language written with spaces a
    word matches whole words only (``ass`` not in ``class``); in Chinese, Japanese, Korean,
    Thai, Lao, Khmer and Burmese anywhere, as those have no spaces between words."""

    def __init__(self, path: str, lang: str | None):
        with open(path, encoding="utf-8") as fh:
            words = {" ".join(normalise(line).split()) for line in fh}
        words.discard("")
        alts = "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))
        if not alts:
            self.pattern = None
        elif lang in CHAR_UNIT_LANGS:
            self.pattern = re.compile(alts)
        else:
            self.pattern = re.compile(rf"(?<!\w)(?:{alts})(?!\w)")

    def matches(self, text: str) -> tuple[int, int]:
        """(matches, characters matched) in ``text`` (normalised), without overlaps."""
        if self.pattern is None:
            return 0, 0
        found = self.pattern.findall(text)
        return len(found), sum(len(w) for w in found)


def word_list(path: str, lang: str | None) -> WordList:
    return _loaded(f"words:{lang in CHAR_UNIT_LANGS}", path, lambda p: WordList(p, lang))


def lm_tokens(text: str, mode: str) -> list[str]:
    """The tokens of normalised text the language model reads."""
    return text.split() if mode == "words" else [c for c in text if not c.isspace()]


def lm_score(model, tokens: list[str]) -> float:
    """log10 P(tokens, end of sentence | start of sentence)."""
    return model.score(" ".join(tokens), bos=True, eos=True)


def perplexity(log10: float, tokens: int) -> float:
    """Perplexity of ``tokens`` predictions (the end of sentence counts as one) of total
    log10 probability ``log10``."""
    return 10.0 ** (-log10 / tokens)


# -- the scores of a table of documents -------------------------------------------------

def kept_before_repeats(labels: list | None, n: int) -> list[bool]:
    """Which of a document's ``n`` paragraphs the corpus keeps before repeated-text
    removal (``corpus_documents``): labelled good, or all when it has no labels."""
    if labels is None:
        return [True] * n
    return [i < len(labels) and labels[i] == "good" for i in range(n)]


def score_documents(docs: pa.Table, models: ScoreModels) -> tuple[pa.Table, pa.Table]:
    """(document scores, paragraph scores) of a table of lake documents (``docId``,
    ``text``, ``lang``, ``paragraph_labels``). Paragraph rows are made only when a
    language model or word list is given."""
    n = docs.num_rows
    fp = models.fingerprints()
    para_cols: dict[str, list] = {k: [] for k in PARA_SCORES.names}
    id_column = docs.column("docId")
    # the ids as they are (no Python string per document) unless paragraph rows need them
    ids = (id_column.combine_chunks() if id_column.type == pa.string() and not models.paragraph_scores
           else id_column.to_pylist())
    if models.paragraph_scores:
        texts = docs.column("text").to_pylist()
        langs = docs.column("lang").to_pylist() if "lang" in docs.column_names else [None] * len(ids)
        labels = (docs.column("paragraph_labels").to_pylist() if "paragraph_labels" in docs.column_names
                  else [None] * len(ids))
        for doc, text, lang, labs in zip(ids, texts, langs, labels):
            paras = split_paragraphs(text)
            _paragraph_rows(para_cols, doc, lang, paras, kept_before_repeats(labs, len(paras)), models, fp)
    scores = document_fasttext_scores(docs, models) if models.fasttext else pa.nulls(n, pa.float64())
    doc_table = pa.table({
        "docId": ids if isinstance(ids, pa.Array) else pa.array(ids, pa.string()), "fasttext_score": scores,
        "fasttext_label": pa.array([models.fasttext_label if models.fasttext else None] * n, pa.string()),
        "fasttext_model": pa.array([fp["fasttext"]] * n, pa.string()),
    }, schema=DOC_SCORES)
    return doc_table, pa.table(para_cols, schema=PARA_SCORES)


def document_fasttext_scores(docs: pa.Table, models: ScoreModels) -> pa.Array:
    """The fastText score of each document of a table (float64, null where none): by the
    compiled scorer from the table's buffers, else by the package over ``fasttext_lines``."""
    from warclake.tasks.corpus.signals import fasttext_native

    compiled = compiled_fasttext(models.fasttext_path())
    if compiled is not None:
        scores = fasttext_native.score_table(compiled, docs, models.fasttext_label)
        if scores is not None:
            return scores
    return pa.array(fasttext_scores(models, fasttext_lines(docs)), pa.float64())


def fasttext_lines(docs: pa.Table) -> list[str]:
    """``fasttext_line`` of every document of a table, by ``str`` methods over each text
    (no path and body pair per paragraph; 224 against 243 µs per document on the
    project's dump, whose pages have 175 paragraphs on average)."""
    texts = docs.column("text").to_pylist()
    labels = (docs.column("paragraph_labels").to_pylist() if "paragraph_labels" in docs.column_names
              else [None] * len(texts))
    out = []
    for text, labs in zip(texts, labels):
        if not text:
            out.append("")
            continue
        paras = text.split(PARA_SEP)
        if labs is not None:   # zip stops at the labels' end: a paragraph past it is not good
            paras = [p for p, lab in zip(paras, labs) if lab == "good"]
        line = " ".join([p[p.find(PATH_SEP) + 1:] for p in paras])   # find: -1 when no path
        out.append(line.replace(LINK_START, "").replace(LINK_END, "").replace("\n", " ").replace("\r", " "))
    return out


def fasttext_line(paras: list[tuple[str, str]], kept: list[bool]) -> str:
    """The kept paragraphs' plain text as one line, as fastText reads it (it splits words
    on whitespace itself; a line feed would end the line): the definition
    ``fasttext_lines`` computes for a whole table."""
    line = " ".join(b for (_, b), k in zip(paras, kept) if k)
    return line.replace(LINK_START, "").replace(LINK_END, "").replace("\n", " ").replace("\r", " ")


def _paragraph_rows(cols: dict, doc: str, lang: str | None, paras, kept, models: ScoreModels, fp: dict) -> None:
    lm_path, wl_path = for_lang(models.lm, lang), for_lang(models.word_lists, lang)
    lm = language_model(lm_path) if lm_path else None
    wl = word_list(wl_path, lang) if wl_path else None
    lm_fp = fp["lm"][lang if lang in models.lm else ANY_LANG] if lm_path else None
    wl_fp = fp["word_lists"][lang if lang in models.word_lists else ANY_LANG] if wl_path else None
    for i, ((_, body), k) in enumerate(zip(paras, kept), 1):
        text = normalise(body)
        log10 = n_tok = ppl = matches = matched = None
        if lm is not None:
            tokens = lm_tokens(text, models.lm_tokens)
            if tokens:
                log10, n_tok = lm_score(lm, tokens), len(tokens) + 1
                ppl = perplexity(log10, n_tok)
        if wl is not None:
            matches, matched = wl.matches(text)
        for name, v in (("docId", doc), ("idx", i), ("good", k), ("n_chars", len(text)), ("lm_log10", log10),
                        ("lm_tokens", n_tok), ("perplexity", ppl), ("lm_model", lm_fp),
                        ("word_matches", matches), ("word_match_chars", matched), ("word_list", wl_fp)):
            cols[name].append(v)


def fasttext_scores(models: ScoreModels, lines: list[str]) -> list[float | None]:
    """The probability of the label for each line (None for an empty line, or one with no
    word the model knows), as fastText's ``predict`` gives it (k=-1: every label; its
    probabilities carry a 1e-5 floor, clipped to 1)."""
    return package_scores(fasttext_model(models.fasttext_path()), lines, models.fasttext_label)


def package_scores(model, lines: list[str], want: str) -> list[float | None]:
    """``fasttext_scores`` with a model the ``fasttext`` package loaded."""
    out: list[float | None] = [None] * len(lines)
    todo = [i for i, t in enumerate(lines) if t]
    if not todo:
        return out
    labels, probs = model.predict([lines[i] for i in todo], k=-1)
    for i, labs, ps in zip(todo, labels, probs):
        if not len(labs):
            continue
        p = 0.0
        for lab, v in zip(labs, ps):
            if lab == want:
                p = float(v)
                break
        # fastText's probabilities carry a 1e-5 floor and may pass 1 by it
        out[i] = min(1.0, max(0.0, p)) if math.isfinite(p) else None
    return out
