"""tools.measure.stage_profile: the clean path and the C pipeline timed stage by stage."""
import pytest

from tools.measure import stage_profile
from warclake.tasks.sample_dump import make_dump


def test_both_pipelines_read_the_same_pages_and_every_stage_gets_a_row(tmp_path, capsys):
    pytest.importorskip("resiliparse")
    archive = make_dump(str(tmp_path), files=1, pages_per_file=12, truncate_last=False)[0]
    assert stage_profile.main(["--repeat", "1", archive]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CPU: ")
    counts = out.split("pages: warclake ")[1].split(";")[0]     # "11, C pipeline 11"
    ours, theirs = counts.split(", C pipeline ")
    assert ours == theirs and int(ours) > 5
    rows = {(line.split(" | ")[0], line.split(" | ")[1]): float(line.split(" | ")[2])
            for line in out.splitlines() if line.startswith(("| warclake", "| C pipeline"))}
    assert all(("| warclake", s) in rows for s in stage_profile.W_STAGES)
    assert all(("| C pipeline", s) in rows for s in stage_profile.C_STAGES)
    assert rows[("| warclake", "parse+walk")] > 0 and rows[("| C pipeline", "extract")] > 0
