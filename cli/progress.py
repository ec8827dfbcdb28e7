"""Progress on a terminal for ``extract`` and ``run``: archives done of N, bytes and MB/s of
input, ETA, and the archive being read by bytes. Silent when stderr is not a terminal or with
``--quiet``, so logs and pipes get only the one line per archive."""
from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def archive_line(s: dict) -> str:
    """One line for a finished archive, naming it: status, records, documents, first damage."""
    where = f"damaged at {s['error_offset']}: " if s.get("error_offset") is not None else ""
    more = (s.get("damaged") or 0) - 1
    note = (f" ({where}{s['error']}" + (f"; {more} more damaged ranges" if more > 0 else "") + ")"
            if s.get("error") else "")
    return f"{s['warc_file']}: {s['status']}, {s['records']} records, {s['documents']} documents{note}"


class TerminalProgress:
    """Two bars over input bytes: the whole run, and the archive being read."""

    def __init__(self, total_archives: int, total_bytes: int | None = None, quiet: bool = False,
                 planned: bool | None = None):
        self.enabled = not quiet and sys.stderr.isatty()
        self.total, self.done = total_archives, 0
        # `run` learns its size from the flow's plan: until then the bar says it is planning
        self.planned = total_archives > 0 if planned is None else planned
        self._moved: list[tuple[logging.StreamHandler, object, int]] = []
        self._progress: Progress | None = None
        self._run: TaskID | None = None       # the whole run's bar
        self._current: TaskID | None = None   # the bar of the archive being read
        self._run_bytes = 0
        self._reading: dict[str, int] = {}   # archives being read by workers -> bytes so far
        if not self.enabled:
            return
        # only for a terminal: a quiet run does not import rich
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}", style="bold"), BarColumn(), TaskProgressColumn(),
            DownloadColumn(), TransferSpeedColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(stderr=True))
        self._run = self._progress.add_task(self._label(), total=total_bytes or None)

    def _label(self) -> str:
        return f"{self.done}/{self.total} archives" if self.planned else "planning the run"

    def __enter__(self) -> "TerminalProgress":
        if self._progress:
            self._progress.start()
            self._route_logs_above_bars()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress:
            for handler, stream, level in self._moved:
                handler.setStream(stream)
                handler.setLevel(level)
            self._moved = []
            self._progress.stop()

    def _route_logs_above_bars(self) -> None:
        """Log handlers writing to the terminal (ours, Prefect's console) write through the
        bars' redirected stderr while they show, so each line lands above them, whole; and
        only warnings and errors: the bars and the line per archive say the rest."""
        real = (sys.__stderr__, sys.__stdout__)
        if sys.stderr in real:  # the bars did not redirect stderr: nothing to route through
            return
        loggers = [logging.getLogger()] + [lg for lg in logging.Logger.manager.loggerDict.values()
                                           if isinstance(lg, logging.Logger)]
        for lg in loggers:
            for h in lg.handlers:
                if type(h) is not logging.FileHandler and isinstance(h, logging.StreamHandler) \
                        and h.stream in real and all(h is not m for m, _, _ in self._moved):
                    self._moved.append((h, h.setStream(sys.stderr), h.level))
                    h.setLevel(max(h.level, logging.WARNING))

    def _update_run(self, **fields: Any) -> None:
        """The whole run's bar, when the bars show."""
        if self._progress and self._run is not None:
            self._progress.update(self._run, **fields)

    def plan(self, total_archives: int, total_bytes: int | None) -> None:
        """The run's size, once it is known (``run`` learns it from the flow's plan)."""
        self.total, self.planned = total_archives, True
        self._update_run(total=total_bytes or None, description=self._label())

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
            self._update_run(completed=self._run_bytes + n)

    def reading(self, name: str, n: int) -> None:
        """A worker has read ``n`` bytes of archive ``name`` (``run``: several at once)."""
        self._reading[name] = n
        if self._progress:
            self._update_run(completed=self._run_bytes + sum(self._reading.values()))

    def archive_done(self, input_bytes: int | None, name: str | None = None) -> None:
        self.done += 1
        self._run_bytes += input_bytes or 0
        if name is not None:
            self._reading.pop(name, None)
        if self._progress:
            self._update_run(completed=self._run_bytes + sum(self._reading.values()), description=self._label())
            if self._current is not None:
                self._progress.remove_task(self._current)
                self._current = None

    def print(self, line: str, err: bool = False) -> None:
        """One line above the bars (or plainly, without them)."""
        if self._progress:
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=sys.stderr if err else sys.stdout, flush=True)
