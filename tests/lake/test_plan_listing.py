"""A re-run costs a listing, not a request per archive: archives served over HTTP on
127.0.0.1, a lake on moto's S3 server behind the counting proxy (and a local lake), every
request counted. What the listings cannot decide is read, and every reason to redo an
archive (a failed one, a changed input when rechecked, a summary edited since) still redoes it."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from support.http_server import LocalHTTPServer
from support.s3_lake import s3_fixture
from warclake.cli.main import main
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.layout import Lake
from warclake.tasks.lake.plan import plan_dump
from warclake.tasks.sample_dump import make_dump

BUCKET = "warclake-plan"
DUMP = "CC-MAIN-2099-02"
FILES = 6

s3 = s3_fixture(BUCKET)


@pytest.fixture
def served(tmp_path):
    """The sample dump (its last archive truncated: salvaged) served over HTTP."""
    root = tmp_path / "served"
    paths = make_dump(str(root), files=FILES, pages_per_file=3, dump=DUMP, truncate_last=True)
    with LocalHTTPServer(str(root)) as srv:
        yield srv, [f"{srv.url}/{os.path.basename(p)}" for p in paths], paths


def extract(lake: str, inputs: list[str], *extra: str) -> int:
    return main(["extract", "-q", "--workers", "0", "--dump", DUMP, "--lake", lake, "--langs", "ja,en",
                 *extra, *inputs])


def per_archive(reqs, names) -> list:
    """The store's requests that name an archive (its summary, its mark, its files)."""
    return [r for r in reqs if any(n in r.path for n in names)]


def reasons(lake: str, inputs: list[str], **kw) -> dict[str, str]:
    return {p.name: p.reason for p in plan_dump(inputs, DUMP, lake, ExtractConfig.from_langs("ja,en", **kw))}


def test_a_rerun_on_an_s3_lake_asks_nothing_per_archive(s3, served, capsys):
    srv, inputs, paths = served
    proxy, url = s3["proxy"], f"s3://{BUCKET}/rerun"
    names = [os.path.basename(p) for p in paths]
    assert extract(url, inputs) == 0
    capsys.readouterr()

    srv.reset_counts()
    proxy.reset_counts()
    assert extract(url, inputs) == 0
    assert f"{FILES} of {FILES} archives done already" in capsys.readouterr().out
    assert srv.taken() == []                       # no input asked again
    taken = proxy.taken()
    assert per_archive(taken, names) == [], per_archive(taken, names)
    lists = [r for r in taken if r.is_list]
    assert len(lists) == 2, taken                  # the summaries' folder and the marks'
    assert all(r.is_list or r.under("/locks/") for r in taken), taken   # besides: the dump's lock


def test_what_the_listings_cannot_decide_is_read_and_redone_when_it_says_so(s3, served):
    srv, inputs, paths = served
    proxy, fs, url = s3["proxy"], s3["fs"], f"s3://{BUCKET}/undecided"
    names = [os.path.basename(p) for p in paths]
    garbage = os.path.join(os.path.dirname(paths[0]), f"{DUMP}-garbage.warc.gz")
    with open(garbage, "wb") as fh:
        fh.write(b"not an archive at all\n" * 40)
    inputs = inputs + [f"{srv.url}/{os.path.basename(garbage)}"]
    assert extract(url, inputs) == 1               # the garbage archive failed
    lake = Lake(url)
    summaries = f"{BUCKET}/undecided/files/dump={DUMP}"
    marks = f"{BUCKET}/undecided/done/dump={DUMP}"

    fs.rm(f"{marks}/{names[0]}", recursive=True)   # a summary without its mark (a crash between the two)
    edited = lake.read_summary(DUMP, names[1])     # a summary edited since its mark was written
    fs.pipe_file(f"{summaries}/{names[1]}.json", json.dumps(dict(edited, extractor_version="0")).encode())
    fs.invalidate_cache()

    proxy.reset_counts()
    got = reasons(url, inputs)
    assert got == {names[0]: "done", names[1]: "outdated", **{n: "done" for n in names[2:]},
                   os.path.basename(garbage): "failed"}
    reads = [r.path.rsplit("/", 1)[-1] for r in proxy.taken() if r.method == "GET" and not r.is_list]
    assert sorted(reads) == sorted([f"{names[0]}.json", f"{names[1]}.json", f"{os.path.basename(garbage)}.json"])

    assert extract(url, inputs) == 1               # the edited one redone, the failed one tried again
    assert reasons(url, inputs) == {**{n: "done" for n in names}, os.path.basename(garbage): "failed"}


def test_recheck_inputs_asks_each_input_again_over_kept_alive_connections(served, tmp_path, capsys):
    srv, inputs, paths = served
    lake = str(tmp_path / "lake")
    assert extract(lake, inputs) == 0
    shutil.copyfile(paths[1], paths[0])            # the server's file changed under its name

    srv.reset_counts()
    assert reasons(lake, inputs) == {os.path.basename(p): "done" for p in paths}
    assert srv.taken() == []                       # not asked: a listed archive does not change

    got = reasons(lake, inputs, recheck_inputs=True, plan_threads=2)
    assert got == {os.path.basename(p): "changed" if p == paths[0] else "done" for p in paths}
    assert sorted(srv.taken()) == sorted(("HEAD", f"/{os.path.basename(p)}") for p in paths)
    assert srv.connections <= 2                    # one kept-alive connection per thread

    capsys.readouterr()
    assert extract(lake, inputs) == 0
    assert f"{FILES} of {FILES} archives done already" in capsys.readouterr().out
    assert extract(lake, inputs, "--recheck-inputs") == 0
    assert f"{FILES - 1} of {FILES} archives done already" in capsys.readouterr().out
    redone = Lake(lake).read_summary(DUMP, os.path.basename(paths[0]))
    assert redone["input_identity"]["size"] == os.path.getsize(paths[1])


def test_a_local_lake_decides_from_its_marks_and_reads_a_summary_edited_since(tmp_path):
    paths = make_dump(str(tmp_path / "dump"), files=3, pages_per_file=3, dump=DUMP, truncate_last=False)
    names = [os.path.basename(p) for p in paths]
    lake = str(tmp_path / "lake")
    assert extract(lake, paths) == 0
    marks = tmp_path / "lake" / "done" / f"dump={DUMP}"
    assert sorted(os.listdir(marks)) == sorted(names)
    assert reasons(lake, paths) == {n: "done" for n in names}

    summary = tmp_path / "lake" / "files" / f"dump={DUMP}" / f"{names[2]}.json"
    edited = json.loads(summary.read_text())
    summary.write_text(json.dumps(dict(edited, status="failed")))
    assert reasons(lake, paths)[names[2]] == "failed"
    assert reasons(lake, paths, plan_threads=1)[names[2]] == "failed"

    with pytest.raises(ValueError, match="plan_threads"):
        ExtractConfig.from_langs("ja", plan_threads=0)


@pytest.mark.usefixtures("prefect_harness")
def test_the_flow_redoes_a_changed_remote_input_only_when_asked_to_recheck(served, tmp_path):
    from warclake.flows.dump_flow import extract_dump

    srv, inputs, paths = served
    lake = str(tmp_path / "lake")

    def flow(**kw):
        return extract_dump(dump=DUMP, inputs=inputs, lake=lake, langs="ja,en", workers=0, report=False,
                            return_state=True, **kw)

    assert flow().is_completed()
    shutil.copyfile(paths[1], paths[0])
    state = flow()
    assert state.is_completed() and f"{FILES} already done, 0 extracted" in state.message, state.message
    state = flow(recheck_inputs=True, plan_threads=2)
    assert state.is_completed() and f"{FILES - 1} already done, 1 extracted" in state.message, state.message


def test_a_flow_rerun_with_nothing_to_do_on_an_s3_lake_reads_no_archive_for_its_report(s3, served, tmp_path, capsys):
    """The whole run, report included: a remote lake's report is made from every archive's
    files, so a run that extracted nothing leaves the report it finds as it is."""
    srv, inputs, paths = served
    proxy, url = s3["proxy"], f"s3://{BUCKET}/rerun-flow"
    names = [os.path.basename(p) for p in paths]
    report_dir = tmp_path / "report"

    def run() -> int:
        return main(["run", "-q", "--workers", "0", "--dump", DUMP, "--lake", url, "--langs", "ja,en",
                     "--report-dir", str(report_dir), *inputs])

    assert run() == 0
    assert (report_dir / "report.html").exists()
    proxy.reset_counts()
    assert run() == 0
    assert per_archive(proxy.taken(), names) == []
    assert (report_dir / "report.html").exists()
