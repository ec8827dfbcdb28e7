"""What a command loads before it works: every ``warclake extract`` process (one per run,
and each `bench --extract-processes` row) pays for its imports, so the reporting stack
(polars, matplotlib), DuckDB and the terminal's progress bars (rich) are loaded only by
the commands that use them."""
import subprocess
import sys


def loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split())


def test_the_command_line_loads_no_reporting_stack_until_a_report_is_asked_for():
    parsed = loaded_after("from warclake.cli.main import build_parser\n"
                          "build_parser().parse_args(['extract', '--dump', 'D', '--lake', 'L', 'a.warc.gz'])")
    assert "polars" not in parsed and "matplotlib" not in parsed
    assert "duckdb" not in parsed and "rich" not in parsed
    assert "warclake.cli.report" in parsed  # the report command is registered all the same
    reporting = loaded_after("import warclake.tasks.reporting")
    assert "polars" in reporting  # what the lazy import spares the other commands


def test_an_extraction_loads_neither_duckdb_nor_prefect(tmp_path):
    from warclake.tasks.sample_dump import make_dump

    make_dump(str(tmp_path / "dump"), files=1, pages_per_file=4, dump="TEST-DUMP")
    loaded = loaded_after("from warclake.cli.main import main\n"
                          f"assert main(['extract', '--dump', 'TEST-DUMP', '--lake', {str(tmp_path / 'lake')!r}, "
                          f"'--workers', '0', '-q', {str(tmp_path / 'dump')!r}]) == 0")
    assert "duckdb" not in loaded and "prefect" not in loaded and "rich" not in loaded
    assert "warclake.tasks.extract.archive" in loaded   # it did extract
