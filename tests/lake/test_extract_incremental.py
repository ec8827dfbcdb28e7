"""`warclake extract` is incremental like `run`: done archives are skipped, --force redoes them."""
import os

from warclake.cli.main import main
from warclake.tasks.lake.layout import Lake
from warclake.tasks.sample_dump import make_dump


def finished(lake, names):
    return {n: Lake(str(lake)).read_summary("D", n)["finished"] for n in names}


def test_extract_skips_done_archives_and_force_redoes_them(tmp_path, capsys):
    paths = make_dump(str(tmp_path / "dump"), files=3, pages_per_file=10, dump="D", truncate_last=True)
    names = [p.rsplit("/", 1)[-1] for p in paths]
    lake = tmp_path / "lake"
    args = ["extract", "-q", "--dump", "D", "--lake", str(lake), "--langs", "ja,en", str(tmp_path / "dump")]
    assert main(args) == 0
    first = finished(lake, names)
    capsys.readouterr()

    assert main(args) == 0   # nothing to do: the salvaged (truncated) archive is done too
    out = capsys.readouterr().out
    assert "3 of 3 archives done already" in out and "0 archives in" in out
    assert finished(lake, names) == first

    with open(paths[0], "ab") as fh:   # a changed input is redone, alone
        fh.write(b"")
    os.utime(paths[0], (1, 1))
    assert main(args) == 0
    again = finished(lake, names)
    assert again[names[0]] != first[names[0]] and again[names[1]] == first[names[1]]
    assert "2 of 3 archives done already" in capsys.readouterr().out

    assert main(args[:-1] + ["--langs", "ja", str(tmp_path / "dump")]) == 0  # another config: all redone
    other = finished(lake, names)
    assert all(other[n] != again[n] for n in names)

    assert main(args[:-1] + ["--langs", "ja", "--force", str(tmp_path / "dump")]) == 0
    forced = finished(lake, names)
    assert all(forced[n] != other[n] for n in names)
    assert "done already" not in capsys.readouterr().out
