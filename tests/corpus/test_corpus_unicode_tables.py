"""The stored Unicode tables: equal to their definitions, used only for their own Unicode
version, and a damaged file costs one warning line, never a wrong table."""
import os
import subprocess
import sys
import unicodedata
import zlib

from warclake.tasks.corpus.signals import normalise, quality, unicode_tables


def test_the_tables_in_use_are_what_their_definitions_give_under_this_python():
    built = unicode_tables.built()
    assert quality._CLASS.tobytes() == built[0]
    assert quality._lower_table() == built[1]
    assert normalise.simple_nfkc_lower_table() == built[2]
    if os.path.exists(unicode_tables.path()):   # stored for this Python's Unicode data: read, not built
        assert unicode_tables.stored() == built
    else:
        assert unicode_tables.stored() is None


def test_the_stored_form_reads_back_every_table():
    tables = unicode_tables.built()
    assert unicode_tables._decode(unicode_tables.encode(*tables)) == tables
    classes, lower, nfkc = tables
    assert nfkc[ord("Ａ")] == "a" and nfkc[ord("ﬁ")] == "fi" and nfkc[0xD800] is None and nfkc[0x3A3] is None
    assert lower[ord("A")] == ord("a") and lower[0x3A3] == -1 and classes[ord(" ")] & 1


def test_a_python_of_another_unicode_version_builds_its_tables(monkeypatch):
    monkeypatch.setattr(unicodedata, "unidata_version", "1.0.0")
    unicode_tables.stored.cache_clear()
    try:
        assert unicode_tables.stored() is None
    finally:
        monkeypatch.undo()
        unicode_tables.stored.cache_clear()
    assert unicode_tables.path("1.0.0").endswith("unicode_tables_1.0.0.bin")


def test_a_damaged_file_gives_one_warning_line_and_the_built_tables(tmp_path):
    """A process whose stored file is cut short builds the tables and still signs the same."""
    bad = tmp_path / f"unicode_tables_{unicodedata.unidata_version}.bin"
    good = open(unicode_tables.path(), "rb").read() if os.path.exists(unicode_tables.path()) else None
    bad.write_bytes(zlib.compress(zlib.decompress(good)[:1000]) if good else b"not zlib")
    code = ("import sys; from warclake.tasks.corpus.signals import unicode_tables as u; "
            f"u.path = lambda version=None: {str(bad)!r}; "
            "from warclake.tasks.corpus.signals import normalise, quality; "
            "assert u.stored() is None; "
            "assert normalise.simple_nfkc_lower_table() == normalise.simple_nfkc_lower_table_built(); "
            "assert quality._lower_table() == quality.lower_table_built(); print('built')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["built"]
    assert p.stderr.count("\n") == 1 and "stored Unicode tables are unreadable" in p.stderr
