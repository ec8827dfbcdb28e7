-- Encoding share per dump (the seed's third plot), labels normalised by charset_label()
-- so that e.g. Shift_JIS counts as windows-31j.
SELECT dump,
       charset_label(charset) AS charset,
       count(*) AS documents,
       count(*) / sum(count(*)) OVER (PARTITION BY dump) AS share
FROM done_documents
GROUP BY dump, charset_label(charset)
ORDER BY dump, documents DESC, charset;
