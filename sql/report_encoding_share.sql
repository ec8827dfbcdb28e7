-- Encoding share per dump (the seed's third plot), labels normalised by charset_label()
-- so that e.g. Shift_JIS counts as windows-31j. From the rollup's counts of the finished
-- documents per label as written.
SELECT dump,
       charset_label(key) AS charset,
       sum(n)::BIGINT AS documents,
       sum(n) / sum(sum(n)) OVER (PARTITION BY dump) AS share
FROM rollup_counts
WHERE fact = 'charset'
GROUP BY dump, charset_label(key)
ORDER BY dump, documents DESC, charset;
