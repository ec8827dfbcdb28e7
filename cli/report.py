"""``warclake report`` and ``warclake sql``: reports and SQL over the lake, no Prefect.

Also runs on its own: ``python -m warclake.cli.report report --lake LAKE``.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

from warclake.tasks.lake.layout import Lake


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="tables and charts of a dump (or all dumps) of the lake")
    p.add_argument("--lake", required=True, help="lake root folder")
    p.add_argument("--dump", default=None, help="one dump, e.g. CC-MAIN-2024-22 (default: all dumps)")
    p.add_argument("--out", default=None,
                   help="output folder (default: <lake>/reports/<dump or all-dumps>; for a remote lake "
                        "./reports/<dump or all-dumps>)")
    p.add_argument("--no-charts", action="store_true", help="tables only, no PNG charts")
    p.set_defaults(handler=run_report)

    q = sub.add_parser("sql", help="query the lake with DuckDB (opens <lake>/warclake.duckdb)")
    q.add_argument("--lake", required=True, help="lake root folder")
    q.add_argument("-c", "--command", dest="query", default=None, metavar="QUERY",
                   help="run QUERY, print the result and exit (default: interactive)")
    q.add_argument("--csv", action="store_true", help="print the result of -c as CSV")
    q.add_argument("--max-rows", type=int, default=40, help="rows shown per result (default: 40)")
    q.add_argument("--rebuild", action="store_true", help="rebuild the catalogue first")
    q.set_defaults(handler=run_sql)


def require_lake(args) -> Lake:
    """The lake (and the dump) asked for must exist: reading never creates them."""
    lake = Lake(args.lake).require()
    if getattr(args, "dump", None) is not None:
        lake.require_dump(args.dump)
    return lake


def run_report(args) -> int:
    # DuckDB: loaded by the commands that use it
    from warclake.tasks.lake.catalog import build_catalog

    lake = require_lake(args)
    # polars and charts: loaded only when reporting
    from warclake.tasks.reporting import markdown_table, write_report

    res = write_report(args.lake, args.out, args.dump, charts=not args.no_charts)
    if lake.is_local:
        try:  # keep the analysts' catalogue in step with the report (and its rollup)
            build_catalog(args.lake)
        except OSError as exc:  # a read-only shared lake: the report rolled it up for itself
            print(f"warclake: warning: catalogue not rebuilt ({exc.strerror or exc})", file=sys.stderr)
    print(markdown_table(res.tables["documents_per_dump"]))
    print()
    print(markdown_table(res.tables["size_ratio"]))
    print(f"\nreport: {res.html_path}\n        {res.markdown_path}\n({res.seconds:.2f}s)")
    return 0


def _print_result(rel, args) -> None:
    if rel is None:  # a statement without a result (SET, CREATE TEMP ...)
        return
    if args.csv:
        sys.stdout.write(rel.pl().write_csv())
    else:
        rel.show(max_rows=args.max_rows)


def run_sql(args) -> int:
    from warclake.tasks.lake.catalog import catalog_path, connect_catalog, is_remote

    require_lake(args)
    con = connect_catalog(args.lake, rebuild=args.rebuild)
    if args.query is not None:
        _print_result(con.sql(args.query), args)
        return 0
    exe = shutil.which("duckdb")
    if exe and not is_remote(args.lake):
        path = catalog_path(args.lake)
        con.close()
        # Read-only: the catalogue is rebuilt by replacing the file, so nothing an
        # analyst created in it would survive anyway.
        return subprocess.call([exe, "-readonly", str(path)])
    return _repl(con, args)


def _repl(con, args) -> int:
    """A minimal shell for machines without the duckdb CLI: statements end with ';'."""
    print(f"warclake sql on {args.lake} (views: documents, ledger, files, "
          "clean_documents, paragraphs, dumps). End statements with ';'; .tables, .read FILE, "
          ".quit.")
    buf: list[str] = []
    while True:
        try:
            line = input("warclake> " if not buf else "     ...> ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if not buf and line.strip() in (".quit", ".exit", "\\q"):
            return 0
        if not buf and line.strip() == ".tables":
            line = "SHOW TABLES;"
        elif not buf and line.strip().startswith(".read "):
            try:  # e.g. .read sql/report_encoding_share.sql
                line = open(line.strip()[6:].strip(), encoding="utf-8").read().rstrip()
            except OSError as exc:
                print(f"error: {exc}", file=sys.stderr)
                continue
            if not line.endswith(";"):
                line += ";"
        buf.append(line)
        if not line.rstrip().endswith(";"):
            continue
        query, buf = "\n".join(buf), []
        try:
            _print_result(con.sql(query), args)
        except Exception as exc:  # report and keep the session going, as a shell does
            print(f"error: {exc}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m warclake.cli.report",
                                     description="warclake reports and SQL over the lake")
    add_parser(parser.add_subparsers(dest="command_name", required=True))
    args = parser.parse_args(argv)
    import duckdb

    try:
        return int(args.handler(args) or 0)
    except (OSError, ValueError, duckdb.Error) as exc:
        print(f"warclake: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
