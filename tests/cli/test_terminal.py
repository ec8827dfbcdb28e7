"""`warclake run` on a terminal (a real pseudo-terminal): a planning line, byte progress
while archives are read, log lines whole above the bars, one line per archive naming it."""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

from warclake.tasks.sample_dump import make_dump

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) ")


def run_on_a_terminal(args, env=None) -> tuple[int, list[str]]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "warclake.cli.main", *args], stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True, env=env)
    os.close(slave)
    buf = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # the terminal's other side closed: the run is over
            break
        if not chunk:
            break
        buf += chunk
    os.close(master)
    proc.wait(60)
    screen = ANSI.sub("", buf.decode("utf-8", "replace"))
    return proc.returncode, [seg for seg in re.split(r"[\r\n]+", screen) if seg.strip()]


def test_run_on_a_terminal_reads_well(tmp_path):
    dump_dir = tmp_path / "dump"
    make_dump(str(dump_dir), files=4, pages_per_file=1000, dump="TEST-DUMP", truncate_last=True)
    env = {**os.environ, "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120"}
    env.pop("PREFECT_API_URL", None)
    rc, lines = run_on_a_terminal(["run", "--dump", "TEST-DUMP", "--lake", str(tmp_path / "lake"),
                                   "--workers", "2", "--no-report", "--langs", "ja,en", str(dump_dir)], env)
    assert rc == 0, lines[-20:]
    assert any(line.startswith("planning the run") for line in lines)
    assert not any("0/0 archives" in line for line in lines)
    # bytes counted while the first archives are read, not only when they finish (an
    # archive of 1,000 pages takes several of the parent's 0.25 s looks at its worker)
    first = [line for line in lines if line.startswith("0/4 archives")]
    assert any(re.search(r" ([1-9]\d?)% ", line) for line in first), first
    # log lines are whole lines (never glued to a bar), and the bars hide Prefect's chatter
    for line in lines:
        if re.search(r" (INFO|WARNING|ERROR) ", line):
            assert TIMESTAMP.match(line), line
    assert not any("Finished in state Completed()" in line for line in lines)
    # one line per archive, naming it (the damaged one with where and what)
    per_archive = [line for line in lines if re.match(r"TEST-DUMP-0000\d\.warc\.gz: ", line)]
    assert len(per_archive) == 4, per_archive
    (damaged,) = [line for line in per_archive if "salvaged" in line]
    assert damaged.startswith("TEST-DUMP-00003.warc.gz: salvaged, ") and "(damaged at " in damaged
    assert any(line.startswith("TEST-DUMP: 4 archives, 0 already done, 4 extracted") for line in lines)
