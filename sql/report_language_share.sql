-- Language share per dump among the records whose language was looked at (kept or
-- rejected for language), from the ledger: with a Japanese-only extraction the documents
-- alone would all be 'ja'. 'und' = no language could be told.
SELECT dump,
       coalesce(nullif(lang, ''), 'und') AS lang,
       count(*) AS records,
       count(*) FILTER (WHERE outcome = 'kept') AS documents,
       count(*) / sum(count(*)) OVER (PARTITION BY dump) AS share
FROM done_ledger
WHERE outcome IN ('kept', 'lang_rejected') OR (lang IS NOT NULL AND lang <> '')
GROUP BY dump, coalesce(nullif(lang, ''), 'und')
ORDER BY dump, records DESC, lang;
