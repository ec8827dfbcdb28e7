-- Documents per dump (the seed article's first plot), with the inputs behind them.
-- Finished inputs only (those with a files/*.json), from the dump's rollup.
WITH f AS (
    SELECT dump,
           count(*) AS files,
           count(*) FILTER (WHERE status = 'salvaged') AS salvaged,
           count(*) FILTER (WHERE status = 'failed') AS failed,
           sum(records)::BIGINT AS records
    FROM rollup_files
    GROUP BY dump
), d AS (
    SELECT dump, sum(n)::BIGINT AS documents
    FROM rollup_counts
    WHERE fact = 'documents'
    GROUP BY dump
)
SELECT f.dump, f.files, f.salvaged, f.failed, f.records,
       coalesce(d.documents, 0) AS documents,
       coalesce(d.documents, 0) / nullif(f.records, 0) AS documents_per_record
FROM f LEFT JOIN d USING (dump)
ORDER BY f.dump;
