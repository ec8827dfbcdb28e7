-- The registered domains with the most documents, per dump (25 at most; share of the dump's
-- documents).
SELECT dump, domain, documents, share
FROM (
    SELECT dump, coalesce(domain, '(no domain)') AS domain, count(*) AS documents,
           count(*) / sum(count(*)) OVER (PARTITION BY dump) AS share,
           row_number() OVER (PARTITION BY dump ORDER BY count(*) DESC, coalesce(domain, '')) AS rank
    FROM document_info
    GROUP BY dump, domain
)
WHERE rank <= 25
ORDER BY dump, documents DESC, domain;
