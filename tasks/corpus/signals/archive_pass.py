"""The per-archive step's signatures and metric counts in one compiled pass over a table of
lake documents, read from its Arrow buffers (``warclake.tasks.native.corpus_step``).

Its values are those of the references: ``signatures.sign_documents_reference`` and
``quality.document_metrics_reference``. The compiled module is used only when it gives them
on the check documents at import (``native.load_checked``); ``WARCLAKE_NATIVE=0`` turns it
off. A document whose metrics the pass leaves to the whole-text counts (link markers out
of place, paragraphs without a path) is counted by ``quality.document_metrics``.

The metrics are those of the text the corpus keeps (``quality.kept_metrics``), or of the
whole page when ``kept_only`` is false.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from warclake.tasks.corpus.signals.normalise import nfkc_lower
from warclake.tasks.corpus.signals.quality import (
    _CHROME_CACHE,
    _CLASS,
    CHAR_UNIT_LANGS,
    CHECK_DOCS,
    _lower_table,
    _metrics_from_counts,
    check_doc_references,
    document_metrics,
    document_metrics_reference,
    is_chrome_path,
    kept_metrics,
    kept_text,
    metrics_equal,
)
from warclake.tasks.corpus.signals.signatures import (
    CHECK_TEXTS,
    COMPARED_MIN_CHARS,
    EMPTY_MINHASH,
    Signed,
    sign_documents_reference,
    signed_equal,
)


@dataclass
class Metrics:
    """The documents' metrics as a matrix: ``values[i, j]`` is metric ``keys[j]`` of
    document i, keys in sorted order (the map column's)."""
    keys: list[str]
    values: np.ndarray    # (documents, keys) float64, C order

    @classmethod
    def of(cls, rows: list[dict]) -> "Metrics":
        """From one dict per document (every one with the same keys)."""
        keys = sorted(rows[0]) if rows else []
        if any(r.keys() != rows[0].keys() for r in rows):
            raise ValueError("documents with different metrics")
        return cls(keys, np.array([[r[k] for k in keys] for r in rows], np.float64).reshape(len(rows), len(keys)))

    def rows(self) -> list[dict]:
        return [dict(zip(self.keys, r)) for r in self.values.tolist()]


@dataclass
class Pass:
    """What the pass gives for a table: the signatures (``signed.para_paths`` is an Arrow
    string array), the documents' metrics (no keys when not asked for), and per paragraph
    its document, its position in it (from 1) and its label (null past its document's list)."""
    signed: Signed
    metrics: Metrics
    para_doc: np.ndarray | None = None     # int32
    para_idx: np.ndarray | None = None     # int32
    para_labels: pa.Array | None = None


class PathMemory:
    """Memory for the paths' bytes of one table after another (about 10 MB a row group of
    the project's dump): fresh memory costs the kernel's clearing of every page, about as
    much as the copy. The arrays of a table passed with it must be dropped before the next
    table is (``ArchiveSigner`` writes each group's rows before it signs the next)."""

    def __init__(self):
        self.data = np.empty(0, np.uint8)

    def take(self, size: int) -> np.ndarray:
        if self.data.size < size:     # with room for a somewhat larger next table
            self.data = np.empty(size + size // 4 + 1, np.uint8)
        return self.data


def arrow_numbers(values: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    """A 1-d numpy array of numbers as an Arrow array (null where ``mask``). Not through
    ``pa.array``, whose numpy path imports ``numpy.ma`` (extraction does not otherwise:
    0.035-0.045 CPU s once per process where bytecode is not cached)."""
    values = np.ascontiguousarray(values)
    valid = None if mask is None else pa.py_buffer(np.packbits(~mask, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [valid, pa.py_buffer(values)],
                                 null_count=-1 if mask is not None else 0)


STATUS, REASON = "python", "not loaded"
_COMPILED = None


def compiled_module():
    """The checked compiled pass, or None; decided once per process."""
    global _COMPILED, STATUS, REASON
    if STATUS == "python" and REASON == "not loaded":
        from warclake.tasks.native import load_checked

        _COMPILED, STATUS, REASON = load_checked("corpus_step", "per-archive pass",
                                                 "signatures and metrics references", _check)
    return _COMPILED


def _check(native) -> None:
    """Configure the module and compare it with the references on the check documents."""
    from warclake.tasks.corpus.signals.normalise import simple_nfkc_lower_table

    native.configure(_CLASS.tobytes(), _lower_table())
    native.configure_nfkc(simple_nfkc_lower_table())
    docs = ([(t, lb, None) for t, lb in CHECK_TEXTS] + [(t, lb, "en") for t, lb in CHECK_TEXTS[:2]]
            + list(CHECK_DOCS))
    # the types a lake's documents have (given: inferring them imports dateutil)
    table = pa.table({"text": pa.array([d[0] for d in docs], pa.string()),
                      "paragraph_labels": pa.array([d[1] for d in docs], pa.list_(pa.string())),
                      "lang": pa.array([d[2] for d in docs], pa.string())})
    # the metrics' references do not depend on the n-grams: counted once (CHECK_DOCS' are
    # those the check of the compiled counts compares with)
    metrics = ([document_metrics_reference(t, lb, lg) for t, lb, lg in docs[:-len(CHECK_DOCS)]]
               + list(check_doc_references()))
    kept = [document_metrics_reference(kept_text(t, lb), None, lg) for t, lb, lg in docs]
    for ngrams, kept_only in (((3, 5, 120), False), ((1, 2, 7), False), ((3, 5, 120), True)):
        got = run(native, table, *ngrams, kept_only=kept_only)
        ref = reference(table, *ngrams, with_metrics=False)
        ref.metrics = Metrics.of(kept if kept_only else metrics)
        if not pass_equal(got, ref):
            raise ValueError("the pass differs from the references on a check document")


def pass_equal(a: Pass, b: Pass) -> bool:
    """Equal signatures, paths and metrics (NaN equal to NaN)."""
    pa_paths = a.signed.para_paths if isinstance(a.signed.para_paths, list) else a.signed.para_paths.to_pylist()
    pb_paths = b.signed.para_paths if isinstance(b.signed.para_paths, list) else b.signed.para_paths.to_pylist()
    sa = Signed(**{**a.signed.__dict__, "para_paths": pa_paths})
    sb = Signed(**{**b.signed.__dict__, "para_paths": pb_paths})
    ma, mb = a.metrics.rows(), b.metrics.rows()
    return signed_equal(sa, sb) and len(ma) == len(mb) and all(metrics_equal(x, y) for x, y in zip(ma, mb))


def reference(docs: pa.Table, para_ngram: int, doc_ngram: int, num_perm: int, with_metrics: bool = True,
              kept_only: bool = True) -> Pass:
    """The definitions the pass must equal, from the table's Python values."""
    texts = [t or "" for t in _column(docs, "text")]
    labels, langs = _column(docs, "paragraph_labels"), _column(docs, "lang")
    signed = sign_documents_reference(texts, labels, is_chrome_path, para_ngram, doc_ngram, num_perm)
    metrics = [(document_metrics_reference(kept_text(t, lb), None, lg) if kept_only
                else document_metrics_reference(t, lb, lg)) if with_metrics else {}
               for t, lb, lg in zip(texts, labels, langs)]
    return Pass(signed, Metrics.of(metrics))


def _column(docs: pa.Table, name: str) -> list:
    return docs.column(name).to_pylist() if name in docs.column_names else [None] * docs.num_rows


def compiled_columns(docs: pa.Table) -> bool:
    """Whether the compiled passes read these columns: ``text`` a string column and
    ``paragraph_labels`` (if any) a list of strings or all null."""
    if "text" not in docs.column_names or docs.column("text").type not in (pa.string(), pa.large_string()):
        return False
    if "paragraph_labels" in docs.column_names:
        kind = docs.column("paragraph_labels").type
        return pa.types.is_null(kind) or ((pa.types.is_list(kind) or pa.types.is_large_list(kind))
                                          and pa.types.is_string(kind.value_type))
    return True


def sign_table(docs: pa.Table, para_ngram: int, doc_ngram: int, num_perm: int,
               with_metrics: bool = True, paths: PathMemory | None = None, kept_only: bool = True) -> Pass | None:
    """The pass over ``docs`` (columns ``text``, ``paragraph_labels``, ``lang``; absent ones
    count as null), or None when the compiled module is not in use or the columns are not
    a string column and a list of strings (the caller then takes the Python way). The
    paths' bytes go to ``paths`` when given, else to fresh memory."""
    native = compiled_module()
    if native is None or not compiled_columns(docs):
        return None
    return run(native, docs, para_ngram, doc_ngram, num_perm, with_metrics, paths, kept_only)


def run(native, docs: pa.Table, para_ngram: int, doc_ngram: int, num_perm: int, with_metrics: bool = True,
        paths: PathMemory | None = None, kept_only: bool = True) -> Pass:
    n = docs.num_rows
    lab_off, lab_valid, lab_code, label_values = _labels(docs)
    langs = _column(docs, "lang")
    lang_flags = np.fromiter(((lg in CHAR_UNIT_LANGS) | ((lg == "en") << 1) for lg in langs), np.uint8, n)
    chunks = [c for c in docs.column("text").chunks if len(c)]
    parts = [_buffers(c) for c in chunks]
    n_para = sum(native.count_paragraphs(*p) for p in parts)
    path_bytes = sum(int(p[0][-1] - p[0][0]) for p in parts)
    out = Signed(np.zeros(n_para, np.int64), np.zeros(n_para, np.uint64), np.zeros(n_para, np.int32),
                 [], np.zeros(n, np.int32), np.zeros(n, np.int64), np.zeros(n, np.int32),
                 np.full((n, num_perm), EMPTY_MINHASH, np.uint32))
    path_off = np.zeros(n_para + 1, np.int64)   # out.para_paths: set from these once the pass has run
    path_data = (paths or PathMemory()).take(max(path_bytes, 1))
    names = native.count_names()
    count_rows = np.empty((n, len(names)), np.int64)
    counted = np.zeros(n, np.uint8)
    pi = pos = lo = 0
    for chunk, (offsets, data, valid) in zip(chunks, parts):
        hi = lo + len(chunk)
        pi, pos = native.sign_and_count(
            offsets, data, valid, lab_off[lo:hi + 1], lab_valid[lo:hi], lab_code, lang_flags[lo:hi],
            is_chrome_path, _CHROME_CACHE, nfkc_lower, para_ngram, doc_ngram, num_perm, COMPARED_MIN_CHARS, kept_only,
            out.para_hash, out.para_simhash, out.para_chars, path_off, path_data, pi, pos,
            out.clean_hash[lo:], out.clean_chars[lo:], out.minhash[lo:], out.doc_paragraphs[lo:],
            count_rows[lo:], counted[lo:])
        lo = hi
    if pi != n_para:
        raise ValueError(f"the pass cut {pi} paragraphs, the separators say {n_para}")
    if pos < 1 << 31:
        out.para_paths = pa.StringArray.from_buffers(n_para, pa.py_buffer(path_off.astype(np.int32)),
                                                     pa.py_buffer(path_data[:pos]))
    else:
        out.para_paths = pa.LargeStringArray.from_buffers(n_para, pa.py_buffer(path_off), pa.py_buffer(path_data[:pos]))
    metrics = (_metrics(docs, names, count_rows, counted != 0, lab_valid, langs, kept_only) if with_metrics
               else Metrics([], np.zeros((n, 0))))
    para_doc, para_idx = paragraph_positions(out.doc_paragraphs)
    return Pass(out, metrics, para_doc, para_idx,
                _paragraph_labels(para_doc, para_idx, lab_off, lab_valid, label_values))


def _metrics(docs: pa.Table, names: tuple, count_rows: np.ndarray, counted: np.ndarray, has_labels: np.ndarray,
             langs: list, kept_only: bool = True) -> Metrics:
    """The documents' metrics from the pass's counts (``count_rows``, a row per document in
    the order of ``names``), a column of documents at a time; a document the pass left to
    the whole-text counts (not ``counted``) by ``quality.document_metrics``."""
    n = len(counted)
    left = np.flatnonzero(~counted).tolist()
    own = {}
    if left:
        texts, labels = docs.column("text"), _column(docs, "paragraph_labels")
        measure = kept_metrics if kept_only else document_metrics
        own = {i: measure(texts[i].as_py() or "", labels[i], langs[i]) for i in left}
        if len(left) == n:
            return Metrics.of([own[i] for i in range(n)])
    rows = count_rows[counted].astype(np.float64).T if left else count_rows.astype(np.float64).T
    columns = {k: rows[j] for j, k in enumerate(names) if k not in ("top", "dup")}
    for k in ("top", "dup"):
        columns[k] = rows[[j for j, name in enumerate(names) if name == k]]
    labelled = np.zeros(int(counted.sum()), bool) if kept_only else has_labels[counted] != 0
    per_key = _metrics_from_counts(columns, labelled, np.array(langs, object)[counted])
    keys = sorted(per_key)
    values = np.empty((n, len(keys)), np.float64)
    values[counted] = np.column_stack([per_key[k] for k in keys])
    for i, m in own.items():
        if m.keys() != per_key.keys():
            raise ValueError("the whole-text counts gave other metrics than the pass")
        values[i] = [m[k] for k in keys]
    return Metrics(keys, values)


def paragraph_positions(per_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(document, position in it from 1) of each paragraph, int32, given each document's
    number of paragraphs."""
    counts = per_doc.astype(np.int64)
    doc = np.repeat(np.arange(counts.size, dtype=np.int32), counts)
    idx = np.arange(1, doc.size + 1, dtype=np.int32) - np.repeat((np.cumsum(counts) - counts).astype(np.int32), counts)
    return doc, idx


def _paragraph_labels(doc: np.ndarray, idx: np.ndarray, lab_off: np.ndarray, lab_valid: np.ndarray,
                      values: pa.Array) -> pa.Array:
    """Paragraph j of a document gets label j of its list, null past the list's end."""
    if not len(values):
        return pa.nulls(doc.size, pa.string())
    start = lab_off[:-1]
    have = (lab_valid[doc] != 0) & (idx <= (lab_off[1:] - start)[doc])
    where = start[doc] + (idx - 1)
    if have.all():
        return take(values, arrow_numbers(where))
    return take(values, arrow_numbers(np.where(have, where, 0), ~have))


def take(values: pa.Array, indices: pa.Array) -> pa.Array:
    """``values.take(indices)``, called through the compute core (``pyarrow._compute``, where
    ``pyarrow.compute.call_function`` lives) and not the ``pyarrow.compute`` module, whose
    import costs about 0.03 CPU s once per process (its wrappers are made at import) that
    extraction does not otherwise pay."""
    from pyarrow._compute import call_function

    return call_function("take", [values, indices])


def valid_flags(arr: pa.Array) -> np.ndarray:
    """1 where ``arr`` is not null, 0 where it is (uint8), from its validity bitmap."""
    if arr.null_count == 0:
        return np.ones(len(arr), np.uint8)
    bitmap = arr.buffers()[0]
    if bitmap is None:    # the null type: every value null
        return np.zeros(len(arr), np.uint8)
    bits = np.unpackbits(np.frombuffer(bitmap, np.uint8), count=arr.offset + len(arr), bitorder="little")
    return bits[arr.offset:]


def _buffers(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets as int64, data bytes, 1 where not null) of one chunk of a string column."""
    bufs = chunk.buffers()
    width = np.int64 if chunk.type == pa.large_string() else np.int32
    offsets = np.frombuffer(bufs[1], width, len(chunk) + 1, chunk.offset * np.dtype(width).itemsize).astype(np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(1, np.uint8)
    return offsets, data, valid_flags(chunk)


def _labels(docs: pa.Table):
    """Per document where its labels start in the label codes (n + 1), whether it has a
    label list, the codes (1 good, 2 bad, 0 other or null), and the label values."""
    n = docs.num_rows
    if "paragraph_labels" not in docs.column_names:
        return np.zeros(n + 1, np.int64), np.zeros(n, np.uint8), np.zeros(1, np.int8), pa.array([], pa.string())
    col = docs.column("paragraph_labels")
    if pa.types.is_null(col.type):
        return np.zeros(n + 1, np.int64), np.zeros(n, np.uint8), np.zeros(1, np.int8), pa.array([], pa.string())
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = arr.offsets.to_numpy().astype(np.int64)
    values = arr.values
    codes = _label_codes(values)
    return offsets, valid_flags(arr), codes if codes.size else np.zeros(1, np.int8), values


def _label_codes(values: pa.Array) -> np.ndarray:
    """Per label value 1 for "good", 2 for "bad", 0 for any other or null (int8)."""
    off, data, valid = _buffers(values)
    size = off[1:] - off[:-1]
    codes = np.zeros(len(values), np.int8)
    for code, word in ((1, b"good"), (2, b"bad")):
        at = np.flatnonzero((size == len(word)) & (valid != 0))
        if at.size:
            same = (data[off[at][:, None] + np.arange(len(word))] == np.frombuffer(word, np.uint8)).all(axis=1)
            codes[at[same]] = code
    return codes
