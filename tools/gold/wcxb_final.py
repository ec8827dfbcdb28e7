"""The final part of WCXB's held-back dev pages: page ids for ``warclake eval --only``.

    python -m tools.gold.wcxb_final [--part final|rest] [--path ../shared/data/gold/wcxb_dev]

The held-back part of the WCXB dev split (``wcxb.py``'s split) has been scored after every
change to the sieve, so it has become a tuning set. Its final part — the pages whose
``sha1("final:" + page id) % 3 == 0``, about a third, fixed by the ids alone — is scored
once, at the end of a change; ``rest`` is the other two thirds, for scoring as before::

    warclake eval --gold wcxb:../shared/data/gold/wcxb_dev@heldout \\
        --only $(python -m tools.gold.wcxb_final --part rest) --extractor sieve --extractor trafilatura

Prints the ids joined by commas (the form ``--only`` takes).
"""
from __future__ import annotations

import argparse
import hashlib

FINAL_MOD = 3


def is_final(page_id: str) -> bool:
    """Whether a held-back page is in the final part: a pure function of its id."""
    return int(hashlib.sha1(f"final:{page_id}".encode("utf-8")).hexdigest(), 16) % FINAL_MOD == 0


def part_ids(path: str, part: str) -> list[str]:
    """Ids of the held-back pages of ``path`` in ``part`` ("final" or "rest"), in set order."""
    from warclake.tasks.evaluation.wcxb import read_wcxb

    ids = [p.id for p in read_wcxb(path, "heldout")]
    return [i for i in ids if is_final(i) == (part == "final")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("final", "rest"), default="final")
    ap.add_argument("--path", default="../shared/data/gold/wcxb_dev")
    args = ap.parse_args(argv)
    print(",".join(part_ids(args.path, args.part)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
