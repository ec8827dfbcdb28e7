-- The registered domains with the most documents, per dump: the first 25, then one row for
-- all the others, so shares add up to the dump's documents.
WITH per_domain AS (
    SELECT dump, coalesce(domain, '(no domain)') AS domain, count(*) AS documents,
           row_number() OVER (PARTITION BY dump ORDER BY count(*) DESC, coalesce(domain, '')) AS rank
    FROM document_info
    GROUP BY dump, domain
), top AS (
    SELECT dump, CASE WHEN rank <= 25 THEN domain ELSE '(other domains)' END AS domain, documents
    FROM per_domain
)
SELECT dump, domain, sum(documents)::BIGINT AS documents,
       sum(documents) / sum(sum(documents)) OVER (PARTITION BY dump) AS share
FROM top
GROUP BY dump, domain
ORDER BY dump, domain = '(other domains)', documents DESC, domain;
