"""The garbage collector at an extraction process's start-up: what start-up made is frozen, the
young are collected less often, cycles still are; in a worker and with ``--workers 0`` alike."""
import json
import subprocess
import sys

from warclake.tasks.sample_dump import make_dump

REPORT = ("import gc, json\n"
          "print(json.dumps({'frozen': gc.get_freeze_count(), 'threshold': gc.get_threshold()}))\n")


def run_python(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_start_up_is_frozen_and_cycles_are_still_collected():
    state = run_python(
        "import gc, json, weakref\n"
        "from warclake.tasks.runtime import collector\n"
        "before = gc.get_threshold()\n"
        "collector.keep_off_the_hot_path(); frozen = gc.get_freeze_count()\n"
        "collector.keep_off_the_hot_path()\n"  # once per process: nothing more is frozen
        "class Node: pass\n"
        "a, b = Node(), Node(); a.other, b.other = b, a; gone = weakref.ref(a); del a, b\n"
        "keep = [[] for _ in range(3 * collector.YOUNG_THRESHOLD)]\n"   # allocations alone collect it
        "print(json.dumps({'before': before, 'after': gc.get_threshold(), 'frozen': frozen,\n"
        "                  'again': gc.get_freeze_count(), 'cycle_freed': gone() is None}))\n")
    assert state["before"][0] == 700 and state["after"] == [10_000, *state["before"][1:]]
    assert state["frozen"] > 1000 and state["again"] == state["frozen"]
    assert state["cycle_freed"]


def test_workers_and_workers_0_settle_the_collector_before_their_first_archive(tmp_path):
    path = make_dump(str(tmp_path / "dump"), files=1, pages_per_file=5, dump="G", truncate_last=False)[0]
    inline = run_python(
        "from warclake.tasks.extract.config import ExtractConfig\n"
        "from warclake.tasks.runtime.supervisor import supervisor\n"
        f"s = supervisor().extract({path!r}, 'G', {str(tmp_path / 'lake0')!r}, ExtractConfig.from_langs('en'), 0)\n"
        "assert s['status'] == 'complete'\n" + REPORT)
    assert inline["frozen"] > 1000 and inline["threshold"][0] == 10_000
    worker = run_python(
        "import os\n"
        "from warclake.tasks.extract.config import ExtractConfig\n"
        "from warclake.tasks.runtime import supervisor\n"
        "supervisor._set_up(os.getppid(), ExtractConfig.from_langs('en'))\n" + REPORT)
    assert worker["frozen"] > 1000 and worker["threshold"][0] == 10_000


def test_an_extraction_process_with_the_collector_settled_exits_quietly(tmp_path):
    """What start-up froze is handed back at exit: the interpreter's last collection frees it,
    and no extension module reports instances left at exit (DuckDB's would)."""
    path = make_dump(str(tmp_path / "dump"), files=1, pages_per_file=5, dump="G", truncate_last=False)[0]
    proc = subprocess.run([sys.executable, "-m", "warclake", "extract", "-q", "--workers", "0", "--dump", "G",
                           "--lake", str(tmp_path / "lake"), "--langs", "en", path],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr and "1 archives" in proc.stdout + proc.stderr
