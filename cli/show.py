"""``warclake show ID``: a document's or record's ledger row and the WARC record behind it.

ID is a docId (the document's UUID) or ``WARC-FILE:OFFSET`` (a ledger row's ``warc_file``
and ``warc_offset``). The record is read again from its archive at that offset, from the
input the file's summary names: a local file, or an ``http(s)`` URL by a Range request.
"""
from __future__ import annotations

import re
import sys
from typing import Any

from warclake.tasks.archive.inputs import open_at
from warclake.tasks.archive.reader import ArchiveReader
from warclake.tasks.lake.layout import Lake

_FILE_OFFSET = re.compile(r"^(?P<file>.+):(?P<offset>\d+)$")


def add_parser(sub) -> None:
    p = sub.add_parser("show", help="a document's ledger row and the WARC record behind it",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("id", metavar="ID", help="a docId, or WARC-FILE:OFFSET")
    p.add_argument("--lake", required=True, help="lake root folder (or URL)")
    p.add_argument("--dump", default=None, help="the dump, when the archive is in several")
    p.add_argument("--input", default=None,
                   help="read the record from this file or URL instead of the input its summary names")
    p.add_argument("--bytes", type=int, default=2000, help="bytes of the payload shown (default: 2000)")
    p.set_defaults(handler=run_show)


def find_row(con, ident: str, dump: str | None) -> dict:
    """The ledger row an ID names (with the document's docId and text length when it has one)."""
    m = _FILE_OFFSET.match(ident)
    if m:
        where, params = "l.warc_file = ? AND l.warc_offset = ?", [m["file"], int(m["offset"])]
    else:
        where, params = "d.docId = ?", [ident]
    if dump is not None:
        where += " AND l.dump = ?"
        params.append(dump)
    rows = con.execute(f"""
        SELECT l.*, d.docId AS docId, d.lang_score AS lang_score, length(d.text) AS text_chars
        FROM ledger l LEFT JOIN documents d USING (dump, warc_file, warc_offset)
        WHERE {where} ORDER BY l.dump""", params)
    names = [c[0] for c in rows.description]
    found = [dict(zip(names, r)) for r in rows.fetchall()]
    if not found:
        what = "record" if m else "document with docId"
        raise FileNotFoundError(f"no {what} {ident!r} in the lake" + (f" (dump {dump})" if dump else ""))
    if len({r["dump"] for r in found}) > 1:
        raise ValueError(f"{ident!r} is in several dumps ({', '.join(r['dump'] for r in found)}): give --dump")
    return found[0]


def read_record(source: str, offset: int, payload_bytes: int) -> dict:
    """The WARC record at ``offset`` of ``source``: its headers, HTTP head and payload head."""
    with open_at(source, offset) as raw:
        reader = ArchiveReader(raw)
        rec = next(iter(reader), None)
        if rec is None:
            raise ValueError(f"no WARC record at {source}:{offset}"
                             + (f" ({reader.broken.error})" if reader.broken else ""))
        w = rec._record
        out: dict[str, Any] = {"warc_headers": [(k, v) for k, v in w.rec_headers.headers],
               "http_status_line": (f"{w.http_headers.protocol} {w.http_headers.statusline}".strip()
                                    if w.http_headers is not None else None),
               "http_headers": [(k, v) for k, v in w.http_headers.headers] if w.http_headers is not None else [],
               "quirks": rec.quirks}
        try:
            body, size = rec.read_payload() if w.http_headers is not None else rec.read_raw()
            out["payload"], out["payload_bytes"] = body[:payload_bytes], size
        except Exception as exc:  # the payload's own failure is what the user came to see
            out["payload"], out["payload_error"] = b"", f"{type(exc).__name__}: {exc}"
        return out


def run_show(args) -> int:
    # DuckDB: loaded by the commands that use it
    import duckdb

    from warclake.tasks.lake.catalog import install_views

    lake = Lake(args.lake).require()
    con = duckdb.connect()
    install_views(con, args.lake, args.dump)
    row = find_row(con, args.id, args.dump)
    summary = lake.read_summary(row["dump"], row["warc_file"]) or {}
    source = args.input or summary.get("input")
    w = sys.stdout.write
    w(f"ledger row ({row['dump']}/{row['warc_file']}):\n")
    for k, v in row.items():
        if v is not None or k in ("outcome", "quirks"):
            w(f"  {k}: {v}\n")
    if not source:
        w("\n(the archive's summary names no input: give --input to read the record)\n")
        return 0
    rec = read_record(source, row["warc_offset"], args.bytes)
    w(f"\nWARC record at {source} offset {row['warc_offset']}:\n")
    for k, v in rec["warc_headers"]:
        w(f"  {k}: {v}\n")
    if rec["http_status_line"] is not None:
        w(f"\nHTTP head:\n  {rec['http_status_line']}\n")
        for k, v in rec["http_headers"]:
            w(f"  {k}: {v}\n")
    if rec["quirks"]:
        w(f"\nquirks: {', '.join(rec['quirks'])}\n")
    if "payload_error" in rec:
        w(f"\npayload: cannot be read ({rec['payload_error']})\n")
        return 0
    charset = row.get("charset") or "utf-8"
    try:
        text = rec["payload"].decode(charset, errors="replace")
    except LookupError:
        text = rec["payload"].decode("utf-8", errors="replace")
    w(f"\npayload ({rec['payload_bytes']} bytes, the first {len(rec['payload'])} as {charset}):\n{text}\n")
    return 0
