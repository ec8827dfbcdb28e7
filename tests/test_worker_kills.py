"""The watch through which an extraction worker tells its parent where it is, read while it
is written and after a worker died in the middle of a write."""
from __future__ import annotations

import multiprocessing

import pytest

from warclake.tasks.runtime.supervisor import NOTHING, RecordWatch

WRITES = 200_000


def write_states(path):
    """Record i at offset 1000 + i with i bytes read, then idle: generations 2i + 1 and 2i + 2."""
    watch = RecordWatch(path)
    for i in range(WRITES):
        watch.record(1000 + i, i)
        watch.idle(i)


def written(state) -> bool:
    """Whether ``state`` is one that write_states wrote (or none yet)."""
    if state == NOTHING:
        return True
    i, second = divmod(state.generation - 1, 2)
    if second:
        return (state.offset, state.bytes_read, state.started) == (-1, i, 0.0)
    return state.offset == 1000 + i and state.bytes_read == i and state.started > 0


def test_the_watch_read_while_it_is_written_gives_only_states_the_worker_wrote(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with RecordWatch.create() as watch:
        writer = multiprocessing.get_context("spawn").Process(target=write_states, args=(watch.path,))
        writer.start()
        seen, wrong, last = 0, [], 0
        while writer.is_alive() or seen == 0:
            state = watch.read()
            seen += 1
            if not written(state) or state.generation < last:
                wrong.append(state)
            last = state.generation
        writer.join()
        assert writer.exitcode == 0
        assert wrong == [], f"{len(wrong)} of {seen} reads"
        assert watch.read().generation == 2 * WRITES


@pytest.mark.parametrize("before", ["nothing yet", "idle", "on a record"])
def test_a_worker_killed_in_the_middle_of_a_write_leaves_the_state_before_it(tmp_path, monkeypatch, before):
    """Every point where a write of "on the record at 0" can be cut (its bytes written in order,
    over the slot's old bytes or over zeros) reads as the state before it or the one written,
    never as another: not as a record begun when the clock started."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with RecordWatch.create() as watch:
        if before != "nothing yet":
            watch.record(500, 10)
            watch.record(700, 20)
            if before == "idle":
                watch.idle(30)
        was = watch.read()
        old = watch._map[:]
        watch.record(0, 40)
        new = watch._map[:]
        now = watch.read()
        assert (now.offset, now.bytes_read) == (0, 40)
        changed = [i for i in range(len(new)) if new[i] != old[i]]
        half = len(new) // 2   # the file holds two slots; a write goes into one
        start, end = (0, half) if changed[0] < half else (half, len(new))
        assert changed[-1] < end
        zeros = bytes(len(new))
        for cut in range(start, end + 1):
            for under in (old, zeros):   # the slot's old bytes, or zero-filled first as struct.pack_into does
                watch._map[:] = old[:start] + new[start:cut] + under[cut:end] + old[end:]
                assert watch.read() in (was, now), (cut, watch.read())
        watch._map[:] = old[:start] + new[start:changed[-1]] + old[changed[-1]:]   # all but its last byte
        assert watch.read() == was
