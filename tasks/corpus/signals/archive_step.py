"""The per-archive step: one documents file of the lake -> its paragraph rows and its
document rows (hashes, signatures, quality metrics), written under ``<lake>/corpus``.

Only archives whose extraction finished (summary present, not ``failed``) are read. The
step is done when both outputs and the state file exist for the same documents file and
the same signature settings; otherwise it is redone.

``ArchiveSigner`` is the step fed one row group of documents at a time: ``sign_archive``
feeds it the documents file's row groups, and extraction (``--corpus-signatures``) the row
groups it has just written, so both give the same files.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.corpus.settings import SignatureConfig
from warclake.tasks.corpus.signals.archive_pass import (
    Metrics,
    PathMemory,
    arrow_numbers,
    paragraph_positions,
    sign_table,
    take,
)
from warclake.tasks.corpus.signals.hosts import registered_domain, url_host
from warclake.tasks.corpus.signals.normalise import hash64
from warclake.tasks.corpus.signals.quality import document_metrics, is_chrome_path, kept_metrics
from warclake.tasks.corpus.signals.signatures import band_keys, sign_documents
from warclake.tasks.corpus.storage.layout import (
    ARCHIVE_STEP,
    ARCHIVE_TABLES,
    CorpusLayout,
    file_size,
    is_url,
    local_tmp,
    publish_tmp,
    read_schema,
)
from warclake.tasks.lake.layout import remove_quietly

log = logging.getLogger(__name__)

STEP = ARCHIVE_STEP
READ_COLUMNS = ["text", "docId", "url", "lang", "date", "dump", "warc_file", "paragraph_labels"]

PARAGRAPHS = pa.schema([
    ("docId", pa.string()), ("idx", pa.int32()), ("text_hash", pa.int64()),
    ("simhash", pa.int64()), ("n_chars", pa.int32()), ("path", pa.string()),
    ("label", pa.string()), ("host", pa.string()), ("domain", pa.string()),
    ("url_hash", pa.int64()), ("lang", pa.string()), ("dump", pa.string()),
    ("date", pa.timestamp("us", tz="UTC")),
])
DOCSIGS = pa.schema([
    ("docId", pa.string()), ("url", pa.string()), ("url_hash", pa.int64()),
    ("host", pa.string()), ("domain", pa.string()), ("lang", pa.string()),
    ("date", pa.timestamp("us", tz="UTC")), ("dump", pa.string()), ("warc_file", pa.string()),
    ("n_paragraphs", pa.int32()), ("n_chars", pa.int32()), ("clean_hash", pa.int64()),
    ("minhash", pa.list_(pa.uint32())), ("bands", pa.list_(pa.int64())),
    ("metrics", pa.map_(pa.string(), pa.float64())),
])


def archive_key(documents_path: str | None, summary: dict, sig: SignatureConfig, size: int | None = None) -> dict:
    """What the step's output depends on: the documents file (its size, and the summary
    the extraction wrote with it: a redone extraction writes a new one) and the signature
    settings. No modification time, so a copy of a lake judges the same as its original.
    ``size``: the documents file's size when a listing gave it already (the manifest)."""
    if size is None:
        if documents_path is None:
            raise ValueError("archive_key needs the documents file or its size")
        size = file_size(documents_path)
    return {"documents_bytes": size,
            "extraction": summary.get("config_fingerprint"), "finished": summary.get("finished"),
            "signatures": step_fingerprint(sig)}


def step_fingerprint(sig: SignatureConfig) -> str:
    """The fingerprint of the settings the step's outputs depend on: all but the global
    steps' partitions (the default's fingerprint, so ``--partitions`` never redoes the step,
    and with the default partitions it is ``sig.fingerprint()``)."""
    return replace(sig, partitions=SignatureConfig().partitions).fingerprint()


def signatures_of(docs: pa.Table, sig: SignatureConfig, with_metrics: bool = True,
                  paths: PathMemory | None = None) -> tuple[pa.Table, pa.Table]:
    """(paragraph rows, document rows) of a table of lake documents. A document is compared
    by its clean paragraphs less those under a page-chrome path (``compared_paragraphs``):
    the same page under another site template then keeps its similarity. ``paths``: memory
    for the paths (``archive_pass.PathMemory``) the caller reuses once the rows are dropped."""
    kept_only = not sig.judge_whole_pages
    fused = sign_table(docs, sig.para_ngram, sig.doc_ngram, sig.num_perm, with_metrics, paths, kept_only)
    n = docs.num_rows
    urls = _values(docs, "url")
    if fused is None:
        texts, labels = _values(docs, "text"), _values(docs, "paragraph_labels")
        signed = sign_documents(texts, labels, is_chrome_path, sig.para_ngram, sig.doc_ngram, sig.num_perm)
        para_doc, para_idx = paragraph_positions(signed.doc_paragraphs)
        p_label = pa.array(paragraph_labels(labels, signed.doc_paragraphs), pa.string())
        langs = _values(docs, "lang")
        measure = kept_metrics if kept_only else document_metrics
        metrics = Metrics.of([measure(t or "", labs, lg) if with_metrics else {}
                              for t, labs, lg in zip(texts, labels, langs)])
    else:
        if fused.para_doc is None or fused.para_idx is None:   # the compiled pass gives both
            raise ValueError("the compiled pass gave no paragraph positions")
        signed, metrics = fused.signed, fused.metrics
        para_doc, para_idx, p_label = fused.para_doc, fused.para_idx, fused.para_labels
    hosts = [url_host(u) for u in urls]
    hosts_arr = pa.array(hosts, pa.string())
    domains_arr = pa.array([registered_domain(h) for h in hosts], pa.string())
    url_hashes = np.fromiter((hash64(u or "") for u in urls), np.int64, n)
    # the documents' own columns stay Arrow arrays (no Python object per value)
    doc_id, lang, dump = _array(docs, "docId"), _array(docs, "lang"), _array(docs, "dump")
    dates = _array(docs, "date", pa.timestamp("us", tz="UTC"))
    counts = signed.doc_paragraphs
    doc_of = arrow_numbers(para_doc)
    para = pa.table({
        "docId": repeated(doc_id, counts, doc_of), "idx": arrow_numbers(para_idx),
        "text_hash": arrow_numbers(signed.para_hash), "simhash": arrow_numbers(signed.para_simhash.view(np.int64)),
        "n_chars": arrow_numbers(signed.para_chars), "path": signed.para_paths, "label": p_label,
        "host": repeated(hosts_arr, counts, doc_of), "domain": repeated(domains_arr, counts, doc_of),
        "url_hash": arrow_numbers(np.repeat(url_hashes, counts)), "lang": repeated(lang, counts, doc_of),
        "dump": repeated(dump, counts, doc_of), "date": repeated(dates, counts, doc_of),
    }, schema=PARAGRAPHS)
    docsig = pa.table({
        "docId": doc_id, "url": _array(docs, "url"), "url_hash": arrow_numbers(url_hashes),
        "host": hosts_arr, "domain": domains_arr, "lang": lang,
        "date": dates, "dump": dump,
        "warc_file": _array(docs, "warc_file"), "n_paragraphs": arrow_numbers(signed.doc_paragraphs),
        "n_chars": arrow_numbers(signed.clean_chars), "clean_hash": arrow_numbers(signed.clean_hash),
        "minhash": _lists(signed.minhash), "bands": _lists(band_keys(signed.minhash, sig.bands, sig.rows)),
        "metrics": metrics_column(metrics),
    }, schema=DOCSIGS)
    return para, docsig


def repeated(values: pa.Array, counts: np.ndarray, doc_of: pa.Array) -> pa.Array:
    """Each document's value on each of its paragraphs' rows (``counts`` rows, ``doc_of``
    their documents): values of one width (64-bit numbers and timestamps, a string column
    whose values all have one length, as document ids) repeated by numpy, three to four
    times quicker than the compute core's take, which does the others."""
    n, m = len(values), len(doc_of)
    bufs = values.buffers()
    if not n or values.null_count:
        return take(values, doc_of)
    if pa.types.is_string(values.type) and bufs[2] is not None:
        offsets = np.frombuffer(bufs[1], np.int32, n + 1, values.offset * 4)
        size = int(offsets[1] - offsets[0])
        if (offsets[1:] - offsets[:-1] == size).all():
            data = np.frombuffer(bufs[2], np.uint8, n * size, int(offsets[0])).reshape(n, size)
            return pa.StringArray.from_buffers(m, pa.py_buffer(np.arange(m + 1, dtype=np.int32) * size),
                                               pa.py_buffer(np.repeat(data, counts, axis=0)))
    elif pa.types.is_primitive(values.type) and values.type.bit_width == 64:
        data = np.frombuffer(bufs[1], np.int64, n, values.offset * 8)
        return pa.Array.from_buffers(values.type, m, [None, pa.py_buffer(np.repeat(data, counts))], null_count=0)
    return take(values, doc_of)


def _lists(rows: np.ndarray) -> pa.Array:
    """A 2-d numpy array as an Arrow list column, one list per row."""
    n, k = rows.shape
    return pa.ListArray.from_arrays(arrow_numbers(np.arange(n + 1, dtype=np.int32) * k),
                                    arrow_numbers(rows.ravel()))


def paragraph_labels(labels: list, per_doc) -> list:
    """Each paragraph's label, the reference's definition: label j of its document's list,
    None past the list's end or for a document without labels."""
    out: list[str | None] = []
    for labs, k in zip(labels, per_doc.tolist()):
        out += [None] * k if labs is None else labs[:k] + [None] * (k - len(labs))
    return out


def _values(docs: pa.Table, name: str) -> list:
    """A column's Python values (None throughout when the table lacks it)."""
    return docs.column(name).to_pylist() if name in docs.column_names else [None] * docs.num_rows


_STRING = pa.string()


def _array(docs: pa.Table, name: str, type_: pa.DataType = _STRING) -> pa.Array:
    """A column as one Arrow array of ``type_`` (nulls when the table lacks it)."""
    if name not in docs.column_names:
        return pa.nulls(docs.num_rows, type_)
    col = docs.column(name)
    arr = col.chunk(0) if col.num_chunks == 1 else (col.combine_chunks() if col.num_chunks else pa.array([], col.type))
    return arr if arr.type == type_ else arr.cast(type_)


def row_groups(path: str, columns: list[str]):
    """The documents file's row groups one after the other (a group's memory is reused for
    the next: the text of a whole archive is never held at once)."""
    fs, p = (fsspec.core.url_to_fs(path) if is_url(path) else (None, path))
    with (fs.open(p, "rb") if fs is not None else open(p, "rb")) as fh:
        pf = pq.ParquetFile(fh)
        for i in range(pf.num_row_groups):
            yield pf.read_row_group(i, columns=columns)


def metrics_column(metrics: Metrics) -> pa.Array:
    """The documents' metrics as a map column, keys in sorted order: the same keys for
    every document, their bytes repeated by numpy, the values the matrix's rows."""
    n, k = metrics.values.shape
    names = [key.encode() for key in metrics.keys]
    starts = np.cumsum([0] + [len(b) for b in names])
    width = int(starts[-1])
    key_off = np.empty(n * k + 1, np.int32)
    key_off[:-1] = (np.arange(n, dtype=np.int32)[:, None] * width + starts[:-1].astype(np.int32)).ravel()
    key_off[-1] = n * width
    key_data = np.tile(np.frombuffer(b"".join(names), np.uint8), n)
    keys = pa.StringArray.from_buffers(n * k, pa.py_buffer(key_off), pa.py_buffer(key_data))
    return pa.MapArray.from_arrays(arrow_numbers(np.arange(n + 1, dtype=np.int32) * k), keys,
                                   arrow_numbers(metrics.values.ravel()))


# How the outputs are written: zstd, row groups of at most WRITE_ROWS rows. Hashes and
# signatures are random numbers: a dictionary or min/max statistics of theirs cost time and
# save nothing (a dictionary only makes them larger), nor do min/max of long CSS paths help
# a reader skip a row group. Without them the writing costs about a sixth less and the
# files are about 7 % smaller (on the project's dump).
WRITE_ROWS = 1 << 17
NO_DICTIONARY = frozenset({"text_hash", "simhash", "clean_hash", "minhash", "bands"})
NO_STATISTICS = NO_DICTIONARY | {"path"}


def output_writer(path: str, schema: pa.Schema) -> pq.ParquetWriter:
    leaves = [(f.name, leaf) for f in schema for leaf in leaf_paths(f)]
    return pq.ParquetWriter(path, schema, compression="zstd",
                            use_dictionary=[p for n, p in leaves if n not in NO_DICTIONARY],
                            write_statistics=[p for n, p in leaves if n not in NO_STATISTICS])


def leaf_paths(f: pa.Field) -> list[str]:
    """The parquet columns of a field (the writer's options name a list's or map's leaves)."""
    if pa.types.is_map(f.type):
        return [f"{f.name}.key_value.key", f"{f.name}.key_value.value"]
    if pa.types.is_list(f.type):
        return [f"{f.name}.list.element"]
    return [f.name]


class ArchiveSigner:
    """The step's outputs of one archive, made one row group of documents at a time: each
    group's paragraph rows and document rows go to local temporaries as they come (memory
    stays flat); ``publish`` moves both into place and writes the state file last, so a
    crash never leaves outputs that look done. Equal row groups give byte-identical files."""

    def __init__(self, lake, dump: str, warc_name: str, sig: SignatureConfig | None = None):
        self.layout = lake if isinstance(lake, CorpusLayout) else CorpusLayout(lake)
        self.dump, self.warc_name, self.sig = dump, warc_name, sig or SignatureConfig()
        self.paths = [self.layout.file(t, dump, warc_name) for t in ARCHIVE_TABLES]
        self.tmps: list[str] = []
        self.writers: list[pq.ParquetWriter] = []
        try:
            for path, schema in zip(self.paths, (PARAGRAPHS, DOCSIGS)):
                self.tmps.append(local_tmp(path))
                self.writers.append(output_writer(self.tmps[-1], schema))
        except BaseException:
            self.discard()
            raise
        self.documents = self.paragraphs = 0
        # each group's rows are written and dropped before the next; the memory goes back
        # to _PATH_MEMORY when the signer closes (one archive after another reuses it)
        self.path_memory: PathMemory | None
        try:
            self.path_memory = _PATH_MEMORY.pop()
        except IndexError:
            self.path_memory = PathMemory()

    def add(self, docs: pa.Table) -> None:
        """Sign one row group of lake documents and write its rows."""
        para, docsig = signatures_of(docs, self.sig, True, self.path_memory)
        for w, rows in zip(self.writers, (para, docsig)):
            w.write_table(rows, row_group_size=WRITE_ROWS)
        self.documents += docsig.num_rows
        self.paragraphs += para.num_rows

    def publish(self, key: dict) -> dict:
        """Both outputs in place, then the state file with ``key`` (what they were made from)."""
        self._close()
        self.layout.clear_state(STEP, self.dump, self.warc_name)
        for tmp, path in zip(self.tmps, self.paths):
            publish_tmp(tmp, path)
        self.tmps = []
        self.layout.mark_done(STEP, self.dump, self.warc_name, key,
                              documents=self.documents, paragraphs=self.paragraphs)
        return {"archive": self.warc_name, "done": "signed", "key": key, "documents": self.documents,
                "paragraphs": self.paragraphs}

    def discard(self) -> None:
        """Close and remove the temporaries (the outputs in place, if any, are left as they were)."""
        try:
            self._close()
        except Exception:   # closing on a full disk fails too: the files go anyway
            pass
        finally:
            for tmp in self.tmps:
                remove_quietly(tmp)
            self.tmps = []

    def _close(self) -> None:
        writers, self.writers = self.writers, []
        memory: PathMemory | None = getattr(self, "path_memory", None)
        self.path_memory = None
        if memory is not None:
            _PATH_MEMORY.append(memory)
        for w in writers:
            w.close()


# The paths' memory of closed signers, for the next ones (one per signer open at once).
_PATH_MEMORY: list[PathMemory] = []


class FusedSigner:
    """The step run inside an archive's extraction, on the row groups extraction writes
    (``extract_archive`` with ``corpus_signatures``). Its failure is never the archive's:
    a row group it could not sign, or outputs it could not publish, leave the archive to
    the corpus stage, which signs it as any other."""

    def __init__(self, lake, dump: str, warc_name: str, sig: SignatureConfig | None = None):
        self.warc_name = warc_name
        self.seconds = 0.0   # in signing and writing row groups (wall clock, as extraction's stages)
        self.gave_up: str | None = None   # why, once it gave up (extraction tells its caller)
        self.signer: ArchiveSigner | None = None
        try:
            self.signer = ArchiveSigner(lake, dump, warc_name, sig)
        except Exception as exc:
            self._give_up("its outputs could not be opened", exc)

    def add(self, docs: pa.Table) -> None:
        if self.signer is not None:
            t0 = time.perf_counter()
            try:
                self.signer.add(docs.select([c for c in READ_COLUMNS if c in docs.column_names]))
            except Exception as exc:
                self._give_up("a row group could not be signed", exc)
            self.seconds += time.perf_counter() - t0

    def publish(self, summary: dict, documents_bytes: int) -> dict | None:
        """Publish the outputs once the archive's documents file and summary are in place;
        an archive whose extraction ``failed`` is not signed (the stage does not sign it)."""
        if self.signer is None:
            return None
        if summary.get("status") == "failed":
            self.discard()
            return None
        try:
            return self.signer.publish(archive_key(None, summary, self.signer.sig, size=documents_bytes))
        except Exception as exc:
            self._give_up("its outputs could not be written", exc)
            return None

    def discard(self) -> None:
        if self.signer is not None:
            self.signer.discard()
            self.signer = None

    def _give_up(self, why: str, exc: Exception) -> None:
        self.gave_up = f"{why}: {type(exc).__name__}: {' '.join(str(exc).split())}"
        log.warning("%s: corpus signatures not written during extraction (%s: %s: %s); "
                    "the corpus stage makes them", self.warc_name, why, type(exc).__name__, exc)
        self.discard()


def sign_archive(lake: str, dump: str, warc_name: str, summary: dict,
                 sig: SignatureConfig | None = None, models=None) -> dict:
    """Run the per-archive step for one archive unless it is done; returns what it did.
    With the user's models (``models.ScoreModels``), the row groups read are scored too
    (the model-score step's outputs and state, ``score_step.scorer_for``): the documents
    are read once for both."""
    from warclake.tasks.corpus.signals.score_step import scorer_for

    sig = sig or SignatureConfig()
    layout = CorpusLayout(lake)
    src = layout.documents(dump, warc_name)
    key = archive_key(src, summary, sig)
    if layout.is_done(STEP, dump, warc_name, key):
        return {"archive": warc_name, "done": "skipped", "key": key}
    t0 = time.monotonic()
    have = set(read_schema(src).names)
    signer = ArchiveSigner(layout, dump, warc_name, sig)
    scorer = None
    try:
        scorer = scorer_for(layout, dump, warc_name, key, models)
        for docs in row_groups(src, [c for c in READ_COLUMNS if c in have]):
            signer.add(docs)
            if scorer is not None:
                scorer.add(docs)
        res = signer.publish(key)
        if scorer is not None:
            res["scored"] = scorer.publish(key)["documents"]
    except BaseException:
        signer.discard()
        if scorer is not None:
            scorer.discard()
        raise
    return {**res, "seconds": round(time.monotonic() - t0, 3)}
