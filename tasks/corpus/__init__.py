"""The corpus stage: from lake documents to a training-ready corpus. Repeated text,
near-duplicate documents and quality rules, each decision written as data beside the
documents (no Prefect here)."""
