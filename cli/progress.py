"""Progress on a terminal for ``extract`` and ``run``: archives done of N, bytes and MB/s of
input, ETA, and the archive being read by bytes. Silent when stderr is not a terminal or with
``--quiet``, so logs and pipes get only the one line per archive."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)


class TerminalProgress:
    """Two bars over input bytes: the whole run, and the archive being read."""

    def __init__(self, total_archives: int, total_bytes: int | None = None, quiet: bool = False):
        self.enabled = not quiet and sys.stderr.isatty()
        self.total, self.done = total_archives, 0
        self._progress = self._run = self._current = None
        self._run_bytes = 0
        self._reading: dict[str, int] = {}   # archives being read by workers -> bytes so far
        if not self.enabled:
            return
        self._progress = Progress(
            TextColumn("{task.description}", style="bold"), BarColumn(), TaskProgressColumn(),
            DownloadColumn(), TransferSpeedColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(stderr=True))
        self._run = self._progress.add_task(self._label(), total=total_bytes or None)

    def _label(self) -> str:
        return f"{self.done}/{self.total} archives"

    def __enter__(self) -> "TerminalProgress":
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress:
            self._progress.stop()

    def plan(self, total_archives: int, total_bytes: int | None) -> None:
        """The run's size, once it is known (``run`` learns it from the flow's plan)."""
        self.total = total_archives
        if self._progress:
            self._progress.update(self._run, total=total_bytes or None, description=self._label())

    def start_archive(self, name: str, size: int | None) -> None:
        if not self._progress:
            return
        if self._current is not None:
            self._progress.remove_task(self._current)
        self._current = self._progress.add_task(f"  {name}", total=size or None)

    def bytes_read(self, n: int) -> None:
        """Bytes of the current archive read so far."""
        if self._progress and self._current is not None:
            self._progress.update(self._current, completed=n)
            self._progress.update(self._run, completed=self._run_bytes + n)

    def reading(self, name: str, n: int) -> None:
        """A worker has read ``n`` bytes of archive ``name`` (``run``: several at once)."""
        self._reading[name] = n
        if self._progress:
            self._progress.update(self._run, completed=self._run_bytes + sum(self._reading.values()))

    def archive_done(self, input_bytes: int | None, name: str | None = None) -> None:
        self.done += 1
        self._run_bytes += input_bytes or 0
        self._reading.pop(name, None)
        if self._progress:
            self._progress.update(self._run, completed=self._run_bytes + sum(self._reading.values()),
                                  description=self._label())
            if self._current is not None:
                self._progress.remove_task(self._current)
                self._current = None

    def print(self, line: str, err: bool = False) -> None:
        """One line above the bars (or plainly, without them)."""
        if self._progress:
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=sys.stderr if err else sys.stdout, flush=True)
