"""A supervised fastText model file written from its matrices (``write_fasttext_model``):
fastText's binary format (version 12), which ``fasttext.load_model`` reads.

The models of the tests and benchmarks are made with it because fastText's own trainer
(``fasttext.train_supervised`` of fasttext-numpy2 0.10.4) stops with "Encountered NaN" on any
supervised input on the project's machines, whatever the learning rate, loss or threads.
The format and what fastText computes from it: ``tasks/corpus/signals/fasttext_format.py``.
"""
from __future__ import annotations

from warclake.tasks.corpus.signals.fasttext_format import (  # noqa: F401 - the losses, for callers
    LOSS_HS,
    LOSS_OVA,
    LOSS_SOFTMAX,
    write_model,
)

write_fasttext_model = write_model
