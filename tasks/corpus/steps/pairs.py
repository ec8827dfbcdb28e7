"""Candidate pairs of near-duplicate documents for one dump, one partition at a time.

LSH banding: documents sharing any band key (``bands`` hashes of ``rows`` MinHash values)
land in one bucket. Within a bucket, in docId order, each document is paired with the
bucket's first and with the one before it: linear in the bucket's size, and enough for
connected components, since a bucket's members are joined through the first. Documents
with the same clean-text hash are paired the same way (exact duplicates). Every pair has a
document of the current dump; the other may be of an earlier dump. Each pair is verified
here: its estimated Jaccard (share of equal MinHash values) is stored, so the threshold is
applied by the decision step and changing it redoes nothing here.
"""
from __future__ import annotations

from warclake.tasks.corpus.storage.engine import parquet_list, part_expr, query_table
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table

STEP = "pairs"


def pairs_partition(con, layout: CorpusLayout, cur_files: list[str], prev_files: list[str],
                    dump: str, part: int, parts: int, num_perm: int, key: dict) -> bool:
    return layout.once(STEP, dump, layout.part_name(part), key,
                       _verified_pairs, con, layout, cur_files, prev_files, dump, part, parts, num_perm)


def _verified_pairs(con, layout: CorpusLayout, cur_files: list[str], prev_files: list[str], dump: str,
                    part: int, parts: int, num_perm: int) -> dict:
    cur = parquet_list(cur_files)
    prev = parquet_list(prev_files) if prev_files else None
    def sigs(cols: str) -> str:
        q = f"SELECT {cols}, true AS is_cur FROM {cur} WHERE n_chars > 0"
        if prev:
            q += f" UNION ALL SELECT {cols}, false FROM {prev} WHERE n_chars > 0"
        return f"({q})"
    edges = f"""
        WITH keyed AS (
            SELECT docId, is_cur, b.band, b.key FROM (
                SELECT docId, is_cur, unnest(bands) AS key, unnest(range(len(bands))) AS band
                FROM {sigs("docId, bands")}
            ) b WHERE key <> 0 AND {part_expr('key', parts)} = {part}
            UNION ALL
            SELECT docId, is_cur, -1 AS band, clean_hash AS key FROM {sigs("docId, clean_hash")}
            WHERE {part_expr('clean_hash', parts)} = {part}
        ), buckets AS (
            SELECT band, key FROM keyed GROUP BY band, key HAVING count(*) > 1 AND bool_or(is_cur)
        ), ordered AS (
            SELECT docId AS y, is_cur AS y_cur,
                   first_value(docId) OVER w AS x1, first_value(is_cur) OVER w AS x1_cur,
                   lag(docId) OVER w AS x2, lag(is_cur) OVER w AS x2_cur
            FROM keyed SEMI JOIN buckets USING (band, key)
            WINDOW w AS (PARTITION BY band, key ORDER BY docId)
        )
        SELECT DISTINCT least(x, y) AS a, greatest(x, y) AS b FROM (
            SELECT x1 AS x, y FROM ordered WHERE x1 <> y AND (x1_cur OR y_cur)
            UNION ALL
            SELECT x2, y FROM ordered WHERE x2 IS NOT NULL AND x2 <> x1 AND (x2_cur OR y_cur)
        )"""
    con.execute(f"CREATE OR REPLACE TEMP TABLE edges AS {edges}")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE needed AS
        SELECT docId, clean_hash, minhash FROM {sigs("docId, clean_hash, minhash")}
        WHERE docId IN (SELECT a FROM edges UNION SELECT b FROM edges)""")
    verified = query_table(con, f"""
        SELECT e.a, e.b,
               (list_sum(list_transform(range(1, {num_perm + 1}),
                        lambda i: (sa.minhash[i] = sb.minhash[i])::INT)) / {num_perm})::DOUBLE AS jaccard,
               sa.clean_hash = sb.clean_hash AS exact
        FROM edges e JOIN needed sa ON sa.docId = e.a JOIN needed sb ON sb.docId = e.b
        ORDER BY e.a, e.b""")
    write_table(layout.file("pairs", dump, layout.part_name(part)), verified)
    con.execute("DROP TABLE edges")
    con.execute("DROP TABLE needed")
    return {"pairs": verified.num_rows}
