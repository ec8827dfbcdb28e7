"""What a user sees on bad input: one clear line on stderr, a non-zero exit, nothing written
where it should not be, and never a traceback."""
import os
import subprocess
from contextlib import contextmanager

import pytest

from support.lakegen import make_lake
from warclake.cli.main import main
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump


def cli(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    return make_dump(str(d), files=1, pages_per_file=6, dump="D", truncate_last=False)[0]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    return make_lake(tmp_path_factory.mktemp("lake") / "lake").root


def one_error(err: str, *words: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warclake: error: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_bare_command_prints_help_and_version_is_known(capsys):
    rc, out, _ = cli(capsys)
    assert rc == 0 and "extract" in out and "report" in out and "usage:" in out
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("warclake ")


@pytest.mark.parametrize("spec, words", [
    ("nope.warc.gz", ["'nope.warc.gz'", "does not exist"]),
    ("nope/*.warc.gz", ["no file matches"]),
    ("missing/warc.paths.gz", ["does not exist"]),
])
def test_inputs_that_are_not_there_are_named(tmp_path, capsys, spec, words):
    rc, _, err = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / "lake", spec)
    assert rc == 2
    one_error(err, *words)


def test_a_folder_without_archives_is_named(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    rc, _, err = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / "lake", tmp_path / "empty")
    assert rc == 2
    one_error(err, "no archives in folder")


@pytest.mark.parametrize("dump", ["", "../../x", "a/b", ".hidden", "x..y"])
def test_dump_names_that_are_not_a_folder_name_are_refused(tmp_path, capsys, archive, dump):
    with pytest.raises(SystemExit) as e:
        main(["extract", "--dump", dump, "--lake", str(tmp_path / "lake"), archive])
    assert e.value.code == 2
    assert "invalid dump name" in capsys.readouterr().err
    assert not (tmp_path / "lake").exists() and not (tmp_path / "x").exists()


def test_common_crawl_and_simple_dump_names_pass(tmp_path, capsys, archive):
    for dump in ("CC-MAIN-2024-22", "test_1", "news.2024"):
        rc, out, _ = cli(capsys, "extract", "--dump", dump, "--lake", tmp_path / "lake", archive)
        assert rc == 0 and "complete" in out
    assert Lake(str(tmp_path / "lake")).dumps() == ["CC-MAIN-2024-22", "news.2024", "test_1"]


@pytest.mark.parametrize("langs, words", [("", ["no target language"]), (" , ", ["no target language"]),
                                          ("ja,xx", ["unknown target language", "xx"])])
def test_bad_target_languages(tmp_path, capsys, archive, langs, words):
    rc, _, err = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / "lake", "--langs", langs, archive)
    assert rc == 2
    one_error(err, *words)


@pytest.mark.parametrize("option, value, words", [("--min-lang-score", "1.5", ["min_lang_score", "between 0 and 1"]),
                                                   ("--min-chars", "-1", ["min_chars", "negative"])])
def test_bad_language_minimums(tmp_path, capsys, archive, option, value, words):
    rc, _, err = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / "lake", "--langs", "all",
                     option, value, archive)
    assert rc == 2
    one_error(err, *words)


def test_language_minimums_asked_for_on_the_command_line(tmp_path, capsys, archive):
    """--langs all keeps every page; a minimum the user asks for turns pages below it into
    lang_undetermined, counted apart from pages in another language."""
    import duckdb
    counts = {}
    for name, extra in (("kept", []), ("strict", ["--min-chars", "1000000"])):
        rc, _, _ = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / name, "--langs", "all",
                       "-q", *extra, archive)
        assert rc == 0
        counts[name] = dict(duckdb.sql(
            f"SELECT outcome, count(*) FROM read_parquet('{tmp_path / name}/ledger/*/*.parquet') "
            "GROUP BY 1").fetchall())
    assert counts["kept"].get("kept", 0) > 0
    assert "lang_undetermined" not in counts["kept"] and "lang_rejected" not in counts["kept"]
    assert counts["strict"].get("kept", 0) == 0
    assert counts["strict"]["lang_undetermined"] == counts["kept"]["kept"]


def test_a_lake_that_is_a_file_or_cannot_be_made_fails_once_before_any_work(tmp_path, capsys, archive):
    f = tmp_path / "lake-file"
    f.write_text("not a folder")
    for command in ("extract", "run"):  # run checks before Prefect starts
        rc, out, err = cli(capsys, command, "--dump", "D", "--lake", f, archive)
        assert rc == 2 and out == ""
        one_error(err, "is a file, not a folder")
        rc, out, err = cli(capsys, command, "--dump", "D", "--lake", f / "sub", archive)
        assert rc == 2 and out == ""
        one_error(err, "is not writable")


def test_an_empty_file_fails_and_is_never_done(tmp_path, capsys):
    empty = tmp_path / "download.warc.gz"
    empty.write_bytes(b"")
    for _ in range(2):  # the second run tries again: a failed archive is not done
        rc, out, _ = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / "lake", empty)
        assert rc == 1 and "download.warc.gz: failed" in out and "0 bytes" in out
    assert Lake(str(tmp_path / "lake")).read_summary("D", "download.warc.gz")["status"] == "failed"


def test_two_inputs_with_one_name_are_refused(tmp_path, capsys, archive):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "x.warc.gz").write_bytes(open(archive, "rb").read())
    rc, _, err = cli(capsys, "extract", "--dump", "D", "--lake", tmp_path / "lake",
                     tmp_path / "a" / "x.warc.gz", tmp_path / "b" / "x.warc.gz")
    assert rc == 2
    one_error(err, "share archive names", "x.warc.gz")


@pytest.mark.parametrize("command", [["sql", "-c", "SELECT 1"], ["report"]])
def test_reading_a_lake_that_is_not_there_creates_nothing(tmp_path, capsys, command):
    where = tmp_path / "no-lake"
    rc, _, err = cli(capsys, command[0], "--lake", where, *command[1:])
    assert rc == 2
    one_error(err, "no lake at", str(where))
    assert not where.exists()


def test_report_of_an_unknown_dump_names_the_dumps_there_are(lake, tmp_path, capsys):
    rc, _, err = cli(capsys, "report", "--lake", lake, "--dump", "CC-MAIN-1999-01", "--out", tmp_path / "r")
    assert rc == 2
    one_error(err, "no dump 'CC-MAIN-1999-01'", "CC-MAIN-2023-50", "CC-MAIN-2024-10")
    assert not (tmp_path / "r").exists()


def test_an_sql_error_is_one_line(lake, capsys):
    rc, out, err = cli(capsys, "sql", "--lake", lake, "-c", "SELECT nope FROM documents")
    assert rc == 2 and out == ""
    one_error(err, "nope")
    assert os.path.isfile(os.path.join(lake, "warclake.duckdb"))


@contextmanager
def read_only(folder):
    """``folder`` really read-only for this process: a read-only bind mount when running as
    root (which ignores permission bits), permission bits otherwise."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    else:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if p.is_dir()}
        for p in modes:
            p.chmod(0o555)
        try:
            yield
        finally:
            for p, m in modes.items():
                p.chmod(m)


def test_report_and_sql_on_a_read_only_lake(tmp_path, capsys):
    lake = make_lake(tmp_path / "lake").root
    with read_only(lake):
        with pytest.raises(OSError):
            open(os.path.join(lake, "probe"), "w")
        rc, out, err = cli(capsys, "report", "--lake", lake, "--out", tmp_path / "r", "--no-charts")
        assert rc == 0 and "catalogue not rebuilt" in err
        assert (tmp_path / "r" / "report.html").is_file()
        rc, out, err = cli(capsys, "sql", "--lake", lake, "--csv", "-c", "SELECT count(*) AS n FROM files")
        assert rc == 0 and out.split()[0] == "n" and int(out.split()[1]) > 0
    assert not os.path.exists(os.path.join(lake, "warclake.duckdb"))
