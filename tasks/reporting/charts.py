"""PNG charts of the report tables, drawn with matplotlib's object API (no pyplot state)."""
from __future__ import annotations

from datetime import date
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import polars as pl

from warclake.tasks.reporting.queries import Report

if TYPE_CHECKING:
    from matplotlib.colors import ListedColormap

MAX_CATEGORIES = 8   # the rest of a share chart is lumped into "other"
FEW_MONTHS = 24      # up to this many months (or years) of one series: bars, not a line
DPI = 100


def _figure(width: float = 8.0, height: float = 4.5):
    # The object API with an Agg canvas: no pyplot state, no GUI backend, safe in threads.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _palette(name: str) -> list:
    """A qualitative colormap's colours (tab10, tab20: ListedColormaps of RGB tuples)."""
    import matplotlib

    return list(cast("Sequence", cast("ListedColormap", matplotlib.colormaps[name]).colors))


def _no_data(ax, msg: str = "no data") -> None:
    ax.text(0.5, 0.5, msg, ha="center", va="center", transform=ax.transAxes, fontsize=14,
            color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def _width_for(n: int) -> float:
    return min(40.0, max(8.0, 2.0 + 0.4 * n))


def _dump_bars(ax, dumps: list[str], values: list[float], fmt: str, ylabel: str) -> None:
    bars = ax.bar(range(len(dumps)), values, color="#4878a8")
    ax.set_xticks(range(len(dumps)), dumps, rotation=45 if len(dumps) > 3 else 0,
                  ha="right" if len(dumps) > 3 else "center", fontsize=8)
    ax.set_ylabel(ylabel)
    if len(dumps) <= 30:
        ax.bar_label(bars, labels=[fmt.format(v) for v in values], fontsize=8, padding=2)
    ax.margins(y=0.15)
    ax.grid(axis="y", alpha=0.3)


def _chart_documents_per_dump(df: pl.DataFrame, ax, fig) -> None:
    if df.height == 0:
        return _no_data(ax)
    fig.set_figwidth(_width_for(df.height))
    _dump_bars(ax, df["dump"].to_list(), df["documents"].to_list(), "{:,}", "documents")


def _chart_size_ratio(df: pl.DataFrame, ax, fig) -> None:
    if df.height == 0:
        return _no_data(ax)
    fig.set_figwidth(_width_for(df.height))
    pct = [0.0 if v is None else 100.0 * v for v in df["ratio"].to_list()]
    _dump_bars(ax, df["dump"].to_list(), pct, "{:.3g} %", "output / input bytes (%)")


def share_rows(report: Report, df: pl.DataFrame) -> tuple[list, pl.DataFrame]:
    """A share chart's categories in order and its (dump, category, value) rows.

    One "other" row: the query's own (a report that lumps its tail) or the chart's, never
    both, and as many categories as the query lists, so chart and table show the same figures."""
    cat, val = report.category, report.value
    other = report.other or "other"
    totals = df.filter(pl.col(cat).ne(other) | pl.col(cat).is_null()).group_by(cat).agg(pl.col(val).sum()) \
        .sort([val, cat], descending=[True, False])
    top = totals[cat].to_list()[:report.top or MAX_CATEGORIES]
    lumped = df.with_columns(
        pl.when(pl.col(cat).is_in(top)).then(pl.col(cat)).otherwise(pl.lit(other)).alias(cat))
    lumped = lumped.group_by(["dump", cat]).agg(pl.col(val).sum())
    return top + ([other] if lumped[cat].eq(other).any() else []), lumped


def _chart_share(report: Report, df: pl.DataFrame, ax, fig) -> None:
    if df.height == 0:
        return _no_data(ax)
    cat, val = report.category, report.value
    order, lumped = share_rows(report, df)
    if len(order) > 12:
        fig.set_figheight(max(4.5, 0.28 * len(order)))
    dumps = sorted(lumped["dump"].unique().to_list())
    colors = _palette("tab10" if len(order) <= 10 else "tab20")
    if len(dumps) == 1:
        # One dump: one bar per category reads better than a single stacked bar.
        total = lumped[val].sum()
        counts = {r[cat]: r[val] for r in lumped.iter_rows(named=True)}
        shares = [100.0 * counts.get(c, 0) / total for c in order]
        y = list(range(len(order)))[::-1]
        bars = ax.barh(y, shares, color=[colors[i % len(colors)] for i in range(len(order))])
        ax.set_yticks(y, order)
        ax.bar_label(bars, labels=[f"{s:.1f} % ({counts.get(c, 0):,})"
                                   for s, c in zip(shares, order)], fontsize=8, padding=2)
        ax.set_xlabel(f"share of {val} (%)")
        ax.set_xlim(0, max(shares) * 1.3 if shares else 1)
        ax.set_title(f"{report.title} — {dumps[0]}")
        return
    fig.set_figwidth(_width_for(len(dumps)) + 2)
    pivot = {(r["dump"], r[cat]): r[val] for r in lumped.iter_rows(named=True)}
    dump_totals = {d: sum(pivot.get((d, c), 0) for c in order) or 1 for d in dumps}
    bottom = [0.0] * len(dumps)
    for i, c in enumerate(order):
        part = [100.0 * pivot.get((d, c), 0) / dump_totals[d] for d in dumps]
        ax.bar(range(len(dumps)), part, bottom=bottom, label=c, color=colors[i % len(colors)])
        bottom = [b + p for b, p in zip(bottom, part)]
    ax.set_xticks(range(len(dumps)), dumps, rotation=45 if len(dumps) > 3 else 0,
                  ha="right" if len(dumps) > 3 else "center", fontsize=8)
    ax.set_ylabel(f"share of {val} (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)


def _chart_documents_per_month(df: pl.DataFrame, ax, fig) -> None:
    dated = df.filter(pl.col("month").is_not_null())
    undated = int(df.filter(pl.col("month").is_null())["documents"].sum() or 0)
    if dated.height == 0:
        return _no_data(ax, f"no dated documents ({undated:,} without a date)")
    from matplotlib.ticker import MaxNLocator

    if dated["dump"].n_unique() > MAX_CATEGORIES:
        # Too many lines to tell apart: show the sum over the dumps instead.
        dated = dated.with_columns(pl.lit("all dumps").alias("dump"))
    step, unit = "1mo", "month"
    first, last = cast(date, dated["month"].min()), cast(date, dated["month"].max())
    if (last - first).days > 5 * 366:
        # Last-Modified dates reach back years: monthly points would be mostly zeros.
        dated = dated.with_columns(pl.col("month").dt.truncate("1y"))
        step, unit = "1y", "year"
    dated = dated.group_by(["dump", "month"]).agg(pl.col("documents").sum())
    first, last = cast(date, dated["month"].min()), cast(date, dated["month"].max())
    months = pl.date_range(first, last, step, eager=True).to_list()
    series = sorted(dated["dump"].unique().to_list())
    pivot = {(r["dump"], r["month"]): r["documents"] for r in dated.iter_rows(named=True)}
    colors = _palette("tab10")
    if len(series) == 1 and len(months) <= FEW_MONTHS:
        # A few months: one bar each, labelled, so one month is not a lone point on an axis
        # that spans years.
        values = [pivot.get((series[0], m), 0) for m in months]
        labels = [m.strftime("%Y-%m" if unit == "month" else "%Y") for m in months]
        bars = ax.bar(range(len(months)), values, color=colors[0])
        ax.set_xticks(range(len(months)), labels, rotation=45 if len(months) > 6 else 0,
                      ha="right" if len(months) > 6 else "center", fontsize=8)
        ax.bar_label(bars, labels=[f"{v:,}" for v in values], fontsize=8, padding=2)
        ax.margins(y=0.15)
        ax.set_title(f"Documents per {unit} of their date")
        ax.set_ylabel(f"documents per {unit}")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"{unit} of the document's date"
                      + (f" ({undated:,} documents without a date)" if undated else ""))
        return
    # One line per dump, every month of the range (0 where none): cheap to draw for long
    # date ranges, and dumps stay comparable.
    for i, s in enumerate(series):
        ax.plot(months, [pivot.get((s, m), 0) for m in months], label=s,
                color=colors[i % len(colors)], marker="." if len(months) <= 60 else None,
                linewidth=1.2)
    ax.set_title(f"Documents per {unit} of their date")
    ax.set_ylabel(f"documents per {unit}")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="y", alpha=0.3)
    if len(series) > 1:
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
        fig.set_figwidth(10)
    ax.set_xlabel(f"{unit} of the document's date"
                  + (f" ({undated:,} documents without a date)" if undated else ""))
    fig.autofmt_xdate()


# Per-dump bar charts say nothing with one bar: the page's headline gives that number.
PER_DUMP_BARS = ("documents_per_dump", "size_ratio")


def write_chart(report: Report, df: pl.DataFrame, path: Path) -> Path | None:
    """Draw ``report``'s chart of ``df`` into the PNG file ``path``; None when a chart would
    show a single bar."""
    if report.name in PER_DUMP_BARS and df.height == 1:
        return None
    fig, ax = _figure()
    if report.category:
        _chart_share(report, df, ax, fig)
    else:
        {"documents_per_dump": _chart_documents_per_dump,
         "size_ratio": _chart_size_ratio,
         "documents_per_month": _chart_documents_per_month}[report.name](df, ax, fig)
    if not ax.get_title():
        ax.set_title(report.title)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path
