"""The corpus report's charts (PNG, matplotlib's object API as the extraction report's
``tasks/reporting/charts.py``): removals by rule and language, duplicate cluster sizes,
and each model score's distribution with its threshold marked."""
from __future__ import annotations

import io
import math
import posixpath

import polars as pl

from warclake.tasks.corpus.storage.layout import write_bytes
from warclake.tasks.reporting.charts import MAX_CATEGORIES, _figure, _no_data

# score column -> (rule, title, log scale)
SCORES = {"fasttext_score": ("model_fasttext", "fastText score (label probability)", False),
          "perplexity": ("model_perplexity", "perplexity of the kept text", True),
          "word_list_ratio": ("word_list_ratio", "word-list share of characters", False)}


def chart_queries(con) -> dict[str, pl.DataFrame]:
    """What the charts draw, from the corpus views of ``con``."""
    out = {"removals_by_rule_lang": con.sql("""
        SELECT rule, coalesce(lang, '?') AS lang, count(*) AS removed FROM document_decisions
        WHERE NOT kept GROUP BY ALL ORDER BY rule, lang""").pl(),
           "cluster_sizes": con.sql("""
        SELECT cluster_size, count(DISTINCT cluster_id) AS clusters FROM document_decisions
        WHERE cluster_id IS NOT NULL GROUP BY 1 ORDER BY 1""").pl()}
    cols = set(con.sql("SELECT * FROM document_decisions LIMIT 0").columns)
    for col, (rule, _, _) in SCORES.items():
        if col not in cols:
            continue
        df = con.sql(f"SELECT {col} AS value, kept FROM document_decisions WHERE {col} IS NOT NULL").pl()
        th = con.sql(f"SELECT any_value(threshold) AS t FROM document_rule_hits WHERE rule = '{rule}'").pl()["t"][0]
        if df.height:
            out[f"score_{col}"] = df.with_columns(pl.lit(th, pl.Float64).alias("threshold"))
    return out


def _removals(df: pl.DataFrame, ax, fig) -> None:
    if not df.height:
        return _no_data(ax, "nothing removed")
    totals = df.group_by("lang").agg(pl.col("removed").sum()).sort(["removed", "lang"], descending=[True, False])
    langs = totals["lang"].to_list()
    top = langs[:MAX_CATEGORIES]
    df = df.with_columns(pl.when(pl.col("lang").is_in(top)).then(pl.col("lang")).otherwise(pl.lit("other"))
                         .alias("lang"))
    series = top + (["other"] if len(langs) > len(top) else [])
    rules = (df.group_by("rule").agg(pl.col("removed").sum()).sort(["removed", "rule"], descending=[False, True])
             ["rule"].to_list())
    fig.set_figheight(max(3.0, 1.2 + 0.35 * len(rules)))
    left = [0] * len(rules)
    for lang in series:
        sub = dict(df.filter(pl.col("lang") == lang).group_by("rule").agg(pl.col("removed").sum()).iter_rows())
        vals = [sub.get(r, 0) for r in rules]
        ax.barh(range(len(rules)), vals, left=left, label=lang)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(range(len(rules)), rules, fontsize=8)
    ax.set_xlabel("documents removed (first rule that fired)")
    ax.legend(title="language", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Removals by rule and language")


def _clusters(df: pl.DataFrame, ax, fig) -> None:
    if not df.height:
        return _no_data(ax, "no duplicate clusters")
    sizes, counts = df["cluster_size"].to_list(), df["clusters"].to_list()
    ax.bar(range(len(sizes)), counts, color="#4878a8")
    ax.set_xticks(range(len(sizes)), [str(s) for s in sizes], fontsize=8)
    ax.set_xlabel("documents in the cluster")
    ax.set_ylabel("clusters")
    if max(counts) > 50 * max(1, min(counts)):
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Duplicate clusters by size")


def _score(col: str, df: pl.DataFrame, ax, fig) -> None:
    rule, title, log = SCORES[col]
    vals = [v for v in df["value"].to_list() if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not vals:
        return _no_data(ax)
    lo, hi = min(vals), max(vals)
    bins: object   # a count, or the log scale's edges
    if log:
        import numpy as np

        bins = np.logspace(math.log10(lo), math.log10(hi if hi > lo else lo * 10), 40)
        ax.set_xscale("log")
    else:
        bins = 40
    ax.hist(vals, bins=bins, color="#4878a8")
    th = df["threshold"][0]
    if th is not None:
        ax.axvline(th, color="#c0392b", linestyle="--", label=f"{rule} threshold {th:g}")
        ax.legend(fontsize=8)
    else:
        ax.text(0.99, 0.97, "no threshold crossed", ha="right", va="top", transform=ax.transAxes, fontsize=8,
                color="grey")
    ax.set_xlabel(title)
    ax.set_ylabel("documents")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Distribution of {col}")


TITLES = {"removals_by_rule_lang": "Removals by rule and language", "cluster_sizes": "Duplicate clusters by size",
          **{f"score_{c}": f"Distribution of {c}, threshold marked" for c in SCORES}}


def write_charts(data: dict[str, pl.DataFrame], out_dir: str) -> list[tuple[str, str]]:
    """Each chart as ``<name>.png`` in ``out_dir``; (title, file name) of each."""
    written = []
    for name, df in data.items():
        fig, ax = _figure()
        if name == "removals_by_rule_lang":
            _removals(df, ax, fig)
        elif name == "cluster_sizes":
            _clusters(df, ax, fig)
        else:
            _score(name[len("score_"):], df, ax, fig)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        write_bytes(posixpath.join(out_dir, name + ".png"), buf.getvalue())
        written.append((TITLES[name], name + ".png"))
    return written
