-- What happened to every WARC record, per dump (kept, or the reason it was skipped).
SELECT dump,
       outcome,
       count(*) AS records,
       sum(bytes_in)::BIGINT AS bytes_in,
       count(*) / sum(count(*)) OVER (PARTITION BY dump) AS share
FROM done_ledger
GROUP BY dump, outcome
ORDER BY dump, records DESC, outcome;
