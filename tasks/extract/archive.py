"""One input archive -> its documents parquet, ledger parquet and summary JSON in the lake.

This is the unit of work the flows map over. It streams: documents and ledger rows are
written in row groups as they come, so memory does not grow with the archive. Outputs
are published in the order documents, ledger, summary; the summary's presence is what
marks the input as done.
"""
from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.archive.inputs import input_identity, open_input
from warclake.tasks.archive.reader import ArchiveReader, TransientInputError
from warclake.tasks.extract.config import EXTRACTOR_VERSION, SCHEMA_VERSION, ExtractConfig
from warclake.tasks.extract.outcomes import ALL_OUTCOMES, Outcome
from warclake.tasks.extract.record import Context, Pending, Result, begin_record, finish_pending
from warclake.tasks.extract.timings import clock
from warclake.tasks.lake import schema
from warclake.tasks.lake.layout import Lake, archive_name, remove_quietly
from warclake.tasks.runtime import fault_injection

if TYPE_CHECKING:   # the supervisor imports this module: its workers run extract_archive
    from warclake.tasks.runtime.supervisor import RecordWatch

log = logging.getLogger(__name__)

DOC_BATCH = 2000      # rows per documents row group at most...
DOC_BATCH_CHARS = 16 << 20  # ...and at most this much text buffered (memory stays flat)
LEDGER_BATCH = 20000  # rows per ledger row group
PROGRESS_STEP = 256 << 10  # input bytes between two progress calls
PAGE_BATCH = 64       # pages whose lingua calls (and documents) are made together
HELD_RECORDS = 1024   # records held behind them at most (memory stays flat)
_FAULT = fault_injection.from_env()  # None outside the tests
# the returned summary's note (never stored) when the corpus step run inside extraction gave up
SIGNATURES_LEFT = "corpus_signatures_left"

class _NameTheArchive(logging.Filter):
    """The reader's messages ("archive damaged at 88285 ...") start with the archive's name:
    several archives are read at once, and a message must say which one it is about."""

    current = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        name = getattr(self.current, "name", None)
        if name and not str(record.msg).startswith(name):
            record.msg = f"{name}: {record.msg}"
        return True


for _logger in ("warclake.tasks.archive.reader", "warclake.tasks.archive.remote_stream"):
    logging.getLogger(_logger).addFilter(_NameTheArchive())


class _RowWriter:
    """Buffers rows of one schema column-wise and writes them as row groups of a zstd parquet
    file; ``on_table``, if given, is handed each row group once written. Columns named in
    ``no_dictionary``/``no_statistics`` are written without a dictionary/statistics."""

    def __init__(self, path: str, sch: pa.Schema, batch: int, max_chars: int = 0,
                 on_table: Callable[[pa.Table], None] | None = None,
                 no_dictionary=frozenset(), no_statistics=frozenset()):
        self.path, self.schema, self.batch, self.max_chars = path, sch, batch, max_chars
        self.on_table = on_table
        self.names = sch.names
        self.cols: dict[str, list] = {n: [] for n in self.names}
        self.pending = 0
        self.chars = 0
        self.count = 0
        self._w = pq.ParquetWriter(path, sch, compression="zstd", compression_level=3,
                                   **schema.writer_options(sch, no_dictionary, no_statistics))

    def add(self, row: dict) -> None:
        for n in self.names:
            self.cols[n].append(row.get(n))
        self.pending += 1
        if self.max_chars:
            self.chars += len(row.get("text") or "")
        if self.pending >= self.batch or (self.max_chars and self.chars >= self.max_chars):
            self.flush()

    def flush(self) -> None:
        if self.pending:
            table = pa.Table.from_pydict(self.cols, schema=self.schema)
            self._w.write_table(table)
            if self.on_table is not None:
                self.on_table(table)
            self.count += self.pending
            self.cols = {n: [] for n in self.names}
            self.pending = self.chars = 0

    def close(self) -> None:
        self.flush()
        self._w.close()


def _write_held(held: list, ctx: Context, write: Callable, mark: Callable[[int], None] | None = None) -> None:
    """Finish the held pending pages together and write every held record in order."""
    done = iter(finish_pending([out for _, out in held if isinstance(out, Pending)], ctx, mark))
    for rec, out in held:
        write(rec, next(done) if isinstance(out, Pending) else out)


def extract_archive(input_path: str, dump: str, lake: str | Lake, config: ExtractConfig | None = None,
                    progress: Callable[[int], None] | None = None, watch: RecordWatch | None = None,
                    skip: dict[int, str] | None = None) -> dict:
    """Extract one archive into the lake; returns the summary that was written.

    Raises :class:`TransientInputError` (or OSError) when the input cannot be opened or
    read -- worth retrying. Corrupt or truncated archives do not raise: every record outside
    the damage is kept and the summary says ``salvaged``, with the first damage as
    ``error``/``error_offset`` and every damaged byte range in ``skipped``.
    ``progress``, if given, is called with the input bytes read so far, about every 256 KiB.
    ``watch``, if given, is told which record is being worked on (tasks/runtime/supervisor.py
    guards the worker with it); records at the offsets of ``skip`` are not worked on: they get the
    outcome given there (a record that killed or stalled a worker before).
    """
    config = config or ExtractConfig()
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    name = archive_name(input_path)
    started = time.time()
    identity = input_identity(input_path, config.net_timeout)  # FileNotFoundError for a missing input: clear, not retried

    _NameTheArchive.current.name = name
    lake.remove_summary(dump, name)  # redoing: not done until the new summary lands
    ctx = Context(dump=dump, warc_name=name, config=config)
    doc_tmp = lake.tmp_file("documents", dump, name)
    led_tmp = lake.tmp_file("ledger", dump, name)
    docs = ledger = signer = None
    outcomes: Counter[str] = Counter()
    quirks: Counter[str] = Counter()   # other writers' quirks that cost nothing (see warc_reader)
    try:
        # opened inside the try: a full disk here must not leave temporaries behind either
        if config.corpus_signatures:   # the corpus stage's per-archive step, on each row group written
            from warclake.tasks.corpus.signals.archive_step import FusedSigner
            signer = FusedSigner(lake, dump, name)
        docs = _RowWriter(doc_tmp, schema.DOCUMENTS, DOC_BATCH, DOC_BATCH_CHARS,
                          signer.add if signer is not None else None,
                          schema.DOCUMENTS_NO_DICTIONARY, schema.DOCUMENTS_NO_STATISTICS)
        ledger = _RowWriter(led_tmp, schema.LEDGER, LEDGER_BATCH)
        with open_input(input_path, config.net_timeout, config.net_resumes, identity.get("size")) as raw:
            reader = ArchiveReader(raw, max_payload=config.max_payload)
            next_report = PROGRESS_STEP
            if _FAULT is not None:
                _FAULT.at("start", name)

            def write(rec, res) -> None:
                t = clock()
                outcomes[res.outcome.value] += 1
                ledger.add({
                    "dump": dump, "warc_file": name, "warc_offset": rec.offset,
                    "record_type": rec.rec_type, "url": rec.url, "outcome": res.outcome.value,
                    "charset": res.charset, "charset_source": res.charset_source,
                    "lang": res.lang, "bytes_in": rec.length, "payload_bytes": res.payload_bytes,
                    "quirks": ",".join(rec.all_quirks()) or None,
                })
                quirks.update(rec.quirks)
                if res.document is not None:
                    docs.add(res.document)
                ctx.stages.add("write", t)

            # Pages waiting for lingua are finished PAGE_BATCH at a time; records behind
            # them wait too, so rows keep the archive's order.
            held: list = []
            waiting = 0
            mark = None
            if watch is not None:
                def mark(offset: int) -> None:
                    watch.record(offset, reader.bytes_read)
            stages = ctx.stages
            records = iter(reader)
            while True:
                t = clock()
                rec = next(records, None)
                if rec is None:
                    break
                stages.add("read", t)
                if progress is not None and reader.bytes_read >= next_report:
                    progress(reader.bytes_read)
                    next_report = reader.bytes_read + PROGRESS_STEP
                if skip and rec.offset in skip:
                    out: Result | Pending = Result(Outcome(skip[rec.offset]))
                else:
                    if _FAULT is not None:
                        _FAULT.before(rec)
                    if mark is not None:
                        mark(rec.offset)
                    if _FAULT is not None:
                        _FAULT(rec)
                    out = begin_record(rec, ctx)
                    if watch is not None:
                        watch.idle(reader.bytes_read)
                if not held and not isinstance(out, Pending):
                    write(rec, out)
                    continue
                held.append((rec, out))
                waiting += isinstance(out, Pending)
                if waiting >= PAGE_BATCH or len(held) >= HELD_RECORDS:
                    _write_held(held, ctx, write, mark)
                    held, waiting = [], 0
                    if watch is not None:   # the pages are done: what comes next is reading
                        watch.idle(reader.bytes_read)
            _write_held(held, ctx, write, mark)
            if watch is not None:
                watch.idle(reader.bytes_read)
        t = clock()
        docs.close()
        ledger.close()
        ctx.stages.seconds["write"] += clock() - t
        if signer is not None:   # timed as a stage of its own, not as writing
            ctx.stages.seconds["write"] -= signer.seconds
            ctx.stages.extra("signatures", docs.count, signer.seconds)
    except BaseException:
        if signer is not None:
            signer.discard()
        for w, p in ((docs, doc_tmp), (ledger, led_tmp)):
            try:
                if w is not None:
                    w._w.close()
            except Exception:  # closing a writer on a full disk fails too: the file goes anyway
                pass
            finally:
                remove_quietly(p)
        raise

    status, error = archive_status(reader)
    stopped = sorted((off, why) for off, why in (skip or {}).items() if outcomes.get(why))
    if stopped and status == "complete":  # read to its end, but a record is lost: never complete
        status, error = "salvaged", f"record at {stopped[0][0]}: {stopped[0][1]}"
    broken = reader.broken
    t = clock()
    documents_bytes = lake.publish_file(doc_tmp, "documents", dump, name)
    if _FAULT is not None:
        _FAULT.at("write", name)
    ledger_bytes = lake.publish_file(led_tmp, "ledger", dump, name)
    ctx.stages.seconds["write"] += clock() - t
    summary = build_summary(
        dump, name, input_path, config, started, time.time(), status=status, error=error,
        input_bytes=identity.get("size") or reader.bytes_read, input_identity=identity,
        bytes_read=reader.bytes_read, documents_bytes=documents_bytes, ledger_bytes=ledger_bytes,
        records=reader.records, documents=docs.count, outcomes=outcomes,
        error_offset=broken.offset if broken else (stopped[0][0] if stopped else None),
        # damaged byte ranges (records lost or broken there); reading resumed after each
        skipped=[{"offset": s.offset, "length": s.length, "reason": s.reason} for s in reader.skipped]
        + [{"offset": off, "length": None, "reason": why} for off, why in stopped],
        stages=ctx.stages.as_dict(), quirks=quirks)
    lake.write_summary(dump, name, summary)
    if signer is not None:   # last: its state file names the documents file and summary now in place
        signer.publish(summary, documents_bytes)
        if signer.gave_up:
            # told to the caller, not stored: a worker process shows no warning, and the
            # summary is in place already (the corpus stage signs the archive as any other)
            summary = {**summary, SIGNATURES_LEFT: f"corpus signatures not written during extraction "
                                                   f"({signer.gave_up}); the corpus stage makes them"}
    log.info("%s: %s, %d records, %d documents, %.1fs", name, status, reader.records, docs.count,
             summary["seconds"])
    return summary


def build_summary(dump: str, name: str, input_path: str, config: ExtractConfig, started: float,
                  finished: float, *, status: str, error: str | None, input_bytes: int | None = None,
                  input_identity: dict | None = None, bytes_read: int = 0, documents_bytes: int = 0,
                  ledger_bytes: int = 0, records: int = 0, documents: int = 0,
                  outcomes: Counter | None = None, error_offset: int | None = None,
                  skipped: list | None = None, stages: dict | None = None,
                  quirks: Counter | None = None) -> dict:
    """An archive's summary JSON (the files table's row): the one place its keys are made."""
    outcomes = outcomes or Counter()
    return {
        "dump": dump,
        "warc_file": name,
        "input": input_path,
        "input_bytes": input_bytes,
        "input_identity": input_identity,
        "bytes_read": bytes_read,
        "documents_bytes": documents_bytes,
        "ledger_bytes": ledger_bytes,
        "output_bytes": documents_bytes,
        "records": records,
        "documents": documents,
        "outcomes": {k: outcomes.get(k, 0) for k in ALL_OUTCOMES},
        "status": status,
        "error": error[:1000] if error else error,
        "error_offset": error_offset,
        "skipped": skipped or [],
        # other writers' quirks read past, records per quirk (ledger column quirks)
        "quirks": dict(sorted((quirks or {}).items())),
        "extractor_version": EXTRACTOR_VERSION,
        "schema_version": SCHEMA_VERSION,
        "config_fingerprint": config.fingerprint(),
        "config": config.as_dict(),
        "host": socket.gethostname(),
        "started": datetime.fromtimestamp(started, timezone.utc).isoformat(),
        "finished": datetime.fromtimestamp(finished, timezone.utc).isoformat(),
        "seconds": round(finished - started, 3),
        # records and seconds per stage of the extractor (tasks/extract/timings.py)
        "stages": stages or {},
    }


def archive_status(reader: ArchiveReader) -> tuple[str, str | None]:
    """(status, error) of an archive once read: ``complete`` only when the whole input was
    read to its end without damage; ``failed`` when nothing in it is an archive (garbage,
    HTML, wrong format) or it is empty (a broken download), so it is never taken for done;
    ``salvaged`` otherwise, with the first damage as the error."""
    error = reader.broken.error if reader.broken else None
    if reader.records == 0:
        return "failed", error or ("empty input (0 bytes)" if reader.bytes_read == 0
                                   else "no archive record in the input")
    return ("complete", None) if reader.clean else ("salvaged", error)


def record_failure(input_path: str, dump: str, lake: str | Lake, config: ExtractConfig, error: str) -> dict:
    """Write the summary of an archive that could not be extracted (it vanished, storage kept
    failing after the retries...): status ``failed`` with the error, so reports count it and
    the next run tries it again (a failed summary is never done)."""
    lake = lake if isinstance(lake, Lake) else Lake(lake)
    now = time.time()
    summary = build_summary(dump, archive_name(input_path), input_path, config, now, now,
                            status="failed", error=error)
    lake.write_summary(dump, summary["warc_file"], summary)
    return summary


__all__ = ["extract_archive", "archive_status", "record_failure", "TransientInputError"]
