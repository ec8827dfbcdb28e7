"""The corpus step run inside extraction (``--corpus-signatures``) giving up on an archive
while the archive is read by a watched worker process, whose warnings are not shown: the
user is told, by ``warclake extract`` (a line per archive) and by the ``extract-dump`` flow
run (a warning per archive and its final line), and the corpus stage signs the archives
later. The step gives up here because its outputs' folder cannot be made (a file stands
where it goes): a real fault, in real worker processes."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from warclake.tasks.sample_dump import make_dump

DUMP = "CC-MAIN-2099-01"
SAID = "corpus signatures not written during extraction (its outputs could not be opened: "


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> list[str]:
    return make_dump(str(tmp_path_factory.mktemp("dump")), files=2, pages_per_file=5, dump=DUMP,
                     truncate_last=False)


def blocked_lake(root) -> str:
    """A lake where the step's paragraphs folder cannot be made."""
    os.makedirs(root / "corpus")
    (root / "corpus" / "paragraphs").write_text("a file where a folder goes\n")
    return str(root)


def unblock_and_judge(lake: str) -> dict:
    from warclake.tasks.corpus.checks import check_inputs, dumps_to_process
    from warclake.tasks.corpus.stage import StageOptions, run_stage

    os.unlink(os.path.join(lake, "corpus", "paragraphs"))
    dumps = dumps_to_process(lake, None)
    return run_stage(lake, dumps, check_inputs(lake, dumps), StageOptions())


def test_extract_tells_of_each_archive_the_step_gave_up(archives, tmp_path):
    lake = blocked_lake(tmp_path / "lake")
    done = subprocess.run([sys.executable, "-m", "warclake", "extract", "--dump", DUMP, "--lake", lake,
                           "--corpus-signatures", "-q", *archives], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    told = [ln for ln in done.stderr.splitlines() if SAID in ln]
    assert sorted(ln.split(":")[0] for ln in told) == sorted(os.path.basename(a) for a in archives), done.stderr
    assert all("NotADirectoryError" in ln or "FileExistsError" in ln for ln in told), told
    assert all(ln.endswith("; the corpus stage makes them") for ln in told), told
    assert "2 archives in" in done.stdout and "0 failed" in done.stdout, done.stdout
    assert unblock_and_judge(lake)["signed"] == 2


@pytest.mark.usefixtures("prefect_harness")
def test_the_flow_run_tells_of_each_archive_the_step_gave_up(archives, tmp_path):
    from warclake.flows.dump_flow import extract_dump

    lake = blocked_lake(tmp_path / "lake")
    state = extract_dump(dump=DUMP, inputs=archives, lake=lake, workers=1, report=False, corpus_signatures=True,
                         return_state=True)
    assert state.is_completed(), state.message
    names = sorted(os.path.basename(a) for a in archives)
    assert state.message.endswith(f"; corpus signatures left to the corpus stage: 2 ({', '.join(names)})"), \
        state.message
    assert state.result()["signatures_left"] == names
    assert unblock_and_judge(lake)["signed"] == 2
