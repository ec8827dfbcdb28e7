"""What each corpus quality rule would drop, by language, and the metrics' CPU time per document:
over documents files of a lake, over the gold main texts of the development pages, or over
gold pages of one split through warclake's extraction and a boilerplate mode (the lake
documents a crawl of those pages gives; ``--write`` keeps them as a documents file, so
another checkout's rules can be measured on the same documents; ``--causes`` tells the
pages each rule drops for the gold's own lines from those it drops for lines the gold
lacks, and lists each dropped page with its rules' values; ``--gold-floor`` the pages each
rule drops on their kept text beside those it drops on their gold main text itself)."""
from __future__ import annotations

from collections import Counter

from warclake.tasks.corpus.signals.quality import (
    QUALITY_RULES,
    document_metrics,
    evaluate_rules,
    kept_metrics,
    kept_text,
)
from warclake.tasks.corpus.steps.decide import repeated_in_document
from warclake.tasks.extract.paragraph import LINK_END, LINK_START, PARA_SEP, PATH_SEP

# gold sets with independent main-content truth: reader and folder under the gold root
GOLD_SETS = (("cleaneval", "cleaneval"), ("dragnet", "dragnet"), ("wceb", "wceb_modern_1000"))


def gold_lines(gold: str) -> list[str]:
    """The non-blank lines of a gold main text (one block per line)."""
    return [ln for ln in gold.split("\n") if ln.strip()]


def as_lake_text(lines: list[str]) -> str:
    """Lines as a lake text of one paragraph each (the gold main text as rules judge it)."""
    return PARA_SEP.join("body>p" + PATH_SEP + ln for ln in lines)


def gold_page_documents(gold_root: str, split: str, mode: str, min_gold_words: int, clean: bool) -> list[dict]:
    """Lake documents (text, paragraph_labels, lang, id) of the gold pages of ``split``
    whose gold main text has at least ``min_gold_words`` words: each page through the
    paragraph walk and the boilerplate mode ``mode``, as extraction writes it. A page
    the parser refuses or that gives no paragraph is left out. ``clean``: only pages
    whose gold main text (a paragraph per line) no rule drops at the defaults: text a
    person judged to be the page's content and the rules' sources accept, so a rule that
    drops the page's lake document drops it for what extraction made of it."""
    import os

    from warclake.tasks.evaluation.gold import decode_page, read_gold
    from warclake.tasks.extract.boilerplate import classify
    from warclake.tasks.extract.boilerplate.text import guess_language
    from warclake.tasks.extract.html_paragraphs import extract_paragraphs
    from warclake.tasks.extract.paragraph import join_paragraphs

    docs = []
    for fmt, folder in GOLD_SETS:
        path = os.path.join(gold_root, folder)
        if not os.path.isdir(path):
            continue
        for page in read_gold(f"{fmt}:{path}", split):
            if len(page.gold.split()) < min_gold_words:
                continue
            try:
                paras = extract_paragraphs(decode_page(page))
            except Exception:   # a page the parser refuses is simply not used
                continue
            if not paras:
                continue
            lang = guess_language([p.plain for p in paras]) or None
            gold = as_lake_text(gold_lines(page.gold))
            if clean and evaluate_rules(kept_metrics(gold, None, lang), lang):
                continue
            labels = classify(mode, paras, lang) if mode != "none" else None
            docs.append({"id": f"{fmt}/{page.id}", "text": join_paragraphs(paras), "paragraph_labels": labels,
                         "lang": lang, "gold": page.gold})
    return docs


def emitted_metrics(text: str, labels: list[str] | None, lang: str | None) -> dict[str, float]:
    """The metrics of the text the corpus emits of one page measured alone: its kept text
    less the later copies of a paragraph (``repeated_in_document``); no other page of its
    site makes its template repeated text here."""
    return kept_metrics(text, labels, lang, repeated_in_document(text, labels))


def fired_on_emitted(text: str, labels: list[str] | None, lang: str | None) -> set[str]:
    """The rules that drop one page measured on the text the corpus emits of it."""
    return {r.name for r, _, _ in evaluate_rules(emitted_metrics(text, labels, lang), lang)}


def _plain(line: str) -> str:
    return " ".join(line.replace(LINK_START, "").replace(LINK_END, "").split()).lower()


def kept_gold_lines(kept: str, gold: str) -> str:
    """The kept text (lake format) less the lines the gold lacks: a line stays when the gold
    holds its text (compared in lower case, links and extra spaces out), each text as often
    as the gold holds it."""
    g = _plain(gold)
    used: Counter = Counter()
    paras = []
    for chunk in kept.split(PARA_SEP) if kept else []:
        path, sep, body = chunk.partition(PATH_SEP)
        lines = []
        for ln in body.split("\n"):
            t = _plain(ln)
            used[t] += 1
            if t and used[t] <= g.count(t):
                lines.append(ln)
        if lines:
            paras.append(path + sep + "\n".join(lines))
    return PARA_SEP.join(paras)


def drop_causes(pages: list[dict], min_recall: float = 0.8,
                dropped: list[tuple[str, str, list]] | None = None) -> dict[str, Counter]:
    """Per rule (and "any rule"), the gold pages it drops on their kept text, by cause:
    "extra" when only the lines the gold lacks make it fire (text the boilerplate mode kept
    beside the main content, or repeated by markup); else "missing" when the kept lines the
    gold holds have under ``min_recall`` of the gold's characters (main text the boilerplate
    mode left out), and "gold" when they have more (the gold's own text as the lake lays it
    out in paragraphs, lines, paths and links). ``dropped``, when given, receives each
    dropped page as (id, its cause, [(rule, value, threshold), ...])."""
    out: dict[str, Counter] = {}
    for d in pages:
        rules = evaluate_rules(emitted_metrics(d["text"], d["paragraph_labels"], d["lang"]), d["lang"])
        fired = {r.name for r, _, _ in rules}
        if not fired:
            continue
        kept = kept_text(d["text"], d["paragraph_labels"], repeated_in_document(d["text"], d["paragraph_labels"]))
        on_gold = kept_gold_lines(kept, d["gold"])
        still = {r.name for r, _, _ in evaluate_rules(kept_metrics(on_gold, None, d["lang"]), d["lang"])}
        held = sum(len(_plain(ln)) for c in on_gold.split(PARA_SEP) for ln in c.partition(PATH_SEP)[2].split("\n")
                   ) if on_gold else 0
        short = held < min_recall * len(_plain(d["gold"]))
        own = "missing" if short else "gold"   # the cause when the gold's own lines fire it
        for name, on_its_lines in (("any rule", bool(still)), *((n, n in still) for n in fired)):
            out.setdefault(name, Counter())[own if on_its_lines else "extra"] += 1
        if dropped is not None:
            dropped.append((d["id"], own if still else "extra", [(r.name, v, t) for r, v, t in rules]))
    return out


def gold_floor(pages: list[dict]) -> tuple[Counter, Counter, Counter]:
    """Per rule (and "any rule"), the pages it drops on the text the corpus keeps of them,
    the pages it drops on their gold main text (a paragraph per line, emitted as the kept
    text is: each text once), and the pages it drops on both: the gold's share is the floor
    a perfect extraction would still have, the page's own nature (a listing has no
    sentences), not the rules' judging of extraction."""
    kept, gold, both = Counter(), Counter(), Counter()
    for d in pages:
        on_kept = fired_on_emitted(d["text"], d["paragraph_labels"], d["lang"])
        on_gold = fired_on_emitted(as_lake_text(gold_lines(d["gold"])), None, d["lang"])
        for names, out in ((on_kept, kept), (on_gold, gold), (on_kept & on_gold, both)):
            out.update(names)
        kept["any rule"] += bool(on_kept)
        gold["any rule"] += bool(on_gold)
        both["any rule"] += bool(on_kept) and bool(on_gold)
    return kept, gold, both


def _gold_main_documents(gold_root: str) -> list[tuple[str, None, str | None]]:
    """The gold main texts of the development pages as lake documents (one paragraph per
    line): text a person judged to be the page's content, so a rule dropping it is a
    false drop."""
    from tools.measure.neardup_set import gold_pages
    from warclake.tasks.extract.boilerplate.text import guess_language

    docs = []
    for page in gold_pages(gold_root):
        lines = gold_lines(page.gold)
        if lines:
            docs.append((as_lake_text(lines), None,
                         guess_language(lines) or None))
    return docs


def stage_drops(set_dir: str, gold_root: str, clean_ids: str | None) -> tuple[int, dict[str, int]]:
    """(documents, per quality rule the documents it drops) after the whole corpus stage over
    the held-back split of the near-duplicate set (``tools.measure.dedup``'s, under
    ``set_dir``: pages of multi-page sites with sieve labels, so repeated-text removal
    acts), among its real pages (not the edited copies) whose gold main text has 50 words or
    more and passes every rule. ``clean_ids``: a file of those pages' ids, read when it
    exists and written when not, so two checkouts count the same pages."""
    import json
    import os
    import tempfile

    from tools.measure.corpus_repeated import DUMP, as_lake
    from tools.measure.dedup import load_split
    from tools.measure.neardup_set import gold_pages
    from warclake.tasks.corpus.checks import check_inputs
    from warclake.tasks.corpus.stage import StageOptions, run_stage

    docs, truth = load_split(set_dir, "heldout")
    if clean_ids and os.path.exists(clean_ids):
        with open(clean_ids) as fh:
            real = set(json.load(fh))
    else:
        gold = {p.id: p.gold for p in gold_pages(gold_root)}

        def clean(src: str) -> bool:
            lines = gold_lines(gold.get(src, ""))
            if len(" ".join(lines).split()) < 50:
                return False
            text = as_lake_text(lines)
            return not evaluate_rules(document_metrics(text, None, "en"), "en")
        real = {d for d, k, src in zip(*(truth.column(c).to_pylist() for c in ("docId", "kind", "main_source")))
                if k in ("original", "same_site", "unrelated") and clean(src)}
        if clean_ids:
            with open(clean_ids, "w") as fh:
                json.dump(sorted(real), fh)
    names = {r.name for r in QUALITY_RULES}
    drops: dict[str, int] = {"any rule": 0}
    with tempfile.TemporaryDirectory(prefix="warclake-rules-") as tmp:
        as_lake(docs, tmp)
        run_stage(tmp, [DUMP], check_inputs(tmp, [DUMP]), StageOptions())
        import pyarrow.parquet as pq
        rows = pq.read_table(os.path.join(tmp, "corpus", "decisions", "documents", f"dump={DUMP}",
                                          "decisions.parquet"), columns=["docId", "rules"]).to_pylist()
    rows = [r for r in rows if r["docId"] in real]
    for r in rows:
        fired = {x["rule"] for x in r["rules"] if x["rule"] in names}
        drops["any rule"] += bool(fired)
        for name in fired:
            drops[name] = drops.get(name, 0) + 1
    return len(rows), drops


def main(argv: list[str] | None = None) -> None:
    """``python -m tools.measure.quality_rules [PARQUET...] [--gold-main DIR]``: per rule,
    the share of the documents it would drop, by language (the most frequent ones), and
    the CPU time of :func:`document_metrics` per document."""
    import argparse
    import time

    import pyarrow.parquet as pq

    ap = argparse.ArgumentParser(prog="python -m tools.measure.quality_rules",
                                 description=main.__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="documents parquet files of a lake")
    ap.add_argument("--gold-main", metavar="DIR", help="instead: the main texts of the gold pages under "
                    "DIR (cleaneval/, dragnet/, ...)")
    ap.add_argument("--gold-pages", metavar="DIR", help="instead: the gold pages under DIR through "
                    "extraction and --boilerplate")
    ap.add_argument("--split", default="heldout", help="split of --gold-pages (default %(default)s)")
    ap.add_argument("--boilerplate", default="sieve", help="boilerplate mode of --gold-pages (default "
                    "%(default)s)")
    ap.add_argument("--min-gold-words", type=int, default=50, help="--gold-pages: only pages whose gold "
                    "main text has this many words (default %(default)s)")
    ap.add_argument("--clean", action="store_true", help="--gold-pages: only pages whose gold main text "
                    "passes every rule at the defaults")
    ap.add_argument("--causes", action="store_true", help="--gold-pages: per rule, the pages it drops by "
                    "cause: lines the gold lacks, main text left out, the gold's own lines")
    ap.add_argument("--gold-floor", action="store_true", help="--gold-pages: per rule, the pages it drops on "
                    "their kept text beside those it drops on their gold main text (the floor; 0 with --clean)")
    ap.add_argument("--write", metavar="PARQUET", help="write the documents measured to this file")
    ap.add_argument("--whole-pages", action="store_true", help="measure whole pages, not the text the "
                    "corpus keeps (good paragraphs)")
    ap.add_argument("--with-page-repeats", action="store_true", help="measure the good paragraphs with the "
                    "later copies of a text in the page (repeated_in_document off)")
    ap.add_argument("--neardup-set", metavar="DIR", help="instead: drops after the whole stage over the "
                    "held-back near-duplicate set under DIR")
    ap.add_argument("--clean-ids", metavar="JSON", help="--neardup-set: the clean pages' ids (read, or "
                    "written)")
    ap.add_argument("--langs", type=int, default=6, help="columns for this many languages")
    a = ap.parse_args(argv)
    if a.neardup_set:
        from tools.measure.neardup_set import DEFAULT_GOLD
        n, drops = stage_drops(a.neardup_set, a.gold_pages or DEFAULT_GOLD, a.clean_ids)
        print(f"{n} clean real pages of the held-back near-duplicate set, after the corpus stage")
        print("| rule | dropped |\n|---|---:|")
        for rule in [r.name for r in QUALITY_RULES] + ["any rule"]:
            if rule in drops:
                print(f"| {rule} | {drops[rule] / n:.1%} |")
        return
    docs = _gold_main_documents(a.gold_main) if a.gold_main else []
    if a.gold_pages:
        pages = gold_page_documents(a.gold_pages, a.split, a.boilerplate, a.min_gold_words, a.clean)
        if a.write:
            import pyarrow as pa
            pq.write_table(pa.Table.from_pylist(pages, schema=pa.schema([
                ("id", pa.string()), ("text", pa.string()), ("paragraph_labels", pa.list_(pa.string())),
                ("lang", pa.string())])), a.write)
        docs += [(d["text"], d["paragraph_labels"], d["lang"]) for d in pages]
        if a.gold_floor:
            kept, gold, both = gold_floor(pages)
            n = len(pages)
            print(f"{n} pages; per rule, the pages it drops on the text the corpus keeps of them, on their gold main "
                  "text (the floor), and on both (gold_floor)")
            print("| rule | kept text | gold text | both |\n|---|---:|---:|---:|")
            for rule in [r.name for r in QUALITY_RULES] + ["any rule"]:
                if kept[rule] or gold[rule]:
                    print(f"| {rule} | {kept[rule] / n:.1%} | {gold[rule] / n:.1%} | {both[rule] / n:.1%} |")
            return
        if a.causes:
            dropped: list[tuple[str, str, list]] = []
            causes = drop_causes(pages, dropped=dropped)
            print(f"{len(pages)} pages; per rule, the pages it drops, by cause (drop_causes): lines the gold "
                  "lacks (extra), main text left out (missing), the gold's own lines (gold)")
            print("| rule | dropped | extra | missing | gold |\n|---|---:|---:|---:|---:|")
            for rule in [r.name for r in QUALITY_RULES] + ["any rule"]:
                if rule in causes:
                    c = causes[rule]
                    print(f"| {rule} | {sum(c.values()) / len(pages):.1%} | {c['extra']} | {c['missing']} "
                          f"| {c['gold']} |")
            print("\n| page | cause | rules (value / threshold) |\n|---|---|---|")
            for page_id, cause, fired in dropped:
                print(f"| {page_id} | {cause} | " + ", ".join(f"{n} {v:.3g} / {t:g}" for n, v, t in fired) + " |")
            return
    for f in a.files:
        t = pq.read_table(f, columns=["text", "paragraph_labels", "lang"])
        docs += zip(*(t.column(c).to_pylist() for c in ("text", "paragraph_labels", "lang")))
    if not docs:
        raise SystemExit("no documents in the files given")
    metrics, cpu = [], []
    for d in docs:
        t0 = time.process_time_ns()
        metrics.append(document_metrics(*d) if a.whole_pages else kept_metrics(*d) if a.with_page_repeats
                       else emitted_metrics(*d))
        cpu.append(time.process_time_ns() - t0)
    sizes = sorted(len(d[0]) for d in docs)
    per_doc = sorted(cpu)
    langs = Counter(d[2] or "-" for d in docs)
    cols = [lg for lg, _ in langs.most_common(a.langs)]
    fired = [{r.name for r, _, _ in evaluate_rules(m, d[2])} for m, d in zip(metrics, docs)]
    print(f"{len(docs)} documents, median {sizes[len(sizes) // 2]} characters; document_metrics CPU time "
          f"per document: median {per_doc[len(cpu) // 2] / 1e3:.0f} µs, 90th percentile "
          f"{per_doc[len(cpu) * 9 // 10] / 1e3:.0f} µs, mean {sum(cpu) / len(cpu) / 1e3:.0f} µs "
          f"({sum(cpu) / sum(sizes) * 1e3 / 1e3:.1f} µs per 1,000 characters)")
    print("| rule | all | " + " | ".join(f"{lg} ({langs[lg]})" for lg in cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for rule in QUALITY_RULES + (None,):
        name = rule.name if rule else "any rule"
        hit = [(bool(f) if rule is None else rule.name in f) for f in fired]
        row = [f"{sum(hit) / len(hit):.1%}"]
        for lg in cols:
            sel = [h for h, d in zip(hit, docs) if (d[2] or "-") == lg]
            row.append(f"{sum(sel) / len(sel):.1%}")
        print(f"| {name} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
