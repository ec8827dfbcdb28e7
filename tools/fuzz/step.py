"""Generated tables of lake documents through the per-archive step's compiled pass and the
references it must equal.

    python -m tools.fuzz.step --cases N [--seed S] [--start I] [--module FILE]

Case ``i`` of seed ``S`` is always the same table (``--start I --cases 1`` replays it): one
to eight documents, each a batch text of ``fuzz_signatures`` or a document of
``fuzz_quality`` (paths with and without, chrome, CJK, astral characters, combining marks,
sigma, every Unicode space, markers and separators in and out of place, repetition) or a
document of that text shaped as extraction writes them (every paragraph with a path, links
closed in their paragraph: the documents whose metrics the pass counts itself), some null, with labels absent, fitting or not, and a language; random n-gram and MinHash sizes;
the text column as ``string`` or ``large_string``, in one chunk or several, sometimes a
slice of a larger table. The table goes through ``archive_pass.run`` and
``archive_pass.reference`` (signatures, paths, labels and every metric, of the kept text in
even cases and of the whole page in odd ones); a difference is
printed with its case number. A crash of the compiled code kills the process: the last
``case`` line printed (every 10,000 cases, flushed) locates it. Exit 1 on any difference.

``--module FILE`` loads the compiled module from FILE instead, e.g. a build under
AddressSanitizer (any memory error aborts with its report)::

    mkdir -p /tmp/asan && cp tasks/native/corpus_*.pyx tasks/native/corpus_*.pxi /tmp/asan/
    cython -3 /tmp/asan/corpus_step.pyx -o /tmp/asan/corpus_step.c
    gcc -shared -fPIC -O1 -g -fsanitize=address -fno-omit-frame-pointer \\
        -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \\
        /tmp/asan/corpus_step.c -o /tmp/asan/corpus_step.so
    ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \\
        python -m tools.fuzz.step --module /tmp/asan/corpus_step.so --cases 3000
"""
from __future__ import annotations

import random
import sys

import pyarrow as pa

from tools.fuzz import quality as fuzz_quality
from tools.fuzz import signatures as fuzz_signatures
from tools.fuzz.compare import compare_cases, load_module_file, parse_options


def case(seed: int, i: int) -> tuple[pa.Table, int, int, int]:
    """(table, paragraph n-gram, document n-gram, MinHash size) of case ``i``."""
    rng = random.Random(f"step:{seed}:{i}")
    texts, labels, pn, dn, perm = fuzz_signatures.case(seed, i)
    rows = []
    for t, lb in zip(texts, labels):
        rows.append((t, lb, rng.choice(fuzz_quality.LANGS)))
    for k in range(rng.randint(0, 4)):
        rows.append(fuzz_quality.document(seed, 8 * i + k))
    for k in range(rng.randint(0, 4)):
        rows.append(_well_formed(rng))
    rng.shuffle(rows)
    text_type = rng.choice((pa.string(), pa.string(), pa.large_string()))
    table = pa.table({"text": pa.array([r[0] for r in rows], text_type),
                      "paragraph_labels": pa.array([r[1] for r in rows], pa.list_(pa.string())),
                      "lang": pa.array([r[2] for r in rows], pa.string())})
    r = rng.random()
    if r < 0.3 and table.num_rows > 1:        # several chunks
        cut = rng.randint(1, table.num_rows - 1)
        table = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
    elif r < 0.5 and table.num_rows > 2:      # a slice of a larger table
        table = table.slice(1, table.num_rows - 2)
    return table, pn, dn, perm


def _well_formed(rng: random.Random) -> tuple[str, list | None, str | None]:
    """A document as extraction writes them (every paragraph with a path, links closed
    within their paragraph) with ``fuzz_quality``'s hostile text: the documents whose
    metrics the pass counts itself."""
    paras = []
    for _ in range(rng.randint(1, 12)):
        body = fuzz_quality._body(rng).replace("\x02", "").replace("\x03", "")
        while "\n\n" in body:
            body = body.replace("\n\n", "\n")
        words = body.split(" ")
        for _ in range(rng.choice((0, 0, 1, 3))):     # link spans
            a = rng.randrange(len(words))
            b = rng.randrange(a, len(words))
            words[a] = "\x02" + words[a]
            words[b] = words[b] + "\x03"
        path = rng.choice(fuzz_quality.PATHS + ["body>div.wp-block-group.has-global-padding>main>" * 6 + "p"])
        paras.append(path + "\x1c" + " ".join(words))
    if rng.random() < 0.2:
        paras += [rng.choice(paras)] * rng.randint(1, 5)
    n = len(paras) + rng.choice((-1, 0, 0, 0, 1))
    labels = None if rng.random() < 0.3 else [rng.choice(("good", "bad", "good", None)) for _ in range(max(0, n))]
    return "\n\n".join(paras), labels, rng.choice(fuzz_quality.LANGS)


def _load(path: str):
    from warclake.tasks.corpus.signals import quality
    from warclake.tasks.corpus.signals.normalise import simple_nfkc_lower_table

    mod = load_module_file("warclake.tasks.native.corpus_step", path)
    mod.configure(quality._CLASS.tobytes(), quality._lower_table())
    mod.configure_nfkc(simple_nfkc_lower_table())
    return mod


def main(argv: list[str] | None = None) -> int:
    from warclake.tasks.corpus.signals import archive_pass as ap
    from warclake.tasks.corpus.signals.archive_step import paragraph_labels

    opts = parse_options("step", __doc__, argv, 10_000)
    native = _load(opts.module) if opts.module else ap.compiled_module()
    if native is None:
        print(f"fuzz_step: no compiled pass ({ap.REASON})", file=sys.stderr)
        return 2

    def difference(i: int) -> str | None:
        table, pn, dn, perm = case(opts.seed, i)
        kept_only = i % 2 == 0     # the kept text's metrics, or the whole page's
        got = ap.run(native, table, pn, dn, perm, kept_only=kept_only)
        want = ap.reference(table, pn, dn, perm, kept_only=kept_only)
        labels_ok = got.para_labels.to_pylist() == paragraph_labels(
            table.column("paragraph_labels").to_pylist(), got.signed.doc_paragraphs)
        return None if ap.pass_equal(got, want) and labels_ok else repr(table.column("text").to_pylist())

    return compare_cases(opts, difference)


if __name__ == "__main__":
    raise SystemExit(main())
