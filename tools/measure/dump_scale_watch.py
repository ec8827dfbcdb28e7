"""What the dump-scale benchmark (tools/measure/dump_scale.py) reads while a command runs and
after: the memory and CPU of the command's process tree by role (the flow's own process, the
Prefect API server it starts, extraction workers), sampled from /proc (Linux), and the
run's phases from the timestamps of its log lines."""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
ROLES = ("flow", "server", "workers")


def _stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds, RSS bytes) of a live process, None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(f[1]), (int(f[11]) + int(f[12])) / TICK, int(f[21]) * PAGE


def _hwm(pid: int) -> int:
    """Peak RSS (VmHWM) of a live process in bytes, 0 if gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Sample:
    t: float                       # time.time()
    rss: dict[str, int]            # role -> RSS bytes summed over its live processes
    cpu: dict[str, float]          # role -> CPU seconds, the dead processes' last figures kept


@dataclass
class TreeWatch:
    """Samples the process tree under ``root`` every ``every`` seconds in a thread; a process
    is the ``server`` when it or an ancestor below the root runs ``prefect server``, the
    ``flow`` when it is the root, else a ``workers`` process. ``extra`` maps more roles to
    pids watched apart (an API server or an S3 server started by the benchmark)."""

    root: int
    every: float = 0.25
    extra: dict[str, int] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    peak_hwm: dict[str, int] = field(default_factory=dict)   # role -> the largest VmHWM of one of its processes
    _roles: dict[int, str] = field(default_factory=dict)
    _cpu: dict[int, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> TreeWatch:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self) -> None:
        stats = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                st = _stat(int(entry))
                if st is not None:
                    stats[int(entry)] = st
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        rss = dict.fromkeys(ROLES, 0) | dict.fromkeys(self.extra, 0)
        tops = [(self.root, "flow")] + [(pid, role) for role, pid in self.extra.items()]
        for top, top_role in tops:
            stack = [(top, top_role)] if top in stats else []
            while stack:
                pid, role = stack.pop()
                # a child is looked at again until it is the server: just after its fork it
                # still shows its parent's command line
                if self._roles.get(pid) in (None, "workers"):
                    if role == "flow" and pid != top:
                        cmd = _cmdline(pid)
                        role = "server" if "prefect server" in cmd or "prefect.server" in cmd else "workers"
                    self._roles[pid] = role
                role = self._roles[pid]
                rss[role] = rss.get(role, 0) + stats[pid][2]
                self._cpu[pid] = stats[pid][1]
                self.peak_hwm[role] = max(self.peak_hwm.get(role, 0), _hwm(pid))
                stack.extend((c, role) for c in children.get(pid, ()))
        cpu: dict[str, float] = {}
        for pid, c in self._cpu.items():
            cpu[self._roles[pid]] = cpu.get(self._roles[pid], 0.0) + c
        self.samples.append(Sample(time.time(), rss, cpu))

    def peak_rss(self, role: str, start: float = 0.0, end: float = float("inf")) -> int:
        """The largest sampled RSS of ``role`` between two times (the whole watch: also
        the largest VmHWM any one of its processes reached)."""
        sampled = max((s.rss.get(role, 0) for s in self.samples if start <= s.t <= end), default=0)
        if start == 0.0 and end == float("inf"):
            return max(sampled, self.peak_hwm.get(role, 0))
        return sampled

    def cpu_between(self, start: float, end: float, roles=None) -> float:
        """CPU seconds the roles used between two times, from the samples nearest them."""
        def at(t: float) -> Sample | None:
            before = [s for s in self.samples if s.t <= t]
            return before[-1] if before else (self.samples[0] if self.samples else None)

        a, b = at(start), at(end)
        if a is None or b is None:
            return 0.0
        names = roles or set(a.cpu) | set(b.cpu)
        return sum(b.cpu.get(r, 0.0) - a.cpu.get(r, 0.0) for r in names)


def run_watched(cmd: list[str], log_path: str, env: dict, extra: dict[str, int] | None = None,
                every: float = 0.25) -> dict:
    """Run ``cmd`` with its output to ``log_path``, its tree watched; returns its figures:
    exit status, start and end times, wall, user + system CPU seconds of it and every
    descendant it waited for, and the watch."""
    with open(log_path, "wb") as log:
        t0 = time.time()
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        with TreeWatch(proc.pid, every=every, extra=extra or {}) as watch:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        t1 = time.time()
    return {"status": proc.returncode, "start": t0, "end": t1, "wall": t1 - t0,
            "cpu": usage.ru_utime + usage.ru_stime, "max_rss": usage.ru_maxrss * 1024, "watch": watch}


# -- the run's phases from its log ------------------------------------------------------
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d{3})")
ARCHIVE_LINE = re.compile(r"(\S+\.(?:warc|arc|wet|wat)(?:\.gz)?): (?:complete|salvaged|failed)\b")
PLANNED = re.compile(r": ([\d,]+) archives\b")
FINAL = re.compile(r"([\d,]+) archives, ([\d,]+) already done")


def _when(line: str) -> float | None:
    m = STAMP.match(line)
    if not m:
        return None
    return datetime.strptime(m.group(1).replace("T", " ").replace(".", ","), "%Y-%m-%d %H:%M:%S,%f").timestamp()


@dataclass
class LogPhases:
    """Times (time.time()) of the landmarks in a run's log: the flow run begins, the plan is
    logged, the first and last archive lines, the report task finishes, the flow run ends.
    None where the log does not say."""

    lines: int = 0
    warnings: int = 0
    begin: float | None = None
    planned: float | None = None
    first_archive: float | None = None
    last_archive: float | None = None
    archive_lines: int = 0            # lines that tell an archive's outcome
    archives_logged: int = 0          # distinct archives they tell
    report_done: float | None = None
    flow_end: float | None = None
    archives: int | None = None       # from the final message
    already_done: int | None = None
    final: str = ""


def read_phases(log_path: str) -> LogPhases:
    ph = LogPhases()
    logged: set[str] = set()
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            ph.lines += 1
            if " WARNING " in line or " ERROR " in line:
                ph.warnings += 1
            t = _when(line)
            if t is None:
                continue
            if ph.begin is None and "Beginning flow run" in line:
                ph.begin = t
            elif ph.planned is None and ph.begin is not None and PLANNED.search(line) and "already done" not in line:
                ph.planned = t
            m = ARCHIVE_LINE.search(line)
            if m:
                ph.archive_lines += 1
                logged.add(m.group(1))
                ph.first_archive = ph.first_archive or t
                ph.last_archive = t
            if "report-dump" in line and "Finished in state" in line:
                ph.report_done = t
            if "prefect.flow_runs" in line and "Finished in state" in line:
                ph.flow_end = t
                m = FINAL.search(line)
                if m:
                    ph.archives, ph.already_done = (int(g.replace(",", "")) for g in m.groups())
                    ph.final = line.split("Finished in state", 1)[1].strip()
    ph.archives_logged = len(logged)
    return ph
