-- Documents per month of their date (the earliest of WARC-Date, HTTP Date and
-- Last-Modified), per dump. Months are taken in UTC whatever the session's time zone
-- (sql/rollup_counts.sql); month is NULL for documents without a date.
SELECT dump,
       month,
       sum(n)::BIGINT AS documents
FROM rollup_counts
WHERE fact = 'month'
GROUP BY dump, month
ORDER BY dump, month NULLS LAST;
