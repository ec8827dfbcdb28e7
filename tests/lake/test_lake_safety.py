"""Users running things at the same time, or killing them, cannot corrupt the lake: one run
per dump and lake, no run removes another's temporaries, no temporary outlives the next run."""
import errno
import json
import logging
import os
import subprocess
import sys

import pytest

from support.lakegen import make_lake
from warclake.cli.main import main
from warclake.tasks.extract import archive as extract_module
from warclake.tasks.extract.config import ExtractConfig
from warclake.tasks.lake.catalog import build_catalog
from warclake.tasks.lake.dump_lock import DumpLock, DumpLocked
from warclake.tasks.lake.layout import Lake
from warclake.tasks.lake.owners import host
from warclake.tasks.reporting import write_report
from warclake.tasks.sample_dump import make_dump


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def write_lock(lake, dump: str, **holder) -> str:
    path = os.path.join(lake, "locks", f"dump={dump}.lock")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump({"host": host(), "started": "2026-01-01T00:00:00+00:00", **holder}, fh)
    return path


def test_a_second_writer_of_a_dump_is_refused_naming_the_holder(tmp_path):
    with DumpLock(str(tmp_path), "D"):
        with pytest.raises(DumpLocked) as err:
            DumpLock(str(tmp_path), "D").acquire()
        assert f"pid {os.getpid()} on {host()}" in str(err.value)
        DumpLock(str(tmp_path), "OTHER").acquire().release()   # other dumps are not held up
    DumpLock(str(tmp_path), "D").acquire().release()           # released at the end
    assert not os.path.exists(os.path.join(tmp_path, "locks", "dump=D.lock"))


def test_the_lock_of_a_dead_run_is_taken_over_with_a_warning(tmp_path, caplog):
    write_lock(str(tmp_path), "D", pid=dead_pid())
    with caplog.at_level(logging.WARNING):
        with DumpLock(str(tmp_path), "D") as lock:
            assert lock.held
    assert "taking over" in caplog.text


def test_a_lock_of_another_host_is_not_taken_over(tmp_path):
    path = write_lock(str(tmp_path), "D", pid=dead_pid())
    with open(path) as fh:
        holder = json.load(fh)
    with open(path, "w") as fh:
        json.dump({**holder, "host": "elsewhere"}, fh)
    with pytest.raises(DumpLocked, match="on elsewhere"):
        DumpLock(str(tmp_path), "D").acquire()


def test_extract_while_another_run_holds_the_dump_fails_at_once_with_one_line(tmp_path, capsys):
    archive = make_dump(str(tmp_path / "d"), files=1, pages_per_file=3, truncate_last=False)[0]
    lake = str(tmp_path / "lake")
    write_lock(lake, "D", pid=os.getpid())   # a live holder
    rc = main(["extract", "-q", "--dump", "D", "--lake", lake, archive])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "being written" in err and f"pid {os.getpid()}" in err
    assert not os.path.exists(os.path.join(lake, "files"))   # nothing was extracted


def test_cleaning_leaves_live_runs_temporaries_and_removes_dead_ones(tmp_path):
    lake = Lake(str(tmp_path))
    live = lake.tmp_file("documents", "D", "a.warc.gz")          # this process: live
    folder = os.path.dirname(live)
    dead = os.path.join(folder, f".b.warc.gz.{host()}~{dead_pid()}~0123456789ab.tmp")
    untagged = os.path.join(folder, ".c.warc.gz.0123456789ab.tmp")  # older versions' names
    catalogue = [os.path.join(tmp_path, f".warclake.duckdb.{host()}~{dead_pid()}~89abcdef0123.tmp{s}")
                 for s in ("", ".wal")]
    for p in (live, dead, untagged, *catalogue):
        open(p, "wb").close()
    assert lake.clean_stale_tmp("D") == 4
    assert os.path.exists(live)
    assert not any(os.path.exists(p) for p in (dead, untagged, *catalogue))


def test_an_extraction_removes_what_a_killed_corpus_step_inside_it_left(tmp_path):
    """The per-archive corpus step run inside extraction writes its outputs and its state file
    under temporary names beside their places: the folders extraction's cleaning looks into
    are the ones the step writes (one home for their names: the corpus layout)."""
    from warclake.tasks.corpus.signals.archive_step import STEP, ArchiveSigner
    from warclake.tasks.corpus.storage.layout import CorpusLayout

    signer = ArchiveSigner(str(tmp_path), "D", "a.warc.gz")
    folders = {os.path.dirname(t) for t in signer.tmps}
    folders.add(os.path.dirname(CorpusLayout(str(tmp_path)).state_path(STEP, "D", "a.warc.gz")))
    signer.discard()
    dead = [os.path.join(f, f".a.warc.gz.{host()}~{dead_pid()}~0123456789ab.tmp") for f in sorted(folders)]
    for p in dead:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").close()
    assert len(dead) == 3 and Lake(str(tmp_path)).clean_stale_tmp("D") == 3
    assert not any(os.path.exists(p) for p in dead)


def test_a_temporary_whose_pid_was_reused_by_another_process_counts_as_abandoned(tmp_path):
    lake = Lake(str(tmp_path))
    live = lake.tmp_file("documents", "D", "a.warc.gz")
    folder = os.path.dirname(live)
    # this process's pid with another start mark: the writer died and its pid came back
    reused = os.path.join(folder, f".b.warc.gz.{host()}~{os.getpid()}+1~0123456789ab.tmp")
    for p in (live, reused):
        open(p, "wb").close()
    assert lake.clean_stale_tmp("D") == 1
    assert os.path.exists(live) and not os.path.exists(reused)


def test_a_catalogue_build_removes_what_a_killed_build_left(tmp_path):
    make_dump(str(tmp_path / "d"), files=1, pages_per_file=3, truncate_last=False)
    left = [tmp_path / f".warclake.duckdb.{host()}~{dead_pid()}~0123456789ab.tmp{s}" for s in ("", ".wal")]
    for p in left:
        p.write_bytes(b"half a catalogue")
    build_catalog(str(tmp_path))
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".wal"))] == []


def test_a_full_disk_while_opening_the_writers_leaves_no_temporary(tmp_path, monkeypatch):
    archive = make_dump(str(tmp_path / "d"), files=1, pages_per_file=3, truncate_last=False)[0]
    real = extract_module.pq.ParquetWriter
    opened = []

    def second_fails(path, *a, **kw):
        opened.append(path)
        if len(opened) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, *a, **kw)

    monkeypatch.setattr(extract_module.pq, "ParquetWriter", second_fails)
    with pytest.raises(OSError, match="No space"):
        extract_module.extract_archive(archive, "D", str(tmp_path / "lake"), ExtractConfig())
    left = [n for _, _, names in os.walk(tmp_path / "lake") for n in names]
    assert left == []


def test_a_remote_lakes_local_temporaries_of_dead_runs_are_cleaned(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lake = Lake("memory://safety-lake")
    live = lake.tmp_file("documents", "D", "a.warc.gz")
    dead = os.path.join(os.path.dirname(live), f".b.warc.gz.{host()}~{dead_pid()}~0123456789ab.tmp")
    for p in (live, dead):
        open(p, "wb").close()
    assert lake.clean_stale_tmp("D") == 1
    assert os.path.exists(live) and not os.path.exists(dead)


def hidden_files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_report_removes_what_a_killed_report_left_never_a_running_ones(tmp_path):
    lake = make_lake(tmp_path / "lake", dumps={"CC-MAIN-2024-10": 2}, records=20)
    out = tmp_path / "report"
    out.mkdir()
    tag = f"{host()}~{dead_pid()}~0123456789ab"
    dead = [out / f".report.html.{tag}.tmp", out / f".size_ratio.png.{tag}.tmp",
            out / ".report.md.tmp"]  # the last: the fixed name of older versions
    for p in dead:
        p.write_text("half a file")
    (out / ".notes.tmp").write_text("a user's own file: not a report's")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) as other:
        live = out / f".report.html.{host()}~{other.pid}~89abcdef0123.tmp"
        live.write_text("another report's page, still being written")
        res = write_report(lake.root, out)
        assert hidden_files(out) == [".notes.tmp", live.name]
        assert live.read_text() == "another report's page, still being written"
        assert res.html_path.read_text().rstrip().endswith("</html>")
        other.kill()
        other.wait()
    write_report(lake.root, out, charts=False)  # the next report: that writer is gone now
    assert hidden_files(out) == [".notes.tmp"]


def test_two_reports_into_one_folder_at_once_both_finish_whole(tmp_path):
    import polars as pl

    lake = make_lake(tmp_path / "lake", dumps={"CC-MAIN-2024-10": 2, "CC-MAIN-2024-18": 1}, records=20)
    out = tmp_path / "report"
    script = ("import sys\nfrom warclake.tasks.reporting import write_report\n"
              "for _ in range(10):\n    write_report(sys.argv[1], sys.argv[2], charts=False)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(lake.root), str(out)],
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    html, md = (out / "report.html").read_text(), (out / "report.md").read_text()
    assert html.rstrip().endswith("</html>") and html.count("<html") == 1
    assert md.startswith("# warclake report") and md.count("# warclake report") == 1
    alone = write_report(lake.root, tmp_path / "alone", charts=False)
    for name, df in alone.tables.items():
        assert pl.read_csv(out / f"{name}.csv").shape == df.shape, name
    assert hidden_files(out) == []
