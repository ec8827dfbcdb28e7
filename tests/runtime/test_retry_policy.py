"""Which errors the flow retries: the network and storage that may recover, never our own
full disk, a read-only place, or an input that is not there."""
import errno

import pytest

from warclake.tasks.archive.reader import TransientInputError
from warclake.tasks.runtime.transient import is_transient


@pytest.mark.parametrize("exc", [TransientInputError("reset"), ConnectionResetError(), TimeoutError(),
                                 OSError(errno.EIO, "I/O error on a network mount")])
def test_network_and_storage_hiccups_are_retried(exc):
    assert is_transient(exc)


@pytest.mark.parametrize("exc", [FileNotFoundError(errno.ENOENT, "gone"), PermissionError(errno.EACCES, "no"),
                                 OSError(errno.ENOSPC, "No space left on device"),
                                 OSError(errno.EROFS, "Read-only file system"),
                                 OSError(errno.EDQUOT, "Disk quota exceeded"), ValueError("bad"), None])
def test_what_no_retry_can_fix_is_not_retried(exc):
    assert not is_transient(exc)


def attempts_of(policy, errors):
    """Runs ``policy`` over a function that raises ``errors`` in turn, then returns "done":
    (what came out, how many calls)."""
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return "done"
    try:
        return policy.run(fn), len(calls)
    except Exception as exc:
        return exc, len(calls)


def test_extract_gives_an_archive_whose_worker_died_two_more_attempts_and_no_other_error():
    from warclake.tasks.runtime.retries import WORKER, WorkerDied

    died = [WorkerDied(f"death {i}") for i in range(3)]
    assert attempts_of(WORKER, died[:2]) == ("done", 3)
    assert attempts_of(WORKER, died) == (died[2], 3)
    reset = ConnectionResetError("reset")
    assert attempts_of(WORKER, [reset]) == (reset, 1)   # the archive fails; the next run does it again


def test_a_corpus_step_is_run_again_after_a_network_error_only():
    import dataclasses

    from warclake.tasks.runtime.retries import STEP

    assert STEP.delays == (2, 8)
    quick = dataclasses.replace(STEP, delays=(0, 0))
    reset, full = ConnectionResetError("reset"), OSError(errno.ENOSPC, "No space left on device")
    assert attempts_of(quick, [reset, reset]) == ("done", 3)
    assert attempts_of(quick, [full]) == (full, 1)
    said = []
    assert quick.run(lambda: (_ for _ in ()).throw(TimeoutError("slow")) if not said else "ok",
                     "dump D: stats", said.append) == "ok"
    assert said == ["dump D: stats: slow; again in 0 s"]
