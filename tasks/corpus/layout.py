"""Where the corpus stage keeps its tables, and how it writes them (atomically).

    <lake>/corpus/paragraphs/dump=<D>/<warc-name>.parquet      per-archive step
    <lake>/corpus/docsigs/dump=<D>/<warc-name>.parquet         per-archive step
    <lake>/corpus/para_hosts/dump=<D>/part=<P>.parquet         paragraph statistics, per dump
    <lake>/corpus/para_paths/dump=<D>/part=<P>.parquet
    <lake>/corpus/pairs/dump=<D>/part=<P>.parquet              verified candidate pairs
    <lake>/corpus/decisions/documents/dump=<D>/decisions.parquet
    <lake>/corpus/decisions/paragraphs/dump=<D>/part=<P>.parquet
    <lake>/corpus/state/<step>/dump=<D>/<name>.json            written last: the step's key

Every file is written under a temporary name beside its place and renamed into it, and a
step's state file goes last, so a killed run never leaves a step that looks done. A step is
done when its state file holds the same key (its inputs' identity and the settings'
fingerprint); anything else is redone. Local lakes only.
"""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

from warclake.tasks.lake import Lake, check_dump_name, remove_quietly
from warclake.tasks.owners import remove_dead_tmp, tmp_name

ROOT = "corpus"


class CorpusLayout:
    def __init__(self, lake: str | Lake):
        self.lake = lake if isinstance(lake, Lake) else Lake(lake)
        if not self.lake.is_local:
            raise ValueError(f"the corpus stage needs a local lake; {self.lake.url} is remote")
        self.root = os.path.join(self.lake.url, ROOT)

    def dir(self, table: str, dump: str | None = None) -> str:
        d = os.path.join(self.root, *table.split("/"))
        return os.path.join(d, f"dump={check_dump_name(dump)}") if dump is not None else d

    def file(self, table: str, dump: str, name: str, ext: str = ".parquet") -> str:
        return os.path.join(self.dir(table, dump), name + ext)

    def part_name(self, part: int) -> str:
        return f"part={part:03d}"

    # -- state of steps ----------------------------------------------------------
    def state_path(self, step: str, dump: str, name: str) -> str:
        return self.file(f"state/{step}", dump, name, ".json")

    def read_state(self, step: str, dump: str, name: str) -> dict | None:
        try:
            with open(self.state_path(step, dump, name)) as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def is_done(self, step: str, dump: str, name: str, key: dict) -> bool:
        st = self.read_state(step, dump, name)
        # compared as stored: JSON turns tuples into lists
        return st is not None and st.get("key") == json.loads(json.dumps(key, sort_keys=True, default=str))

    def mark_done(self, step: str, dump: str, name: str, key: dict, **info) -> None:
        data = json.dumps({"key": key, **info}, indent=1, sort_keys=True, default=str).encode()
        write_bytes(self.state_path(step, dump, name), data)

    def clear_state(self, step: str, dump: str, name: str) -> None:
        remove_quietly(self.state_path(step, dump, name))

    def clean_stale_tmp(self) -> int:
        """Remove temporaries of killed runs (never those of a process still running)."""
        n = 0
        for d, _, files in os.walk(self.root):
            if any(f.endswith((".tmp", ".tmp.wal")) for f in files):
                n += remove_dead_tmp(d)
        return n


def write_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), tmp_name(os.path.basename(path)))
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def write_table(path: str, table: pa.Table) -> int:
    """Write ``table`` to ``path`` atomically (zstd); returns its size. The writer's output
    depends only on the rows, so equal tables give byte-identical files."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), tmp_name(os.path.basename(path)))
    try:
        pq.write_table(table, tmp, compression="zstd", row_group_size=1 << 17)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise
    return os.path.getsize(path)
