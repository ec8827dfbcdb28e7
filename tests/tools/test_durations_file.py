"""tests/durations.json, the seconds of each test file that order the suite's files on the
workers (longest first): every unit it lists is a test file there is, and a run's figures
replace a unit's old ones while those of files that are gone are dropped."""
from __future__ import annotations

import os

from conftest import _LONG_FIRST, DURATIONS, merged_durations, read_durations, suite_files, unit_names


def test_every_listed_unit_is_a_test_file_there_is():
    durations = read_durations()
    assert durations, f"{DURATIONS} is missing or empty: `./dev durations` writes it"
    units = unit_names()
    assert set(durations) <= units, sorted(set(durations) - units)
    names = {os.path.basename(path) for path in suite_files()}
    for unit in durations:
        assert unit == "servers" or unit in names, unit
    assert all(s >= 0 for s in durations.values())


def test_test_files_have_names_of_their_own():
    """pytest imports a test file by its name (the folders are not packages): two of one name
    would collide, and a unit of durations.json would name two files."""
    names = [os.path.basename(path) for path in suite_files()]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_the_suite_starts_with_its_longest_files():
    durations = read_durations()
    assert _LONG_FIRST == sorted(durations, key=lambda u: -durations[u])
    assert durations[_LONG_FIRST[0]] == max(durations.values())


def test_a_run_replaces_what_it_measured_and_drops_files_that_are_gone():
    old = {"test_a.py": 50.0, "test_gone.py": 90.0, "test_b.py": 10.0}
    measured = {"test_b.py": 70.04, "test_new.py": 5.0}
    units = {"test_a.py", "test_b.py", "test_new.py"}
    assert merged_durations(old, measured, units) == {"test_b.py": 70.0, "test_a.py": 50.0, "test_new.py": 5.0}
    assert list(merged_durations(old, measured, units)) == ["test_b.py", "test_a.py", "test_new.py"]
