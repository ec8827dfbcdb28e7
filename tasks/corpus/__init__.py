"""The corpus stage over the lake: repeated text, near-duplicate documents and quality
rules, each decision written as data beside the documents (no Prefect here)."""
