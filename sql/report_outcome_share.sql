-- What happened to every WARC record, per dump (kept, or the reason it was skipped), from
-- the ledger's counts in the rollup (fact 'ledger': key = outcome).
SELECT dump,
       key AS outcome,
       sum(n)::BIGINT AS records,
       sum(bytes)::BIGINT AS bytes_in,
       sum(n) / sum(sum(n)) OVER (PARTITION BY dump) AS share
FROM rollup_counts
WHERE fact = 'ledger'
GROUP BY dump, key
ORDER BY dump, records DESC, outcome;
