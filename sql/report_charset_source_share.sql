-- Where each document's encoding came from: meta tag, BOM, HTTP header, the statistical
-- detector, or the UTF-8 fallback.
SELECT dump,
       coalesce(charset_source, 'unknown') AS charset_source,
       count(*) AS documents,
       count(*) / sum(count(*)) OVER (PARTITION BY dump) AS share
FROM done_documents
GROUP BY dump, coalesce(charset_source, 'unknown')
ORDER BY dump, documents DESC, charset_source;
