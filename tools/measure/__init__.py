"""Measurements of single parts on real data: charset, language, deduplication, quality rules, the corpus stage at scale."""
