"""Writes a small lake by the data contract (sql/README.md) with pyarrow, from
seeded random numbers, and returns every row it wrote, so that tests can count what the
reports should say without going through SQL.
"""
from __future__ import annotations

import io
import json
import os
import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

DOCUMENTS_SCHEMA = pa.schema([
    ("text", pa.string()), ("docId", pa.string()), ("url", pa.string()),
    ("charset", pa.string()), ("lang", pa.string()),
    ("date", pa.timestamp("us", tz="UTC")), ("dump", pa.string()),
    ("warc_file", pa.string()), ("warc_offset", pa.int64()),
    ("charset_source", pa.string()), ("lang_score", pa.float32()),
    ("boilerplate", pa.string()), ("paragraph_labels", pa.list_(pa.string())),
])
LEDGER_SCHEMA = pa.schema([
    ("dump", pa.string()), ("warc_file", pa.string()), ("warc_offset", pa.int64()),
    ("record_type", pa.string()), ("url", pa.string()), ("outcome", pa.string()),
    ("charset", pa.string()), ("charset_source", pa.string()), ("lang", pa.string()),
    ("bytes_in", pa.int64()),
    ("payload_bytes", pa.int64()),
    ("quirks", pa.string()),
])

# Raw labels as they may appear in older or foreign files; most are already normalised.
CHARSETS = ["utf-8"] * 12 + ["windows-31j"] * 3 + ["euc-jp"] * 2 + [
    "gbk", "windows-1251", "Shift_JIS", "x-sjis", "CP932", "UTF8", "GB2312", "EUC-JP"]
CHARSET_SOURCES = ["meta"] * 5 + ["header"] * 3 + ["detector"] * 2 + ["bom", "fallback"]
KEPT_LANGS = ["ja"] * 8 + ["en", "zh"]
NO_PAYLOAD = {"not_response", "metadata", "http_status", "warc_truncated", "http_parse_error", "record_broken"}
REJECTED_LANGS = ["en", "en", "zh", "ko", "ru", None]
RESPONSE_OUTCOMES = (["kept"] * 10 + ["http_status"] * 2 + ["not_text"] * 2
                     + ["lang_rejected"] * 4 + ["charset_failed", "empty", "oversize",
                                                "warc_truncated", "http_parse_error",
                                                "html_parse_error"])
PATHS = ["body>div.content#main>p", "body>div#nav>ul", "body>article>h1",
         "body>div.something.left>div#blog", "body>footer>p.small"]
DATE_FROM = datetime(2019, 1, 1, tzinfo=timezone.utc)
DATE_SPAN_S = int((datetime(2024, 6, 30, tzinfo=timezone.utc) - DATE_FROM).total_seconds())


@dataclass
class GenFile:
    dump: str
    warc_file: str
    status: str | None              # None: extraction still running, no files/*.json
    ledger: list[dict] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    summary: dict | None = None

    @property
    def done(self) -> bool:
        return self.summary is not None


@dataclass
class GenLake:
    root: Path
    files: list[GenFile]

    @property
    def done_files(self) -> list[GenFile]:
        return [f for f in self.files if f.done]

    def done_documents(self) -> list[dict]:
        return [d for f in self.done_files for d in f.documents]

    def done_ledger(self) -> list[dict]:
        return [r for f in self.done_files for r in f.ledger]


def _paragraphs(rng: random.Random, n: int) -> tuple[str, list[str]]:
    parts = []
    for i in range(n):
        body = f"段落{i} の本文 {rng.randint(0, 999)}"
        if rng.random() < 0.4:
            body += f" \x02リンク{i}\x03 続き"
        parts.append(rng.choice(PATHS) + "\x1c" + body)
    return "\n\n".join(parts), [rng.choice(["good", "good", "bad"]) for _ in parts]


def _gen_file(rng: random.Random, dump: str, idx: int, status: str | None,
              records: int) -> GenFile:
    name = f"{dump}-{idx:05d}.warc.gz"
    g = GenFile(dump, name, status)
    cleaned = idx % 2 == 0
    offset = 0

    def add(record_type: str, outcome: str, **kw) -> dict:
        nonlocal offset
        row = {"dump": dump, "warc_file": name, "warc_offset": offset,
               "record_type": record_type, "url": kw.get("url"), "outcome": outcome,
               "charset": kw.get("charset"), "charset_source": kw.get("charset_source"),
               "lang": kw.get("lang"), "bytes_in": rng.randint(300, 60_000)}
        # a record without an HTTP payload read in full has none
        row["payload_bytes"] = None if outcome in NO_PAYLOAD else row["bytes_in"] - 300
        g.ledger.append(row)
        offset += row["bytes_in"] // 3 + 200   # gzip members are smaller than payloads
        return row

    add("warcinfo", "not_response")
    n = 0
    while len(g.ledger) < records - (1 if status == "salvaged" else 0):
        n += 1
        url = f"http://example{n % 17}.jp/{dump}/{idx}/{n}"
        add("request", "not_response", url=url)
        outcome = rng.choice(RESPONSE_OUTCOMES)
        kw: dict = {"url": url}
        if outcome in ("kept", "lang_rejected", "charset_failed"):
            kw["charset"] = None if outcome == "charset_failed" else rng.choice(CHARSETS)
            kw["charset_source"] = None if outcome == "charset_failed" else rng.choice(CHARSET_SOURCES)
        if outcome == "kept":
            kw["lang"] = rng.choice(KEPT_LANGS)
        elif outcome == "lang_rejected":
            kw["lang"] = rng.choice(REJECTED_LANGS)
        row = add("response", outcome, **kw)
        if outcome == "kept":
            text, labels = _paragraphs(rng, rng.randint(1, 5))
            date = None
            if rng.random() > 0.1:
                date = DATE_FROM + timedelta(seconds=rng.randrange(DATE_SPAN_S))
            g.documents.append({
                "text": text, "docId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "url": url, "charset": row["charset"], "lang": row["lang"], "date": date,
                "dump": dump, "warc_file": name, "warc_offset": row["warc_offset"],
                "charset_source": row["charset_source"], "lang_score": rng.uniform(0.5, 1.0),
                "boilerplate": "justext" if cleaned else "none",
                "paragraph_labels": labels if cleaned else None,
            })
        if len(g.ledger) < records - (1 if status == "salvaged" else 0):
            add("metadata", "not_response", url=url)
    if status == "salvaged":
        add("response", "record_broken")
    return g


def _write(root: Path, g: GenFile, rng: random.Random) -> None:
    docs_path = root / "documents" / f"dump={g.dump}" / f"{g.warc_file}.parquet"
    ledger_path = root / "ledger" / f"dump={g.dump}" / f"{g.warc_file}.parquet"
    docs_bytes = ledger_bytes = 0
    if g.status != "failed":
        for path, rows, schema in ((docs_path, g.documents, DOCUMENTS_SCHEMA),
                                   (ledger_path, g.ledger, LEDGER_SCHEMA)):
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd")
        docs_bytes, ledger_bytes = docs_path.stat().st_size, ledger_path.stat().st_size
    if g.status is None:
        return
    outcomes: dict[str, int] = {}
    for r in g.ledger:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    payload = sum(r["bytes_in"] for r in g.ledger)
    started = datetime(2024, 7, 1, tzinfo=timezone.utc) + timedelta(minutes=rng.randint(0, 600))
    seconds = round(rng.uniform(1, 30), 3)
    broken = [r for r in g.ledger if r["outcome"] == "record_broken"]
    # records and seconds per stage as the extractor writes them; 5 % of the time is outside them
    looked = sum(1 for r in g.ledger if r["charset"] is not None)
    stages = {stage: {"count": count, "seconds": round(seconds * share, 4)}
              for stage, count, share in (("read", len(g.ledger), 0.2), ("charset", looked, 0.1),
                                          ("language", looked, 0.15), ("parse", len(g.documents), 0.3),
                                          ("boilerplate", len(g.documents), 0.1), ("write", len(g.ledger), 0.1))}
    g.summary = {
        "dump": g.dump, "warc_file": g.warc_file,
        "input": f"/data/{g.dump}/{g.warc_file}",
        "input_bytes": payload // 3 + rng.randint(1000, 5000),
        "input_identity": {"size": payload // 3, "mtime": 1719800000.5},
        "documents_bytes": docs_bytes, "ledger_bytes": ledger_bytes,
        "output_bytes": docs_bytes,
        "records": len(g.ledger), "documents": len(g.documents), "outcomes": outcomes,
        "status": g.status,
        "error": {"complete": None, "salvaged": "gzip stream ended early",
                  "failed": "not a WARC file"}[g.status],
        "error_offset": broken[0]["warc_offset"] if broken else None,
        "extractor_version": "1", "config_fingerprint": "0123456789abcdef",
        "config": {"langs": ["ja"], "boilerplate": "justext"},
        "started": started.isoformat(),
        "finished": (started + timedelta(seconds=seconds)).isoformat(),
        "seconds": seconds,
        "stages": stages if g.status != "failed" else {},
    }
    path = root / "files" / f"dump={g.dump}" / f"{g.warc_file}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(g.summary, ensure_ascii=False))


def make_lake(root: str | Path, dumps: dict[str, int] | None = None, records: int = 60,
              seed: int = 7, salvaged: int = 1, failed: int = 1, running: int = 1) -> GenLake:
    """Write a lake under ``root``: per dump, ``dumps[dump]`` finished inputs of about
    ``records`` WARC records each. In the first dump, ``salvaged`` of them broke before
    the end, ``failed`` produced nothing, and ``running`` more inputs have documents and
    ledger files but no files/*.json yet (an extraction in progress)."""
    root = Path(root)
    dumps = dumps or {"CC-MAIN-2023-50": 4, "CC-MAIN-2024-10": 3}
    rng = random.Random(seed)
    lake = GenLake(root, [])
    for d_i, (dump, n) in enumerate(dumps.items()):
        statuses = ["complete"] * n
        if d_i == 0:
            for k in range(min(salvaged, n)):
                statuses[k] = "salvaged"
            for k in range(min(failed, n - salvaged)):
                statuses[salvaged + k] = "failed"
            statuses += [None] * running
        for idx, status in enumerate(statuses):
            g = _gen_file(rng, dump, idx, status, 0 if status == "failed" else records)
            if status == "failed":
                g.ledger, g.documents = [], []
            _write(root, g, rng)
            lake.files.append(g)
    return lake


def read_lake(lake, dump, name):
    docs = pq.read_table(os.path.join(lake, "documents", f"dump={dump}", name + ".parquet")).to_pylist()
    ledger = pq.read_table(os.path.join(lake, "ledger", f"dump={dump}", name + ".parquet")).to_pylist()
    with open(os.path.join(lake, "files", f"dump={dump}", name + ".json")) as fh:
        summary = json.load(fh)
    return docs, ledger, summary


def write_warc(path, records):
    """records: (url, status, content_type, body bytes, extra WARC headers)."""
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for url, status, ctype, body, extra in records:
            hdrs = [("Content-Type", ctype)] if ctype else []
            hdrs += [("Last-Modified", "Tue, 02 Jan 2018 03:04:05 GMT")]
            http = StatusAndHeaders(f"{status} X", hdrs, protocol="HTTP/1.1")
            wh = {"WARC-Date": "2024-05-20T10:00:00Z", **extra}
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                                warc_headers_dict=wh))
            w.write_record(w.create_warc_record(url, "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n")))
