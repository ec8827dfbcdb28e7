"""Reports on a generated lake, each number checked against counts made here in Python
from the rows and summaries the generator wrote (never by running the same SQL)."""
import os
import struct
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from support.lakegen import make_lake
from warclake.tasks.reporting import REPORTS, artifact_summary, run_reports, write_report

REPO = Path(__file__).resolve().parents[2]
# The legacy labels lakegen writes, and what the extractor reports them as.
ALIASES = {"Shift_JIS": "windows-31j", "x-sjis": "windows-31j", "CP932": "windows-31j",
           "UTF8": "utf-8", "GB2312": "gbk", "EUC-JP": "euc-jp"}
D1, D2, D3 = "CC-MAIN-2023-50", "CC-MAIN-2024-10", "CC-MAIN-2024-18"


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    return make_lake(tmp_path_factory.mktemp("lake") / "lake", dumps={D1: 5, D2: 4, D3: 3},
                     records=120, salvaged=1, failed=1, running=1)


@pytest.fixture(scope="module")
def tables(lake):
    return run_reports(lake.root)


def rows_by(df, *keys):
    return {tuple(r[k] for k in keys): r for r in df.iter_rows(named=True)}


def test_documents_per_dump(lake, tables):
    got = rows_by(tables["documents_per_dump"], "dump")
    assert set(got) == {(D1,), (D2,), (D3,)}
    for dump in (D1, D2, D3):
        done = [f for f in lake.done_files if f.dump == dump]
        r = got[(dump,)]
        assert r["files"] == len(done)
        assert r["salvaged"] == sum(f.status == "salvaged" for f in done)
        assert r["failed"] == sum(f.status == "failed" for f in done)
        assert r["records"] == sum(len(f.ledger) for f in done)
        assert r["documents"] == sum(len(f.documents) for f in done)
    # the input still being extracted has documents on disk, but is not counted
    running = [f for f in lake.files if not f.done]
    assert running and running[0].documents
    assert got[(D1,)]["files"] == 5 and got[(D1,)]["failed"] == 1 and got[(D1,)]["salvaged"] == 1


def test_size_ratio(lake, tables):
    got = rows_by(tables["size_ratio"], "dump")
    for dump in (D1, D2, D3):
        ok = [f.summary for f in lake.done_files if f.dump == dump and f.status != "failed"]
        inp = sum(s["input_bytes"] for s in ok)
        out = sum(os.path.getsize(lake.root / "documents" / f"dump={dump}" / f"{s['warc_file']}.parquet")
                  for s in ok)
        r = got[(dump,)]
        assert (r["files"], r["input_bytes"], r["output_bytes"]) == (len(ok), inp, out)
        assert r["ratio"] == pytest.approx(out / inp)


def test_encoding_share_normalises_labels(lake, tables):
    want = Counter((d["dump"], ALIASES.get(d["charset"], d["charset"])) for d in lake.done_documents())
    df = tables["encoding_share"]
    got = {(r["dump"], r["charset"]): r["documents"] for r in df.iter_rows(named=True)}
    assert got == dict(want)
    # legacy spellings were present and were folded in
    assert any(d["charset"] in ("Shift_JIS", "x-sjis", "CP932") for d in lake.done_documents())
    assert not set(df["charset"]) & {"Shift_JIS", "shift_jis", "x-sjis", "cp932", "CP932"}
    per_dump = Counter(d["dump"] for d in lake.done_documents())
    for r in df.iter_rows(named=True):
        assert r["share"] == pytest.approx(r["documents"] / per_dump[r["dump"]])


def test_language_share_from_the_ledger(lake, tables):
    looked = [r for r in lake.done_ledger() if r["outcome"] in ("kept", "lang_rejected") or r["lang"]]
    records = Counter((r["dump"], r["lang"] or "und") for r in looked)
    kept = Counter((r["dump"], r["lang"] or "und") for r in looked if r["outcome"] == "kept")
    per_dump = Counter(r["dump"] for r in looked)
    got = rows_by(tables["language_share"], "dump", "lang")
    assert set(got) == set(records)
    for key, r in got.items():
        assert r["records"] == records[key]
        assert r["documents"] == kept[key]
        assert r["share"] == pytest.approx(records[key] / per_dump[key[0]])
    assert records[(D1, "und")] > 0  # undetectable languages are shown, not dropped


def test_outcome_share(lake, tables):
    ledger = lake.done_ledger()
    want = Counter((r["dump"], r["outcome"]) for r in ledger)
    bytes_in = Counter()
    for r in ledger:
        bytes_in[(r["dump"], r["outcome"])] += r["bytes_in"]
    got = rows_by(tables["outcome_share"], "dump", "outcome")
    assert {k: r["records"] for k, r in got.items()} == dict(want)
    assert {k: r["bytes_in"] for k, r in got.items()} == dict(bytes_in)
    # every record accounted for: the ledger agrees with the summaries' outcome counts
    from_json = Counter()
    for f in lake.done_files:
        for outcome, n in f.summary["outcomes"].items():
            from_json[(f.dump, outcome)] += n
    assert {k: r["records"] for k, r in got.items()} == dict(from_json)
    assert got[(D1, "record_broken")]["records"] == 1  # the salvaged input's last record
    sums = defaultdict(float)
    for k, r in got.items():
        sums[k[0]] += r["share"]
    assert all(s == pytest.approx(1.0) for s in sums.values())


def test_charset_source_share(lake, tables):
    want = Counter((d["dump"], d["charset_source"]) for d in lake.done_documents())
    got = {(r["dump"], r["charset_source"]): r["documents"]
           for r in tables["charset_source_share"].iter_rows(named=True)}
    assert got == dict(want)


def test_documents_per_month(lake, tables):
    want = Counter((d["dump"], d["date"].date().replace(day=1) if d["date"] else None)
                   for d in lake.done_documents())
    got = {(r["dump"], r["month"]): r["documents"]
           for r in tables["documents_per_month"].iter_rows(named=True)}
    assert got == dict(want)
    assert any(m is None for _, m in got)  # documents without a date have their own row


def test_one_dump_report_reads_only_that_dump(lake):
    t = run_reports(lake.root, dump=D2)
    for name, df in t.items():
        assert set(df["dump"]) == {D2}, name
    assert t["documents_per_dump"]["documents"][0] == sum(
        len(f.documents) for f in lake.done_files if f.dump == D2)
    t = run_reports(lake.root, dump="CC-MAIN-1999-01")  # nothing there yet: empty tables
    assert all(df.height == 0 for df in t.values())
    with pytest.raises(ValueError):
        run_reports(lake.root, dump="../documents")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    assert data[12:16] == b"IHDR", path
    return struct.unpack(">II", data[16:24])


def test_report_files_charts_and_pages(lake, tmp_path):
    import matplotlib.image as mpimg
    import numpy as np

    res = write_report(lake.root, tmp_path / "out")
    names = [r.name for r in REPORTS]
    assert sorted(res.charts) == sorted(names)
    for name, path in res.charts.items():
        w, h = png_size(path)
        assert 600 <= w <= 4000 and 300 <= h <= 2000, (name, w, h)
        img = mpimg.imread(path)
        assert img.shape[:2] == (h, w)
        # something was drawn: a fair part of the picture is not background white
        assert (img[..., :3] < 0.9).any(axis=2).mean() > 0.02, name
        assert len(np.unique(img[..., :3].reshape(-1, 3), axis=0)) > 5, name
    html = res.html_path.read_text()
    md = res.markdown_path.read_text()
    for name in names:
        assert f"src='{name}.png'" in html
        assert f"({name}.png)" in md
        assert (tmp_path / "out" / f"{name}.csv").exists()
    docs = sum(len(f.documents) for f in lake.done_files if f.dump == D3)
    assert f"<td>{D3}</td>" in html and f"| {D3} |" in md
    assert f"| {docs} |" in md.split("## Output/input")[0]
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_one_dump_charts(lake, tmp_path):
    res = write_report(lake.root, tmp_path / "one", dump=D1)
    for path in res.charts.values():
        w, h = png_size(path)
        assert w >= 600 and h >= 300


def test_empty_lake_report(tmp_path):
    (tmp_path / "lake").mkdir()
    res = write_report(tmp_path / "lake", tmp_path / "out")
    assert all(df.height == 0 for df in res.tables.values())
    for path in res.charts.values():
        png_size(path)
    assert "# warclake report" in res.markdown_path.read_text()


def test_artifact_summary(lake, tables):
    md, rows = artifact_summary(tables, None, "/somewhere")
    assert [r["dump"] for r in rows] == [D1, D2, D3]
    for r in rows:
        done = [f for f in lake.done_files if f.dump == r["dump"]]
        assert r["documents"] == sum(len(f.documents) for f in done)
        assert r["files"] == len(done)
        ok = [f.summary for f in done if f.status != "failed"]
        assert r["input_bytes"] == sum(s["input_bytes"] for s in ok)
        assert r["top_encodings"].split(" ")[0] in {"utf-8", "windows-31j", "euc-jp", "gbk"}
    assert "## Documents per dump" in md and "## Encoding share" in md


def test_a_second_report_reads_the_rollup_not_the_archives(tmp_path):
    """100 archives over 10 dumps: the first report rolls every archive up, the next one finds
    nothing new and reads no archive, and both say the same."""
    from warclake.tasks.lake import rollup

    dumps = {f"CC-MAIN-20{y}-{w:02d}": 10 for y in (20, 21, 22, 23, 24) for w in (10, 40)}
    lake = make_lake(tmp_path / "lake", dumps=dumps, records=200)
    assert len(lake.files) >= 100
    first = run_reports(lake.root)
    assert first["documents_per_dump"].height == 10
    assert first["documents_per_dump"]["documents"].sum() == len(lake.done_documents())
    assert [rollup.refresh(lake.root, d).rolled for d in dumps] == [0] * len(dumps)
    again = run_reports(lake.root)
    for name, df in first.items():
        assert again[name].equals(df), name


def run_cli(*args, cwd):
    env = dict(os.environ, DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false")
    return subprocess.run([sys.executable, "-m", "warclake.cli.report", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_report_and_sql_from_elsewhere(lake, tmp_path):
    out = tmp_path / "rep"
    p = run_cli("report", "--lake", str(lake.root), "--dump", D2, "--out", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (out / "report.html").exists() and (out / "encoding_share.png").exists()
    # one dump: its figures are the page's headline, not a chart of one bar
    assert not (out / "documents_per_dump.png").exists() and not (out / "size_ratio.png").exists()
    assert "<th>documents</th>" in (out / "report.html").read_text()
    docs = sum(len(f.documents) for f in lake.done_files if f.dump == D2)
    assert f"| {D2} |" in p.stdout and f"| {docs} |" in p.stdout

    p = run_cli("sql", "--lake", str(lake.root), "--csv", "-c",
                "SELECT dump, count(*) AS n FROM done_documents GROUP BY dump ORDER BY dump",
                cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    want = Counter(d["dump"] for d in lake.done_documents())
    assert lines == ["dump,n"] + [f"{d},{want[d]}" for d in sorted(want)]

    # interactive, without a duckdb CLI on PATH: the built-in shell
    p = subprocess.run([sys.executable, "-m", "warclake.cli.report", "sql", "--lake", str(lake.root)],
                       input="SELECT count(*) AS n\nFROM files;\n.quit\n", cwd=tmp_path,
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PATH=os.path.dirname(sys.executable),
                                DO_NOT_TRACK="1"))
    assert p.returncode == 0, p.stderr
    assert str(len(lake.done_files)) in p.stdout

    p = run_cli("report", "--lake", str(lake.root), "--dump", "no/such", cwd=tmp_path)
    assert p.returncode == 2 and "dump name" in p.stderr


def test_build_dump_report_outside_a_flow(lake, tmp_path):
    from warclake.flows.report_flow import build_dump_report

    html = build_dump_report(str(lake.root), D1, str(tmp_path / "r"))
    assert Path(html).is_file() and Path(html).parent == tmp_path / "r"
    assert (lake.root / "warclake.duckdb").is_file()


def test_flow_attaches_artifacts(lake, tmp_path, prefect_harness):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    from warclake.flows.report_flow import artifact_key, report_flow

    state = report_flow(str(lake.root), D1, str(tmp_path / "r"), return_state=True)
    assert state.is_completed(), state.message
    flow_run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))
    by_type = {a.type: a for a in arts}
    assert set(by_type) == {"markdown", "table"}
    assert by_type["markdown"].key == artifact_key(D1) == "warclake-report-cc-main-2023-50"
    docs = sum(len(f.documents) for f in lake.done_files if f.dump == D1)
    assert "## Encoding share" in by_type["markdown"].data
    # the charts are in the artifact itself (the UI cannot open files on the server)
    import base64
    import re

    images = re.findall(r"!\[[^\]]*\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)", by_type["markdown"].data)
    assert len(images) >= 5 and all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    table = by_type["table"].data
    table = table if isinstance(table, list) else __import__("json").loads(table)
    assert table[0]["dump"] == D1 and table[0]["documents"] == docs


def test_reports_on_a_lake_the_extractor_wrote(tmp_path):
    """The same reports over a lake written by the real extractor from a sample dump,
    checked against its ledger and summaries read with pyarrow and json."""
    import json

    import pyarrow.parquet as pq

    from warclake.tasks.extract.archive import extract_archive
    from warclake.tasks.sample_dump import make_dump
    dump = "CC-MAIN-2099-01"
    paths = make_dump(str(tmp_path / "dump"), files=2, pages_per_file=15, dump=dump)
    lake = tmp_path / "lake"
    for p in paths:
        extract_archive(p, dump, str(lake))
    tables = run_reports(lake)

    summaries = [json.loads(p.read_text()) for p in sorted((lake / "files").glob("*/*.json"))]
    ledger = pq.read_table(lake / "ledger", partitioning=None).to_pylist()
    docs = pq.read_table(lake / "documents", partitioning=None,
                         columns=["dump", "charset", "charset_source"]).to_pylist()
    assert len(summaries) == 2 and ledger
    r = tables["documents_per_dump"].row(0, named=True)
    assert (r["files"], r["records"], r["documents"]) == (
        2, sum(s["records"] for s in summaries), sum(s["documents"] for s in summaries))
    assert r["documents"] == len(docs)
    assert {row["outcome"]: row["records"] for row in tables["outcome_share"].iter_rows(named=True)} \
        == dict(Counter(x["outcome"] for x in ledger))
    assert {row["charset"]: row["documents"] for row in tables["encoding_share"].iter_rows(named=True)} \
        == dict(Counter(x["charset"] for x in docs))
    ok = [s for s in summaries if s["status"] != "failed"]
    assert tables["size_ratio"]["ratio"][0] == pytest.approx(
        sum(s["output_bytes"] for s in ok) / sum(s["input_bytes"] for s in ok))


def test_reports_on_a_remote_lake_through_fsspec(lake, tmp_path):
    """A lake behind an fsspec URL (here fsspec's in-memory store) reads like a local one."""
    import fsspec

    fs = fsspec.filesystem("memory")
    url = f"memory://lake-{tmp_path.name}"
    for p in lake.root.rglob("*"):
        if p.suffix in (".parquet", ".json") and p.parts[len(lake.root.parts)] != "reports":
            fs.put_file(str(p), f"{url}/{p.relative_to(lake.root).as_posix()}")
    try:
        remote = run_reports(url)
    finally:
        fs.rm(url, recursive=True)
    local = run_reports(lake.root)
    for name in local:
        assert remote[name].equals(local[name]), name


def test_cells_are_formatted_for_people_and_csv_keeps_raw_values(lake, tmp_path):
    from datetime import date

    from warclake.tasks.reporting.pages import _fmt

    assert _fmt("documents", 1234567) == "1,234,567"
    assert _fmt("ratio", 0.14963) == "15.0 %" and _fmt("share", 0.5) == "50.0 %"
    assert _fmt("month", date(2024, 5, 1)) == "2024-05" and _fmt("month", None) == "(no date)"
    assert _fmt("documents_per_record", 0.31372) == "0.314"
    write_report(lake.root, tmp_path / "out", dump=D1)
    csv = (tmp_path / "out" / "size_ratio.csv").read_text()
    assert "%" not in csv and "," in csv.splitlines()[0]  # machine-readable numbers


def test_headline_matches_the_lake(lake, tmp_path):
    res = write_report(lake.root, tmp_path / "out")
    done = lake.done_files
    docs = sum(len(f.documents) for f in done)
    records = sum(len(f.ledger) for f in done)
    failed = sum(f.status == "failed" for f in done)
    salvaged = sum(f.status == "salvaged" for f in done)
    md = res.markdown_path.read_text().split("## ")[0]
    assert f"**documents** {docs:,}" in md and f"**records** {records:,}" in md
    assert f"**archives** {len(done):,} ({len(done) - salvaged - failed:,} complete, {salvaged:,} salvaged, " \
           f"{failed:,} failed)" in md
    assert "<table class='headline'>" in res.html_path.read_text()


def test_domain_share_adds_up_to_each_dumps_documents(lake, tables):
    df = tables["domain_share"]
    for dump in (D1, D2, D3):
        rows = df.filter(df["dump"] == dump)
        docs = sum(len(f.documents) for f in lake.done_files if f.dump == dump)
        assert rows["documents"].sum() == docs and abs(rows["share"].sum() - 1) < 1e-9
        assert rows.height <= 26


def test_top_domains_chart_shows_the_tables_rows_with_one_other(tmp_path):
    """30 domains in one dump: the table lists 25 and '(other domains)'; the chart shows those
    same 26 rows and figures, never a second 'other'."""
    import polars as pl

    from warclake.tasks.reporting.charts import share_rows, write_chart
    from warclake.tasks.reporting.queries import BY_NAME

    report = BY_NAME["domain_share"]
    counts = {f"site{i:02d}.example": 100 - i for i in range(30)}
    rest = sum(sorted(counts.values(), reverse=True)[25:])
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:25]
    table = pl.DataFrame({"dump": ["D"] * 26, "domain": [d for d, _ in top] + ["(other domains)"],
                          "documents": [n for _, n in top] + [rest]})
    order, rows = share_rows(report, table)
    assert order == [d for d, _ in top] + ["(other domains)"] and "other" not in order
    shown = dict(zip(rows["domain"].to_list(), rows["documents"].to_list()))
    assert shown == dict(zip(table["domain"].to_list(), table["documents"].to_list()))
    assert write_chart(report, table, tmp_path / "domain_share.png").stat().st_size > 1000

    # a share report without a lumped row of its own gets the chart's one "other"
    langs = pl.DataFrame({"dump": ["D"] * 10, "lang": [f"l{i}" for i in range(10)], "records": list(range(10, 0, -1))})
    order, rows = share_rows(BY_NAME["language_share"], langs)
    assert order[-1] == "other" and len(order) == 9 and rows["records"].sum() == sum(range(1, 11))


def test_stage_seconds_say_where_each_dumps_time_went(lake, tables):
    df = tables["stage_seconds"]
    for dump in (D1, D2, D3):
        done = [f for f in lake.done_files if f.dump == dump and f.summary["status"] != "failed"]
        rows = df.filter(df["dump"] == dump)
        assert rows["stage"].to_list() == ["read", "charset", "language", "parse", "boilerplate", "write", "other"]
        by_stage = {r["stage"]: r for r in rows.iter_rows(named=True)}
        assert abs(sum(rows["seconds"]) - sum(f.summary["seconds"] for f in done)) < 0.01
        assert abs(by_stage["other"]["seconds"] - 0.05 * sum(f.summary["seconds"] for f in done)) < 0.01
        assert by_stage["read"]["records"] == sum(f.summary["records"] for f in done)
        assert abs(rows["share"].sum() - 1) < 1e-9
        parse = by_stage["parse"]
        assert abs(parse["ms_per_record"] - 1000 * parse["seconds"] / parse["records"]) < 1e-6


def test_the_extractor_times_its_stages(tmp_path):
    from warclake.tasks.extract.archive import extract_archive
    from warclake.tasks.extract.config import ExtractConfig
    from warclake.tasks.reporting import run_reports
    from warclake.tasks.sample_dump import make_dump

    (path,) = make_dump(str(tmp_path / "d"), files=1, pages_per_file=40, dump="D", truncate_last=False)
    s = extract_archive(path, "D", str(tmp_path / "lake"), ExtractConfig.from_langs("ja,en", boilerplate="sieve"))
    stages = s["stages"]
    assert list(stages) == ["read", "charset", "language", "parse", "boilerplate", "write"]
    assert stages["read"]["count"] == stages["write"]["count"] == s["records"]
    assert stages["boilerplate"]["count"] == s["documents"] > 0
    assert stages["parse"]["count"] >= s["documents"] and stages["charset"]["count"] >= stages["parse"]["count"]
    assert all(v["seconds"] > 0 for v in stages.values())
    assert sum(v["seconds"] for v in stages.values()) <= s["seconds"]
    table = run_reports(str(tmp_path / "lake"), "D")["stage_seconds"]
    assert table["stage"].to_list()[-1] == "other" and abs(table["seconds"].sum() - s["seconds"]) < 0.01
