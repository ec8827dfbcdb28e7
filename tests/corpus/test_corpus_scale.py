"""The scale benchmark's generated lake is a lake of the stage: its paragraph and document
hashes are those the real per-archive step gives the same pages (so its tables join with
the step's), and its SimHashes and MinHashes, made from sentence parts, are close to the
step's."""
from __future__ import annotations

import random

import numpy as np
import pyarrow.parquet as pq
import pytest

from support.corpus_lake import sentence, write_archive

DUMP = "CC-MAIN-2099-01"
NAME = f"{DUMP}-00000.warc.gz"


@pytest.mark.parametrize("exact", [False, True])
def test_generated_outputs_are_the_per_archive_steps_values(tmp_path, exact):
    from tools.measure.corpus_scale import T0, Generator, Pool
    from warclake.tasks.corpus.settings import SignatureConfig
    from warclake.tasks.corpus.signals.archive_step import sign_archive
    from warclake.tasks.lake.layout import Lake

    sig = SignatureConfig()
    rng = random.Random(3)
    pool = Pool.from_sentences([f"{sentence(rng, 1)} {sentence(rng, 1)}" for _ in range(400)], sig)
    gen = Generator(pool, 200, sig, seed=5, exact=exact)
    gen.keep_pages = True
    para, docsig = gen.archive(DUMP, NAME, 200, T0)

    lake = str(tmp_path / "lake")
    write_archive(lake, DUMP, NAME, [{"text": "\n\n".join(f"{p}\x1c{t}" for p, t, _ in pg["paras"]),
                                      "docId": pg["docId"], "url": pg["url"], "date": pg["date"],
                                      "labels": [lab for _, _, lab in pg["paras"]]} for pg in gen.pages])
    assert sign_archive(lake, DUMP, NAME, Lake(lake).read_summary(DUMP, NAME), sig)["done"] == "signed"
    real_p = pq.read_table(f"{lake}/corpus/paragraphs/dump={DUMP}/{NAME}.parquet").sort_by([("docId", "ascending"), ("idx", "ascending")])
    real_d = pq.read_table(f"{lake}/corpus/docsigs/dump={DUMP}/{NAME}.parquet").sort_by("docId")
    gen_p = para.sort_by([("docId", "ascending"), ("idx", "ascending")])
    gen_d = docsig.sort_by("docId")

    assert gen_p.num_rows == real_p.num_rows > 1000
    for col in ("docId", "idx", "text_hash", "n_chars", "path", "label", "host", "domain", "url_hash"):
        assert gen_p.column(col).to_pylist() == real_p.column(col).to_pylist(), col
    for col in ("docId", "url_hash", "n_paragraphs", "n_chars", "clean_hash", "host", "domain"):
        assert gen_d.column(col).to_pylist() == real_d.column(col).to_pylist(), col

    # the signatures built from the sentences' parts: near the step's own (equal with exact)
    a = np.array(gen_p.column("simhash").to_pylist(), np.int64).view(np.uint64)
    b = np.array(real_p.column("simhash").to_pylist(), np.int64).view(np.uint64)
    bits = np.array([bin(int(x)).count("1") for x in (a ^ b)])
    same = (np.array(gen_d.column("minhash").to_pylist(), np.uint32)
            == np.array(real_d.column("minhash").to_pylist(), np.uint32)).mean(axis=1)
    print(f"\nexact={exact}: SimHash bits apart: median {np.median(bits)}, 90th {np.percentile(bits, 90)}; "
          f"MinHash values equal: median {np.median(same):.3f}, 10th {np.percentile(same, 10):.3f}")
    if exact:
        assert bits.max() == 0 and same.min() == 1.0
        assert gen_d.column("bands").to_pylist() == real_d.column("bands").to_pylist()
    else:
        assert np.median(bits) <= 1 and np.median(same) >= 0.55
