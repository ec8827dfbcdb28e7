-- The counts of the per-dump rollup (tasks/lake/rollup.py): what the reports need of the
-- finished archives' documents and ledgers, grouped by what they are shared out by.
-- Run over one batch of archives at a time (the views documents, ledger and files then
-- hold that batch only); the counts of several batches add up, so the rollup keeps them
-- per part and a report sums the parts (sql/report_*.sql).
--   fact 'documents'       n = documents
--   fact 'charset'         key = the label as the file has it (reports apply charset_label)
--   fact 'charset_source'  key = charset_source
--   fact 'month'           month = the month of the date, UTC; NULL: no date
--   fact 'domain'          key = the registered domain (document_info); NULL: none
--   fact 'ledger'          key = outcome, key2 = lang; n = records, bytes = sum of bytes_in
SELECT dump, 'documents' AS fact, NULL::VARCHAR AS key, NULL::VARCHAR AS key2,
       NULL::DATE AS month, count(*) AS n, NULL::BIGINT AS bytes
FROM done_documents GROUP BY dump
UNION ALL
SELECT dump, 'charset', charset, NULL, NULL, count(*), NULL
FROM done_documents GROUP BY dump, charset
UNION ALL
SELECT dump, 'charset_source', charset_source, NULL, NULL, count(*), NULL
FROM done_documents GROUP BY dump, charset_source
UNION ALL
SELECT dump, 'month', NULL, NULL, CAST(date_trunc('month', timezone('UTC', date)) AS DATE), count(*), NULL
FROM done_documents GROUP BY ALL
UNION ALL
SELECT dump, 'domain', domain, NULL, NULL, count(*), NULL
FROM document_info GROUP BY dump, domain
UNION ALL
SELECT dump, 'ledger', outcome, lang, NULL, count(*), sum(bytes_in)::BIGINT
FROM done_ledger GROUP BY dump, outcome, lang
