"""Connected components of a pair list, deterministic: every node gets the smallest node
number of its component (min-label propagation with pointer jumping, all in numpy)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa


def component_labels(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """label[i] = the smallest node of i's component, for nodes 0..n-1 and edges a[k]-b[k]."""
    label = np.arange(n, dtype=np.int64)
    if len(a) == 0:
        return label
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    while True:
        la, lb = label[a], label[b]
        m = np.minimum(la, lb)
        before = label.copy()
        np.minimum.at(label, a, m)
        np.minimum.at(label, b, m)
        np.minimum.at(label, la, m)   # move the roots too, so long chains collapse fast
        np.minimum.at(label, lb, m)
        while True:                   # pointer jumping: label of label
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
        if np.array_equal(label, before):
            return label


CLUSTERS = pa.schema([("docId", pa.string()), ("label", pa.string())])


def docid_clusters(con, links: str) -> pa.Table:
    """(docId, label: the smallest docId of its component) of every document in a pair of
    ``links`` (a query of (a, b) docIds). Only the pairs are held: the documents are
    numbered in DuckDB, in docId order, and the components taken over those numbers."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE cl_links AS {links}")
    con.execute("""CREATE OR REPLACE TEMP TABLE cl_nodes AS
        SELECT docId, (row_number() OVER (ORDER BY docId) - 1)::BIGINT AS node
        FROM (SELECT a AS docId FROM cl_links UNION SELECT b FROM cl_links)""")
    n = con.execute("SELECT count(*) FROM cl_nodes").fetchone()[0]
    e = con.execute("""SELECT na.node AS a, nb.node AS b FROM cl_links l
                       JOIN cl_nodes na ON na.docId = l.a JOIN cl_nodes nb ON nb.docId = l.b""").fetchnumpy()
    con.execute("DROP TABLE cl_links")
    labels = component_labels(n, np.asarray(e["a"], np.int64), np.asarray(e["b"], np.int64))
    del e
    con.register("cl_labels", pa.table({"node": np.arange(n, dtype=np.int64), "label": labels}))
    fetch = con.sql("""SELECT n.docId, c.docId AS label FROM cl_nodes n JOIN cl_labels l USING (node)
                       JOIN cl_nodes c ON c.node = l.label""")
    out = (getattr(fetch, "to_arrow_table", None) or fetch.fetch_arrow_table)()
    con.unregister("cl_labels")
    con.execute("DROP TABLE cl_nodes")
    return out.cast(CLUSTERS)
