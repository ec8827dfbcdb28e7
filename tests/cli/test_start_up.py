"""What a command loads before it works: every ``warclake extract`` process (one per run,
and each `bench --extract-processes` row) pays for its imports, so the reporting stack
(polars, matplotlib) is loaded only by the commands that report."""
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
    assert "warclake.cli.report" in parsed  # the report command is registered all the same
    reporting = loaded_after("import warclake.tasks.reporting")
    assert "polars" in reporting  # what the lazy import spares the other commands
