-- Where each document's encoding came from: meta tag, BOM, HTTP header, the statistical
-- detector, or the UTF-8 fallback.
SELECT dump,
       coalesce(key, 'unknown') AS charset_source,
       sum(n)::BIGINT AS documents,
       sum(n) / sum(sum(n)) OVER (PARTITION BY dump) AS share
FROM rollup_counts
WHERE fact = 'charset_source'
GROUP BY dump, coalesce(key, 'unknown')
ORDER BY dump, documents DESC, charset_source;
