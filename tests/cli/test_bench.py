"""``warclake bench --modes``: one table, a row per mode, numbers a user can compare."""
import os
import re

import pytest

from conftest import REPO

from warclake.cli.main import main
from warclake.tasks.sample_dump import make_dump


def test_modes_give_one_row_each_with_the_read_ceiling(tmp_path, capsys):
    paths = make_dump(str(tmp_path / "dump"), files=2, pages_per_file=20, dump="B", truncate_last=False)
    table = tmp_path / "bench.md"
    assert main(["bench", "--modes", "read,ja,all+sieve", "--profile", "--markdown", str(table), *paths]) == 0
    text = table.read_text()
    assert text.strip() in capsys.readouterr().out  # printed as written
    rows = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
            for ln in text.splitlines() if ln.startswith("| ") and ln.split("|")[1].strip() in
            ("read", "ja", "all+sieve")}
    assert set(rows) == {"read", "ja", "all+sieve"}
    records = {m: int(r[1].replace(",", "")) for m, r in rows.items()}
    assert all(n > 0 for n in records.values())
    assert float(rows["all+sieve"][2].replace(",", "")) > 0          # documents per second
    assert "| boilerplate |" in text and "| language (" in text   # lingua, or the routing and first pass before it


@pytest.mark.slow
def test_flow_workers_report_fixed_cost_orchestrator_cpu_and_speed_up(tmp_path, capsys):
    paths = make_dump(str(tmp_path / "dump"), files=3, pages_per_file=10, dump="B", truncate_last=False)
    assert main(["bench", "--flow-workers", "1,2", *paths]) == 0
    out = capsys.readouterr().out
    fixed = re.search(r"fixed cost of a run .*: ([\d.]+)s", out)
    assert fixed and float(fixed.group(1)) > 0
    per_archive = re.findall(r"workers=(\d): wall ([\d.]+)s, orchestrating process (\d+) ms CPU per archive"
                             r"(, temporary API server (\d+) ms CPU per archive)? \(Completed\)", out)
    assert [w for w, *_ in per_archive] == ["1", "2"]
    if os.path.isdir("/proc"):  # the API server's CPU is read from /proc
        assert all(server for *_, server in per_archive)
    assert re.search(r"speed-up with 2 worker processes vs 1: [\d.]+x; without the fixed cost: ([\d.]+x|n/a)", out)


def test_the_reader_row_reads_payloads_as_extraction_does(tmp_path):
    import gzip
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from warclake.cli.bench import measure_mode, read_as_extraction_does
    from warclake.tasks.archive.reader import ArchiveReader

    page = b"<html><body><p>" + b"coded payload " * 500 + b"</p></body></html>"
    path = tmp_path / "coded.warc.gz"
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for coding, body in (("gzip", gzip.compress(page)), ("br", b"not brotli at all \x00\x01"), (None, page)):
            hdrs = [("Content-Type", "text/html")] + ([("Content-Encoding", coding)] if coding else [])
            http = StatusAndHeaders("200 OK", hdrs, protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(f"http://x.example/{coding}", "response",
                                                payload=io.BytesIO(body), http_headers=http))
    with open(path, "rb") as fh:
        sizes = [read_as_extraction_does(rec) for rec in ArchiveReader(fh)]
    # the gzip body is inflated as extraction inflates it; one that does not decode reads nothing
    assert sizes == [len(page), 0, len(page)]
    row = measure_mode("reader", [str(path)], False)
    assert row["records"] == 3 and row["cpu"] > 0


def test_extract_processes_measure_each_mode_as_a_whole_extraction_and_what_it_adds(tmp_path, capsys):
    paths = make_dump(str(tmp_path / "dump"), files=2, pages_per_file=10, dump="B", truncate_last=False)
    table = tmp_path / "bench.md"
    assert main(["bench", "--modes", "all,all+signatures", "--extract-processes", "--repeat", "1",
                 "--markdown", str(table), *paths]) == 0
    out, err = capsys.readouterr()
    text = table.read_text()
    assert text.strip() in out  # printed as written
    cells = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
             for ln in text.splitlines() if ln.startswith("| ")}
    # one row per round and the medians: both modes' CPU seconds, then what signatures add
    assert cells["round"] == ["all CPU s", "all+signatures CPU s", "all+signatures adds to all"]
    assert set(cells) >= {"1", "median"} and "2" not in cells
    base, fused, pct = cells["1"]
    assert float(base) > 0 and float(fused) > 0
    assert pct.endswith(" %")  # of the unrounded seconds: within rounding of the shown ones
    assert abs(float(pct[:-2]) - 100 * (float(fused) - float(base)) / float(base)) < 0.5
    assert cells["median"][2] == pct  # one round: its percentage is the median
    # each mode ran as configured, in a lake of its own: the same documents, signatures only when asked
    docs = {m: int(cells[m][4].replace(",", "")) for m in ("all", "all+signatures")}
    assert docs["all"] > 0 and docs["all"] == docs["all+signatures"]
    assert cells["all"][5] == "0 of 2" and cells["all+signatures"][5] == "2 of 2"
    assert err.index("round 1, all:") < err.index("round 1, all+signatures:")


def test_extract_processes_stop_at_a_run_that_fails_with_its_output(tmp_path, capsys):
    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(b"not an archive " * 100)
    with pytest.raises(SystemExit) as stop:
        main(["bench", "--modes", "ja", "--extract-processes", str(junk)])
    assert "mode ja: `warclake extract` exited with 1" in str(stop.value)
    assert "junk.warc.gz: failed" in capsys.readouterr().err  # the extraction's own words
    with pytest.raises(SystemExit, match="extraction modes only"):
        main(["bench", "--modes", "read,ja", "--extract-processes", str(junk)])


def test_every_stage_of_the_profile_names_a_place_there_is():
    """The profile gives a function's time to the first stage whose fragment is in its file
    name: a fragment naming a module that moved would leave its time to no stage."""
    from warclake.cli.bench import STAGES

    ours = [frag for frag, _ in STAGES if frag.startswith("tasks/")]
    assert ours
    for frag in ours:
        path = os.path.join(REPO, frag)
        assert os.path.isdir(path) or os.path.isfile(path + ".py"), frag
