"""Paragraph statistics of one dump, one hash-prefix partition at a time.

``para_hosts`` has a row per (normalised text, host): how many documents and distinct URLs
of that host carry it, its registered domain, first and last date, one place it occurs
(docId, idx) to show it, and the text's SimHash and length (for the near-duplicate
groups, ``para_groups.py``). ``para_paths`` counts the CSS paths it appears under. Each dump
writes its own rows; the statistics of a text over the lake are these rows summed over the
dumps (view ``paragraph_stats``), so a new dump adds to them without recomputing the
others.
"""
from __future__ import annotations

from warclake.tasks.corpus.storage.dump_inputs import DumpInputs
from warclake.tasks.corpus.storage.engine import parquet_list, part_expr, query_table
from warclake.tasks.corpus.storage.layout import CorpusLayout, write_table
from warclake.tasks.lake.catalog import sql_literal

STEP = "para_stats"


def stats_partition(con, layout: CorpusLayout, inputs: DumpInputs, part: int, parts: int,
                    sig_fp: str) -> bool:
    """Write the partition's two tables unless done; True when it did work."""
    name = layout.part_name(part)
    key = {"inputs": inputs.identity, "signatures": sig_fp, "parts": parts, "columns": "simhash"}  # with SimHash and length
    return layout.once(STEP, inputs.dump, name, key, _write_partition, con, layout, inputs, part, parts)


def _write_partition(con, layout: CorpusLayout, inputs: DumpInputs, part: int, parts: int) -> dict:
    name = layout.part_name(part)
    src = parquet_list(inputs.files(layout, "paragraphs"))
    # one read of the paragraph files for both tables: the partition's rows
    con.execute(f"""CREATE OR REPLACE TEMP TABLE part_rows AS
        SELECT text_hash, simhash, n_chars, host, domain, url_hash, date, docId, idx, path FROM {src}
        WHERE {part_expr('text_hash', parts)} = {part} AND n_chars > 0""")
    hosts = query_table(con, f"""
        SELECT text_hash, host, min(domain) AS domain,
               {sql_literal(inputs.dump)} AS dump,
               count(*)::BIGINT AS n_docs, count(DISTINCT url_hash)::BIGINT AS n_urls,
               min(date) AS first_date, max(date) AS last_date,
               min(docId) AS sample_doc, arg_min(idx, docId) AS sample_idx,
               min(simhash) AS simhash, min(n_chars) AS n_chars
        FROM part_rows GROUP BY text_hash, host ORDER BY text_hash, host NULLS LAST""")
    paths = query_table(con, f"""
        SELECT text_hash, path, {sql_literal(inputs.dump)} AS dump, count(*)::BIGINT AS n
        FROM part_rows GROUP BY text_hash, path ORDER BY text_hash, path""")
    con.execute("DROP TABLE part_rows")
    write_table(layout.file("para_hosts", inputs.dump, name), hosts)
    write_table(layout.file("para_paths", inputs.dump, name), paths)
    return {"rows": hosts.num_rows}
