"""The flow's report step: a run with nothing new writes nothing again (report, catalogue),
a run that extracted something writes the report anew, and a report cut short is not taken
for a whole one."""
import json
import os
from pathlib import Path

import pytest

from support.lakegen import make_lake
from warclake.flows.report_flow import build_dump_report
from warclake.tasks.reporting import write_report

D = "CC-MAIN-2024-10"


def stamps(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


def test_nothing_new_writes_nothing_something_new_writes_it_again(tmp_path):
    lake = make_lake(tmp_path / "lake", dumps={D: 3}, records=30, salvaged=0, failed=0, running=1)
    out = tmp_path / "report"
    html = Path(build_dump_report(str(lake.root), D, str(out)))
    catalogue = lake.root / "warclake.duckdb"
    written, cat = stamps(out), catalogue.stat().st_mtime_ns
    assert html.is_file() and "report.json" in written

    assert build_dump_report(str(lake.root), D, str(out)) == str(html)
    assert stamps(out) == written and catalogue.stat().st_mtime_ns == cat

    # the running archive finishes: its documents count now, in a new report
    running = next(f for f in lake.files if not f.done)
    more = make_lake(tmp_path / "other", dumps={D: 4}, records=30, salvaged=0, failed=0, running=0)
    src = more.root / "files" / f"dump={D}" / f"{running.warc_file}.json"
    summary = json.loads(src.read_text())
    summary["documents"] = len(running.documents)
    (lake.root / "files" / f"dump={D}" / src.name).write_text(json.dumps(summary))
    build_dump_report(str(lake.root), D, str(out))
    assert stamps(out)["report.html"] != written["report.html"]
    docs = sum(len(f.documents) for f in lake.files)
    assert f"| {docs} |" in (out / "report.md").read_text()
    assert catalogue.stat().st_mtime_ns != cat

    # a file of the report gone: written again
    (out / "encoding_share.png").unlink()
    build_dump_report(str(lake.root), D, str(out))
    assert (out / "encoding_share.png").is_file()


def test_a_report_cut_short_is_written_again(tmp_path, monkeypatch):
    lake = make_lake(tmp_path / "lake", dumps={D: 2}, records=30, salvaged=0, failed=0, running=0)
    out = tmp_path / "report"
    write_report(lake.root, out, D)
    make_lake(tmp_path / "lake", dumps={D: 3}, records=30, seed=5, salvaged=0, failed=0, running=0)

    import warclake.tasks.reporting.write as write

    def killed(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(write, "write_chart", killed)
    with pytest.raises(KeyboardInterrupt):
        write_report(lake.root, out, D, only_if_changed=True)
    assert not (out / "report.json").exists()   # half old, half new: not a whole report
    monkeypatch.undo()
    res = write_report(lake.root, out, D, only_if_changed=True)
    assert res.rebuilt and json.loads((out / "report.json").read_text())["version"] == res.version
    assert not write_report(lake.root, out, D, only_if_changed=True).rebuilt
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]


def test_a_run_with_nothing_to_do_keeps_the_report_and_attaches_it(tmp_path, prefect_harness):
    """Real flow runs of a generated dump: the second run extracts nothing, writes no report
    file, and its run still carries the report's artifacts."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    from warclake.flows.dump_flow import extract_dump
    from warclake.tasks.sample_dump import make_dump

    paths = make_dump(str(tmp_path / "dump"), files=2, pages_per_file=8, dump="TEST-DUMP", truncate_last=False)
    lake, out = tmp_path / "lake", tmp_path / "report"

    def run():
        state = extract_dump(dump="TEST-DUMP", inputs=paths, lake=str(lake), langs="ja,en", workers=0,
                             report=True, report_dir=str(out), return_state=True)
        assert state.is_completed(), state.message
        with get_client(sync_client=True) as client:
            arts = client.read_artifacts(artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])))
        return {a.type for a in arts}

    assert {"markdown", "table"} <= run()
    written = stamps(out)
    assert {"markdown", "table"} <= run()
    assert stamps(out) == written


def test_a_remote_lake_s_whole_report_stands_when_nothing_is_new_and_a_cut_one_does_not(tmp_path, monkeypatch):
    """A remote lake's rollup is made from every archive's files: with nothing new a whole
    report is left without reading the lake; a folder missing a file of its report is not
    whole, so the lake is read (here an S3 address nothing answers: the read fails)."""
    lake = make_lake(tmp_path / "lake", dumps={D: 2}, records=20, salvaged=0, failed=0, running=0)
    out = tmp_path / "report"
    write_report(str(lake.root), out, D)
    written = stamps(out)
    nowhere = "s3://warclake-nowhere/lake"
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    res = write_report(nowhere, out, D, only_if_changed=True, nothing_new=True)
    assert not res.rebuilt and res.html_path == out / "report.html" and stamps(out) == written

    (out / "report.md").unlink()
    with pytest.raises(Exception):  # noqa: B017 - whatever the unreachable store raises
        write_report(nowhere, out, D, only_if_changed=True, nothing_new=True)
