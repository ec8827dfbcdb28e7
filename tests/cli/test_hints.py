"""What the project tells a user to type works where they are: the demo's query hint, the
sample dump builder's --help."""
import subprocess
import sys

import pytest

from warclake.cli.main import main


@pytest.mark.usefixtures("prefect_harness")
def test_the_demo_from_a_clone_hints_the_dev_command(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path.parent)   # the hint names the clone's ./dev relative to here
    assert main(["demo", "--dir", str(tmp_path / "demo"), "--files", "1", "--workers", "1", "-q",
                 "--no-report"]) == 0
    out = capsys.readouterr().out
    (hint,) = [line for line in out.splitlines() if "query:" in line]
    dev = hint.split("query:", 1)[1].split()[0]
    assert dev.endswith("dev") and "warclake sql --lake" in hint
    assert subprocess.run([dev, "warclake", "--version"], capture_output=True, text=True).returncode == 0


def test_the_sample_dump_builder_has_a_command_line(tmp_path):
    help_text = subprocess.run([sys.executable, "-m", "warclake.tasks.sample_dump", "--help"],
                               capture_output=True, text=True, check=True).stdout
    assert "usage:" in help_text and "--files" in help_text
    subprocess.run([sys.executable, "-m", "warclake.tasks.sample_dump", str(tmp_path / "d"),
                    "--files", "2", "--pages", "5", "--whole"], check=True, capture_output=True)
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "CC-MAIN-2099-01-00000.warc.gz", "CC-MAIN-2099-01-00001.warc.gz", "warc.paths.gz"]
