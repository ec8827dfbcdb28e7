"""The Public Suffix List, for the registered domain of a host in SQL (``domain`` in the
``document_info`` view). The list ships inside the ``publicsuffixlist`` package (updated with
its releases), so nothing is downloaded at run time. Both sections are used, ICANN and
private, as browsers do: ``user.github.io`` is its own site."""
from __future__ import annotations

import os

import duckdb
import pyarrow as pa


def rules() -> list[tuple[str, str]]:
    """(suffix, kind) per rule: kind ``normal``; ``wildcard`` for ``*.ck`` (stored as ``ck``:
    any label under it is a suffix); ``exception`` for ``!www.ck`` (stored as ``www.ck``:
    not a suffix, its parent is)."""
    import publicsuffixlist

    path = os.path.join(os.path.dirname(publicsuffixlist.__file__), "public_suffix_list.dat")
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rule = line.strip().split(" ", 1)[0].lower()
            if not rule or rule.startswith("//"):
                continue
            rule = rule.encode("idna").decode("ascii") if not rule.isascii() and "*" not in rule else rule
            if rule.startswith("!"):
                out.append((rule[1:], "exception"))
            elif rule.startswith("*."):
                out.append((rule[2:], "wildcard"))
            else:
                out.append((rule, "normal"))
    return out


def install_table(con: duckdb.DuckDBPyConnection) -> None:
    """``public_suffix(suffix, kind)`` on ``con``, from the bundled list."""
    suffixes, kinds = zip(*rules())
    table = pa.table({"suffix": list(suffixes), "kind": list(kinds)})
    con.register("public_suffix_rules", table)
    con.execute("CREATE OR REPLACE TABLE public_suffix AS SELECT * FROM public_suffix_rules")
    con.unregister("public_suffix_rules")
