"""The corpus stage's per-archive signals: normalised text, hashes and signatures, quality
metrics and hosts of one documents file, in one compiled pass."""
