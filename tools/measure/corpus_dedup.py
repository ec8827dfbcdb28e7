"""Document deduplication of an in-memory table, through the same steps as the lake's
corpus stage (signatures, LSH pairs, verification, pairs confirmed on distinctive
paragraphs, components, survivor rule).

``near_duplicate_clusters`` is the stable entry point evaluations call
(``python -m tools.measure.dedup``).
"""
from __future__ import annotations

import os
import tempfile

import pyarrow as pa
import pyarrow.compute as pc

from warclake.tasks.corpus.settings import DecisionConfig, SignatureConfig
from warclake.tasks.corpus.signals.archive_step import signatures_of
from warclake.tasks.corpus.steps.decide import document_decisions
from warclake.tasks.corpus.steps.para_pairs import para_pairs_step
from warclake.tasks.corpus.steps.pairs import pairs_partition
from warclake.tasks.corpus.storage.engine import connect, query_table
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table

RESULT = pa.schema([("docId", pa.string()), ("cluster_id", pa.string()), ("survivor", pa.bool_())])


def near_duplicate_clusters(docs: pa.Table, similarity: float | None = None,
                            sig: SignatureConfig | None = None,
                            decide: DecisionConfig | None = None) -> pa.Table:
    """(docId, cluster_id, survivor) for every row of ``docs`` (columns docId, text,
    paragraph_labels, lang, url, date, dump; others are ignored).

    ``cluster_id`` is the smallest docId of the document's cluster (its own for a unique
    document). ``survivor`` is True for the one document of each cluster that is kept
    (fewest quality rules fired, then the longest clean text, then the earliest date, then
    the hash of the URL), and for every unique document. Dumps are taken in name order: a
    document of a later dump that duplicates one of an earlier dump is never the survivor,
    and its cluster_id is the earlier cluster's."""
    sig = sig or SignatureConfig(partitions=1)
    decide = decide or DecisionConfig()
    if similarity is not None:
        decide = decide.with_values(similarity=similarity)
    if docs.num_rows == 0:
        return RESULT.empty_table()
    if "dump" not in docs.column_names:
        docs = docs.append_column("dump", pa.array(["dump"] * docs.num_rows))
    dumps = sorted(set(docs.column("dump").to_pylist()))
    out = []
    with tempfile.TemporaryDirectory(prefix="warclake-dedup-") as tmp:
        os.makedirs(os.path.join(tmp, "files"))
        layout = CorpusLayout(tmp)
        files, paras = {}, {}
        for d in dumps:
            part = docs.filter(pc.equal(docs.column("dump"), d))
            para, docsig = signatures_of(part, sig)
            files[d] = layout.file("docsigs", d, "in-memory")
            paras[d] = layout.file("paragraphs", d, "in-memory")
            write_table(files[d], docsig)
            write_table(paras[d], para)
        with connect(layout, threads=None) as con:
            for i, d in enumerate(dumps):
                prev = [files[e] for e in dumps[:i]]
                for p in range(sig.partitions):
                    pairs_partition(con, layout, [files[d]], prev, d, p, sig.partitions, sig.num_perm,
                                    {"part": p})
                pair_files = {e: [layout.file("pairs", e, layout.part_name(p)) for p in range(sig.partitions)]
                              for e in dumps[:i + 1]}
                para_pairs_step(con, layout, d, [paras[d]], [paras[e] for e in dumps[:i]], pair_files[d],
                                [f for e in dumps[:i] for f in pair_files[e]], {"dump": d})
                cur = query_table(con, f"""SELECT docId, dump, lang, date, url_hash, n_chars, clean_hash, metrics
                                           FROM read_parquet('{files[d]}')""")
                pairs = query_table(con, "SELECT a, b, jaccard, exact FROM read_parquet(?)", [pair_files[d]])
                para = query_table(con, "SELECT a, b, para_jaccard FROM read_parquet(?)",
                                   [layout.file("para_pairs", d, "para_pairs")])
                dec = document_decisions(con, cur, pairs, decide, "in-memory", decide.fingerprint(), para)
                out.append(dec.select(["docId", "cluster_id", "survivor", "cluster_size"]))
    res = pa.concat_tables(out)
    single = pc.equal(res.column("cluster_size"), 1)
    cluster = pc.if_else(single, res.column("docId"), res.column("cluster_id"))
    survivor = pc.or_(single, res.column("survivor"))
    return pa.table({"docId": res.column("docId"), "cluster_id": cluster, "survivor": survivor}, schema=RESULT)
