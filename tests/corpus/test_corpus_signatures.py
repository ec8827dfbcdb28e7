"""Signatures and components of the corpus stage against plain definitions."""
import random

import numpy as np

from warclake.tasks.corpus.signals.normalise import hash64, normalise, split_paragraphs
from warclake.tasks.corpus.signals.signatures import (
    EMPTY_MINHASH,
    band_keys,
    estimated_jaccard,
    minhash,
    simhash64,
)
from warclake.tasks.corpus.steps.components import component_labels


def shingles(t: str, n: int) -> set[str]:
    return {t[i:i + n] for i in range(len(t) - n + 1)} if len(t) >= n else ({t} if t else set())


def test_minhash_estimates_the_jaccard_of_character_ngrams():
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 9))) for _ in range(400)]
    errors = []
    for _ in range(40):
        base = [rng.choice(words) for _ in range(300)]
        other = list(base)
        for _ in range(rng.randint(0, 120)):
            other[rng.randrange(len(other))] = rng.choice(words)
        a, b = " ".join(base), " ".join(other)
        true = len(shingles(a, 5) & shingles(b, 5)) / len(shingles(a, 5) | shingles(b, 5))
        sig = minhash([a, b], 5, 120)
        errors.append(abs(estimated_jaccard(sig[:1], sig[1:])[0] - true))
    # the standard error of 120 values is at most 0.046; the mean error is far below it
    assert np.mean(errors) < 0.04 and max(errors) < 0.15


def test_cjk_text_needs_no_tokenizer_and_empty_text_is_marked():
    ja = "今日は良い天気ですね。明日も晴れるでしょう。公園に行きましょう。" * 3
    ja2 = ja.replace("公園", "海辺")
    sig = minhash([ja, ja2, "", "短い"], 5, 120)
    assert 0.5 < estimated_jaccard(sig[:1], sig[1:2])[0] < 1.0
    assert (sig[2] == EMPTY_MINHASH).all() and not (sig[3] == EMPTY_MINHASH).all()
    keys = band_keys(sig, 24, 5)
    assert (keys[2] == 0).all() and (keys[0] != 0).all()


def test_simhash_is_the_majority_vote_of_ngram_hash_bits():
    from warclake.tasks.corpus.signals.signatures import ngram_hashes

    texts = ["the cat sat on the mat", "the cat sat on the hat", "", "ab"]
    got = simhash64(texts, 3).view(np.uint64)
    for t, g in zip(texts, got):
        h, _ = ngram_hashes([t], 3)
        want = 0
        for j in range(64):
            ones = sum(int(x) >> j & 1 for x in h)
            if 2 * ones > len(h):
                want |= 1 << j
        assert int(g) == want
    assert bin(int(got[0]) ^ int(got[1])).count("1") < 20


def test_normalised_hash_ignores_path_markers_case_and_spacing():
    a = split_paragraphs("body>div#a\x1cHello \x02World\x03  again")[0][1]
    b = split_paragraphs("body>p.x\x1chello world\nagain")[0][1]
    assert hash64(normalise(a)) == hash64(normalise(b))
    assert normalise("ＡＢＣ") == "abc"   # NFKC folds full-width forms


def test_components_match_a_union_find():
    rng = np.random.default_rng(4)
    for n, m in [(50, 30), (500, 400), (2000, 100)]:
        a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        parent = list(range(n))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x
        for x, y in zip(a, b):
            rx, ry = find(int(x)), find(int(y))
            if rx != ry:
                parent[max(rx, ry)] = min(rx, ry)
        want = [min(i for i in range(n) if find(i) == find(k)) for k in range(n)]
        assert component_labels(n, a, b).tolist() == want
