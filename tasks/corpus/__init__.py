"""The corpus stage: from lake documents to a training-ready corpus."""
