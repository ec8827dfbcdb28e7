"""Records to lake rows: one record's processing (charset, language, paragraphs, boilerplate
labels, metadata) and one archive's extraction into its documents, ledger and summary."""
