-- Language share per dump among the records whose language was looked at (kept or
-- rejected for language), from the ledger's counts in the rollup: with a Japanese-only
-- extraction the documents alone would all be 'ja'. 'und' = no language could be told.
-- (fact 'ledger': key = outcome, key2 = lang)
SELECT dump,
       coalesce(nullif(key2, ''), 'und') AS lang,
       sum(n)::BIGINT AS records,
       coalesce(sum(n) FILTER (WHERE key = 'kept'), 0)::BIGINT AS documents,
       sum(n) / sum(sum(n)) OVER (PARTITION BY dump) AS share
FROM rollup_counts
WHERE fact = 'ledger' AND (key IN ('kept', 'lang_rejected') OR (key2 IS NOT NULL AND key2 <> ''))
GROUP BY dump, coalesce(nullif(key2, ''), 'und')
ORDER BY dump, records DESC, lang;
