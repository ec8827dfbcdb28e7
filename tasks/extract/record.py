"""One record, one way: record -> (charset, text) -> language -> paragraphs -> labels -> row.

Every record ends with exactly one ledger outcome. The checks run cheapest first, and
language comes before HTML parsing so that pages in other languages cost almost nothing.
Each step returns what it made, or the :class:`Outcome` that ends the record there; the
record's :class:`Result` gets its outcome only where a step's answer is returned
(:func:`_end`), never as a side effect deeper down.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from warclake.tasks.archive.content_encoding import ContentEncodingError
from warclake.tasks.archive.reader import RawRecord
from warclake.tasks.extract.boilerplate import classify as classify_paragraphs
from warclake.tasks.extract.charset import DecodeResult, decode_body
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.extract.dates import document_date
from warclake.tasks.extract.doc_id import doc_id
from warclake.tasks.extract.html_limits import too_complex
from warclake.tasks.extract.html_paragraphs import TooManyParagraphs, extract_paragraphs
from warclake.tasks.extract.language import LangResult, LanguageDetector, LinguaCall
from warclake.tasks.extract.outcomes import Outcome
from warclake.tasks.extract.page_scan import scan as scan_page
from warclake.tasks.extract.paragraph import Paragraph, join_paragraphs
from warclake.tasks.extract.timings import StageStats, clock

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/xhtml", "text/xhtml",
                        "application/vnd.wap.xhtml+xml"})
_HTML_SNIFF = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title)\b", re.I | re.S)


@dataclass
class Context:
    """What every record of one archive shares."""
    dump: str
    warc_name: str
    config: ExtractConfig
    detector: LanguageDetector = field(init=False, repr=False)
    stages: StageStats = field(default_factory=StageStats, repr=False)  # seconds per stage

    def __post_init__(self):
        self.detector = LanguageDetector.from_config(self.config)


@dataclass(slots=True)
class Result:
    outcome: Outcome
    payload_bytes: int | None = None  # the payload's whole length, when it was read in full
    charset: str | None = None
    charset_source: str | None = None
    lang: str | None = None
    document: dict | None = None


def media_type(value: str | None) -> str:
    return value.split(";", 1)[0].strip().lower() if value else ""


def looks_like_html(body: bytes) -> bool:
    """Sniff the first bytes; used only when the server sent no Content-Type."""
    return bool(_HTML_SNIFF.match(body[:1024]))


@dataclass(slots=True)
class Pending:
    """A page whose language waits for lingua; everything before that is done."""
    raw: RawRecord
    res: Result
    paragraphs: list[Paragraph]
    call: LinguaCall


def process_record(raw: RawRecord, ctx: Context) -> Result:
    """One record, start to finish."""
    out = begin_record(raw, ctx)
    return finish_pending([out], ctx)[0] if isinstance(out, Pending) else out


def finish_pending(pages: list[Pending], ctx: Context, mark=None) -> list[Result]:
    """The pages' lingua calls back to back, then their documents: lingua's models stay in
    the CPU caches, which inside an extraction takes lingua from ~2.1 to ~1.25 ms a page.
    ``mark(offset)``, if given, is told each page's record before its work starts."""
    t = clock()
    langs = []
    for p in pages:
        if mark is not None:
            mark(p.raw.offset)
        langs.append(ctx.detector.run(p.call))
        t = ctx.stages.add("language", t)
    out = []
    for p, lang in zip(pages, langs):
        if mark is not None:
            mark(p.raw.offset)
        out.append(_accept(p.raw, ctx, p.res, p.paragraphs, lang))
    return out


def begin_record(raw: RawRecord, ctx: Context) -> Result | Pending:
    """A record's result, or a :class:`Pending` page when only its lingua call is left
    (for :func:`finish_pending`)."""
    kind = raw.rec_type
    if kind == "conversion":   # WET: Common Crawl's own extracted text, UTF-8
        return _process_text(raw, ctx)
    if kind == "metadata" and media_type(raw.content_type) == "application/json":
        return Result(Outcome.METADATA)  # WAT: headers and links, no text to extract
    if kind != "response":
        return Result(Outcome.NOT_RESPONSE)
    if raw.http_headers is None or raw.http_error:
        return Result(Outcome.HTTP_PARSE_ERROR)
    if raw.http_status != 200:
        return Result(Outcome.HTTP_STATUS)
    if raw.truncated:
        return Result(Outcome.WARC_TRUNCATED)
    content_type = raw.http_headers.get("content-type")
    ctype = media_type(content_type)
    if ctype and ctype not in HTML_TYPES:
        return Result(Outcome.NOT_TEXT)
    t = clock()
    try:
        body, size = raw.read_payload()
    except ContentEncodingError:
        return Result(Outcome.CONTENT_ENCODING_FAILED)
    except Exception:  # bad chunking
        return Result(Outcome.HTTP_PARSE_ERROR)
    finally:  # the record's own read is counted already (extract_archive): seconds only
        ctx.stages.seconds["read"] += clock() - t
    if size != len(body):
        return _oversize(raw, size)
    if not raw.complete():
        return Result(Outcome.RECORD_BROKEN)
    if not ctype and not looks_like_html(body):  # trust the server when it speaks
        return Result(Outcome.NOT_TEXT, payload_bytes=size)
    return _process_html(raw, body, content_type, ctx)


def _oversize(raw: RawRecord, size: int | None) -> Result:
    """A payload longer than max_payload (its length, when known); a damaged record is
    ``record_broken`` whatever its size, as a smaller one would be."""
    if not raw.complete():
        return Result(Outcome.RECORD_BROKEN)
    return Result(Outcome.OVERSIZE, payload_bytes=size)


def _end(res: Result, outcome: Outcome) -> Result:
    """The record ends here with ``outcome``: the one place a step's answer becomes the outcome."""
    res.outcome = outcome
    return res


def _decode(body: bytes, content_type: str | None, ctx: Context, res: Result) -> DecodeResult | Outcome:
    """The charset cascade: the decoded page (its charset noted in ``res``), or ``charset_failed``."""
    t = clock()
    decoded = decode_body(body, content_type, ctx.config.charset_window)
    ctx.stages.add("charset", t)
    if decoded is None:
        return Outcome.CHARSET_FAILED
    res.charset, res.charset_source = decoded.charset, decoded.source
    return decoded


def _detect(text: str, ctx: Context, res: Result) -> float | Outcome:
    """The language: its score when it is a target, else the outcome that rejects it."""
    t = clock()
    lang = ctx.detector.detect(text)
    ctx.stages.add("language", t)
    return _judge(lang, res)


def _judge(lang: LangResult, res: Result) -> float | Outcome:
    """A language decision (noted in ``res``): its score, or lang_undetermined / lang_rejected."""
    res.lang = lang.lang
    if not lang.accepted:
        return Outcome.LANG_UNDETERMINED if lang.undetermined else Outcome.LANG_REJECTED
    return lang.score


def _paragraphs(page: DecodeResult, ctx: Context) -> list[Paragraph] | Outcome:
    """The page's paragraphs, or too_complex / html_parse_error."""
    cfg = ctx.config
    t = clock()
    try:
        # checked before the parser pays for it (on the UTF-8 bytes when at hand: one pass
        # there gives the limits' counts and the walk's looks at the page)
        if page.utf8 is None:
            if too_complex(page.text, cfg.max_depth, cfg.max_tags):
                return Outcome.TOO_COMPLEX
            return extract_paragraphs(page.text, cfg.max_paragraphs)
        scan = scan_page(page.utf8)
        if too_complex(page.utf8, cfg.max_depth, cfg.max_tags, scan[:2]):
            return Outcome.TOO_COMPLEX
        return extract_paragraphs(page.text, cfg.max_paragraphs, utf8=page.utf8, scan=scan)
    except TooManyParagraphs:
        return Outcome.TOO_COMPLEX
    except Exception:  # the parser must not take the archive down with it
        return Outcome.HTML_PARSE_ERROR
    finally:
        ctx.stages.add("parse", t)


def _process_html(raw: RawRecord, body: bytes, content_type: str | None, ctx: Context) -> Result | Pending:
    res = Result(Outcome.KEPT, payload_bytes=len(body))
    if not body.strip():
        return _end(res, Outcome.EMPTY)
    page = _decode(body, content_type, ctx, res)
    if isinstance(page, Outcome):
        return _end(res, page)
    text = page.text
    # Non-Latin targets: language first, so most pages are rejected before any parsing.
    # Latin targets: parse first and judge the language on the paragraphs' text.
    early = not ctx.detector.wants_paragraphs
    score = _detect(text, ctx, res) if early else 0.0
    if isinstance(score, Outcome):
        return _end(res, score)
    paragraphs = _paragraphs(page, ctx)
    if isinstance(paragraphs, Outcome):
        return _end(res, paragraphs)
    if not early:
        t = clock()
        decision = ctx.detector.plan(text, _leading_text(paragraphs, ctx.config.latin_buffer_chars))
        ctx.stages.add("language", t)
        if isinstance(decision, LinguaCall):
            return Pending(raw, res, paragraphs, decision)
        return _accept(raw, ctx, res, paragraphs, decision)
    return _finish(raw, ctx, res, paragraphs, score)


def _accept(raw: RawRecord, ctx: Context, res: Result, paragraphs: list[Paragraph], lang: LangResult) -> Result:
    score = _judge(lang, res)
    if isinstance(score, Outcome):
        return _end(res, score)
    return _finish(raw, ctx, res, paragraphs, score)


def _leading_text(paragraphs: list[Paragraph], chars: int) -> str:
    """The paragraphs' plain text, one per line, as far as the language buffer reads it."""
    parts, size = [], 0
    for p in paragraphs:
        if size > chars:  # the joined text is already longer than the buffer reads
            break
        t = p.plain
        parts.append(t)
        size += len(t) + 1
    return "\n".join(parts)


def _process_text(raw: RawRecord, ctx: Context) -> Result:
    t = clock()
    body, size = raw.read_raw()
    ctx.stages.seconds["read"] += clock() - t
    if size != len(body):
        return _oversize(raw, size)
    if not raw.complete():
        return Result(Outcome.RECORD_BROKEN)
    res = Result(Outcome.KEPT, payload_bytes=size)
    # WET text is UTF-8 by Common Crawl's definition: say so as the "header" would.
    page = _decode(body, "text/plain; charset=utf-8", ctx, res)
    if isinstance(page, Outcome):
        return _end(res, page)
    text = page.text
    score = _detect(text, ctx, res)
    if isinstance(score, Outcome):
        return _end(res, score)
    # A WET record is lines of text without markup: each line is a paragraph with no path.
    paragraphs = [Paragraph("", " ".join(line.split())) for line in text.splitlines()]
    paragraphs = [p for p in paragraphs if p.text]
    return _finish(raw, ctx, res, paragraphs, score)


def _too_much(paragraphs: list[Paragraph], text: str, cfg: ExtractConfig) -> Outcome | None:
    """empty / too_complex for a page's paragraphs and joined text, or None when it may be kept."""
    if not paragraphs:
        return Outcome.EMPTY
    if len(paragraphs) > cfg.max_paragraphs or len(text) > cfg.max_text_chars:
        return Outcome.TOO_COMPLEX
    return None


def _finish(raw: RawRecord, ctx: Context, res: Result, paragraphs: list[Paragraph], score: float) -> Result:
    text = join_paragraphs(paragraphs) if paragraphs else ""
    stop = _too_much(paragraphs, text, ctx.config)
    if stop is not None:
        return _end(res, stop)
    labels = None
    if ctx.config.boilerplate != "none":
        t = clock()
        labels = classify_paragraphs(ctx.config.boilerplate, paragraphs, res.lang)
        ctx.stages.add("boilerplate", t)
    hdrs = raw.http_headers or {}
    res.document = {
        "text": text,
        "docId": doc_id(raw.record_id, ctx.warc_name, raw.offset),
        "url": raw.url,
        "charset": res.charset,
        "lang": res.lang,
        "date": document_date(raw.warc_date, hdrs.get("date"), hdrs.get("last-modified")),
        "dump": ctx.dump,
        "warc_file": ctx.warc_name,
        "warc_offset": raw.offset,
        "charset_source": res.charset_source,
        "lang_score": score,
        "boilerplate": ctx.config.boilerplate,
        "paragraph_labels": labels,
    }
    return res
