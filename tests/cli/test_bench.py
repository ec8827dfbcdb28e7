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
    b, f = float(base), float(fused)
    rounding = 100 * 0.005 * (1 / b + f / b ** 2) + 0.05   # seconds shown to 0.01, the share to 0.1
    assert abs(float(pct[:-2]) - 100 * (f - b) / b) <= rounding
    assert cells["median"][2] == pct  # one round: its percentage is the median
    # each mode ran as configured, in a lake of its own: the same documents, signatures only when asked
    docs = {m: int(cells[m][5].replace(",", "")) for m in ("all", "all+signatures")}
    assert docs["all"] > 0 and docs["all"] == docs["all+signatures"]
    assert cells["all"][6] == "0 of 2" and cells["all+signatures"][6] == "2 of 2"
    assert err.index("round 1, all:") < err.index("round 1, all+signatures:")


def test_extract_processes_stop_at_a_run_that_fails_with_its_output(tmp_path, capsys):
    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(b"not an archive " * 100)
    with pytest.raises(SystemExit) as stop:
        main(["bench", "--modes", "ja", "--extract-processes", str(junk)])
    assert "mode ja: `warclake extract` exited with 1" in str(stop.value)
    assert "junk.warc.gz: failed" in capsys.readouterr().err  # the extraction's own words
    with pytest.raises(SystemExit, match="extraction modes and resiliparse only"):
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


@pytest.mark.shared_data("warc", "resiliparse", "tests", "data", "warcfile.warc.gz")
def test_the_c_pipeline_row_writes_its_documents_and_every_mode_is_a_ratio_to_it(tmp_path, capsys):
    """A real Common Crawl excerpt through the reference (fastwarc, resiliparse, parquet zstd)
    and warclake in one sitting: the row is there, its parquet holds the pages' text, and the
    ratio column is the reference's CPU seconds over the mode's."""
    import pyarrow.parquet as pq

    from conftest import shared_data
    from warclake.cli import bench_reference
    from warclake.tasks.archive.reader import ArchiveReader

    warc = shared_data("warc", "resiliparse", "tests", "data", "warcfile.warc.gz")
    out = tmp_path / "ref"
    out.mkdir()
    records, docs = bench_reference.run([warc], str(out))
    table = pq.read_table(str(out / "00000.parquet"))
    assert table.num_rows == docs > 10 and table.schema.field("text").type == "string"
    rows = table.to_pylist()
    assert all(r["text"].strip() and r["lang"] and r["charset"] for r in rows)
    # the documents are the archive's 200 HTML responses, by the project's own reader
    with open(warc, "rb") as fh:
        html_200 = {rec.url for rec in ArchiveReader(fh)
                    if rec.rec_type == "response" and rec.http_status == 200
                    and "html" in (rec.http_headers.get("content-type") or "html")}
    assert {r["url"] for r in rows} <= html_200 and len(rows) >= 0.9 * len(html_200)
    assert records == sum(1 for _ in bench_reference_responses(warc))
    # encodings are told per page: the excerpt holds Chinese pages in GB2312/GBK
    assert {r["lang"] for r in rows} >= {"en", "zh"}

    md = tmp_path / "bench.md"
    assert main(["bench", "--modes", "resiliparse,ja,all", "--markdown", str(md), warc]) == 0
    cells = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
             for ln in md.read_text().splitlines() if ln.startswith("| ")}
    assert cells["mode"][:2] == ["MB/s per core", "× resiliparse"]
    speed = {m: float(cells[m][0]) for m in ("resiliparse", "ja", "all")}
    assert cells["resiliparse"][1] == "1.00"
    assert int(cells["resiliparse"][3].replace(",", "")) > 0          # documents per second
    for m in ("ja", "all"):  # within the rounding of the MB/s shown (0.05 each) and of the ratio
        ratio = speed[m] / speed["resiliparse"]
        rounding = ratio * (0.05 / speed[m] + 0.05 / speed["resiliparse"]) + 0.005
        assert float(cells[m][1]) == pytest.approx(ratio, abs=rounding)


def bench_reference_responses(warc: str):
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    with open(warc, "rb") as fh:
        yield from ArchiveIterator(fh, record_types=WarcRecordType.response)


def test_extract_processes_give_each_mode_as_a_ratio_to_the_c_pipeline(tmp_path):
    paths = make_dump(str(tmp_path / "dump"), files=1, pages_per_file=15, dump="B", truncate_last=False)
    md = tmp_path / "bench.md"
    assert main(["bench", "--modes", "ja,resiliparse", "--extract-processes", "--markdown", str(md), *paths]) == 0
    lines = [ln for ln in md.read_text().splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].split("|")[1:-1]]
    assert head == ["round", "ja CPU s", "resiliparse CPU s", "resiliparse adds to ja"]
    modes = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]] for ln in lines}
    assert modes["mode"][3] == "× resiliparse, median (min-max)"
    ja, ref = float(modes["ja"][0]), float(modes["resiliparse"][0])  # CPU s of one round
    assert modes["resiliparse"][3] == "1.00 (1.00-1.00)"
    # within the rounding of the seconds shown (0.005 each) and of the ratio (0.005)
    rounding = ref / ja * (0.005 / ref + 0.005 / ja) + 0.005
    assert float(modes["ja"][3].split()[0]) == pytest.approx(ref / ja, abs=rounding)
    assert int(modes["resiliparse"][6]) > 0  # its documents, counted from its parquet files


def test_start_up_parts_each_process_into_what_it_pays_once_and_its_rate_after(tmp_path):
    """With --start-up each mode also runs on the first archive alone: the second table gives
    what the process pays once and its CPU s per MB beyond the first archive, which add up to
    the run on all archives (one round, so no median stands between them)."""
    paths = make_dump(str(tmp_path / "dump"), files=3, pages_per_file=40, dump="B", truncate_last=False)
    md = tmp_path / "bench.md"
    assert main(["bench", "--modes", "ja,resiliparse", "--extract-processes", "--start-up",
                 "--markdown", str(md), *paths]) == 0
    text = md.read_text()
    rows = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
            for ln in text.splitlines() if ln.startswith("| ")}
    assert rows["mode"][:3] == ["once a process, CPU s", "CPU s per MB beyond the first input",
                                "MB/s per core beyond it"]
    mb = sum(os.path.getsize(p) for p in paths) / 1e6
    # round 1 of the first table: the CPU s of ja, then of resiliparse, on all archives
    cpu = [float(c) for c in next(ln for ln in text.splitlines() if ln.startswith("| 1 |")).split("|")[2:4]]
    for mode, all_inputs in zip(("ja", "resiliparse"), cpu):
        once, rate = float(rows[mode][0]), float(rows[mode][1])
        # within the rounding of the figures shown
        assert once + rate * mb == pytest.approx(all_inputs, abs=0.011 + 0.00005 * mb)
    assert rows["resiliparse"][3] in ("1.00 (1.00-1.00)", "-")   # the reference against itself


def test_start_up_needs_two_inputs_and_whole_processes(tmp_path):
    paths = make_dump(str(tmp_path / "dump"), files=1, pages_per_file=5, dump="B", truncate_last=False)
    with pytest.raises(SystemExit, match="two inputs or more"):
        main(["bench", "--modes", "ja", "--extract-processes", "--start-up", *paths])
    with pytest.raises(SystemExit, match="--extract-processes only"):
        main(["bench", "--modes", "ja", "--start-up", *paths])
