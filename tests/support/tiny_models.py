"""Tiny quality models made in the test, from generated text: a fastText classifier
(trained by fastText itself) and a bigram language model written as an ARPA file (KenLM's
Python package reads models but cannot make them), with the Python computation of the
probabilities the ARPA file holds. Nothing is downloaded."""
from __future__ import annotations

import math
import os
import random
from collections import Counter

from support.corpus_lake import sentence
from tools.fasttext_file import write_fasttext_model

_SPAM = ("buy cheap pills now click here free casino bonus win money fast best price deal offer "
         "discount viagra loan crypto login account password verify urgent limited").split()


def good_text(rng: random.Random, sentences: int = 3) -> str:
    """Ordinary English prose (corpus_lake's sentences)."""
    return " ".join(sentence(rng) for _ in range(sentences))


def junk_text(rng: random.Random, words: int = 40) -> str:
    """Spam in sentences, stop words included (so the heuristic rules pass it): the text a
    quality classifier should score low."""
    out = []
    for _ in range(max(1, words // 8)):
        s = (f"{rng.choice(_SPAM)} the {rng.choice(_SPAM)} {rng.choice(_SPAM)} and {rng.choice(_SPAM)} "
             f"with the {rng.choice(_SPAM)} of {rng.choice(_SPAM)}")
        out.append(s.capitalize() + ".")
    return " ".join(out)


def train_fasttext(folder: str, seed: int = 5, n: int = 300) -> str:
    """A two-label fastText classifier (``__label__hq`` prose, ``__label__junk`` spam)
    trained on generated text; the path of its .bin file.

    fastText's own trainer fails on these machines (``tools/fasttext_file.py``), so the model
    is trained here: multinomial naive Bayes over fastText's tokens (whitespace-separated, as
    its ``predict`` splits them), written in fastText's format as the linear model fastText
    evaluates (the mean of the words' input vectors times the output matrix, then softmax).
    ``fasttext.load_model`` reads it."""
    import numpy as np

    rng = random.Random(seed)
    docs = [(good_text(rng, 2), 0) for _ in range(n)] + [(junk_text(rng, rng.randint(10, 40)), 1) for _ in range(n)]
    counts = [Counter(), Counter()]
    for text, label in docs:
        counts[label].update(text.split())
    words = sorted(set(counts[0]) | set(counts[1]), key=lambda w: (-(counts[0][w] + counts[1][w]), w))
    vocab = len(words)
    # each word's input vector: its log-likelihood under each label (add-one smoothing); their
    # mean is the document's mean log-likelihood per label, and the identity output matrix
    # gives fastText's softmax over those
    logp = np.array([[math.log((counts[k][w] + 1) / (sum(counts[k].values()) + vocab)) for k in (0, 1)]
                     for w in words], np.float32)
    path = os.path.join(folder, "quality.bin")
    write_fasttext_model(path, [(w, counts[0][w] + counts[1][w]) for w in words],
                         [("__label__hq", n), ("__label__junk", n)], logp, np.eye(2, dtype=np.float32))
    return path


class BigramLM:
    """A bigram model with absolute discounting and backoff to add-one unigrams, over
    sentences of whitespace tokens; properly normalised: for every context the
    probabilities of the vocabulary, ``</s>`` and ``<unk>`` sum to 1."""

    D = 0.5

    def __init__(self, sentences: list[list[str]]):
        uni, bi, ctx = Counter(), Counter(), Counter()
        for toks in sentences:
            seq = ["<s>"] + toks + ["</s>"]
            uni.update(seq[1:])
            for h, w in zip(seq, seq[1:]):
                bi[(h, w)] += 1
                ctx[h] += 1
        self.vocab = sorted(set(uni) | {"<unk>"})
        total = sum(uni.values()) + len(self.vocab)
        self.p_uni = {w: (uni[w] + 1) / total for w in self.vocab}
        self.bi, self.ctx = bi, ctx
        followers = Counter(h for h, _ in bi)
        self.backoff = {}
        for h, c in ctx.items():
            seen = sum(self.p_uni[w] for (hh, w) in bi if hh == h)
            self.backoff[h] = (self.D * followers[h] / c) / (1.0 - seen)

    def prob(self, h: str | None, w: str) -> float:
        """P(w | h); h None after an unknown word (KenLM then starts from no context)."""
        w = w if w in self.p_uni else "<unk>"
        if h is None:
            return self.p_uni[w]
        if (h, w) in self.bi:
            return (self.bi[(h, w)] - self.D) / self.ctx[h]
        return self.backoff[h] * self.p_uni[w]

    def log10_sentence(self, toks: list[str]) -> float:
        total, h = 0.0, "<s>"
        for w in toks + ["</s>"]:
            total += math.log10(self.prob(h, w))
            h = w if w in self.p_uni and w != "<unk>" else None
        return total

    def write_arpa(self, path: str) -> str:
        unis = [w for w in self.vocab] + ["<s>"]
        lines = ["", "\\data\\", f"ngram 1={len(unis)}", f"ngram 2={len(self.bi)}", "", "\\1-grams:"]
        for w in unis:
            lp = -99.0 if w == "<s>" else math.log10(self.p_uni[w])
            if w in self.backoff:
                lines.append(f"{lp:.10f}\t{w}\t{math.log10(self.backoff[w]):.10f}")
            else:
                lines.append(f"{lp:.10f}\t{w}")
        lines += ["", "\\2-grams:"]
        for (h, w) in sorted(self.bi):
            lines.append(f"{math.log10((self.bi[(h, w)] - self.D) / self.ctx[h]):.10f}\t{h} {w}")
        lines += ["", "\\end\\", ""]
        with open(path, "w") as fh:
            fh.write("\n".join(lines))
        return path


def train_bigram(folder: str, seed: int = 6, n: int = 400) -> tuple[str, BigramLM]:
    """A bigram model of generated prose, normalised as the stage normalises paragraphs
    (lower case, words split on spaces); (ARPA path, the model)."""
    from warclake.tasks.corpus.signals.normalise import normalise

    rng = random.Random(seed)
    sents = [normalise(good_text(rng, 1)).split() for _ in range(n)]
    lm = BigramLM(sents)
    return lm.write_arpa(os.path.join(folder, "prose.arpa")), lm
