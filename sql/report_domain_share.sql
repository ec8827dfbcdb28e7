-- The registered domains with the most documents, per dump: the first 25, then one row for
-- all the others, so shares add up to the dump's documents.
WITH per_domain AS (
    SELECT dump, coalesce(key, '(no domain)') AS domain, sum(n) AS documents,
           row_number() OVER (PARTITION BY dump ORDER BY sum(n) DESC, coalesce(key, '')) AS rank
    FROM rollup_counts
    WHERE fact = 'domain'
    GROUP BY dump, key
), top AS (
    SELECT dump, CASE WHEN rank <= 25 THEN domain ELSE '(other domains)' END AS domain, documents
    FROM per_domain
)
SELECT dump, domain, sum(documents)::BIGINT AS documents,
       sum(documents) / sum(sum(documents)) OVER (PARTITION BY dump) AS share
FROM top
GROUP BY dump, domain
ORDER BY dump, domain = '(other domains)', documents DESC, domain;
