-- Documents per month of their date (the earliest of WARC-Date, HTTP Date and
-- Last-Modified), per dump. Months are taken in UTC whatever the session's time zone;
-- month is NULL for documents without a date. Use 'year' for a coarser view.
SELECT dump,
       CAST(date_trunc('month', timezone('UTC', date)) AS DATE) AS month,
       count(*) AS documents
FROM done_documents
GROUP BY ALL
ORDER BY dump, month NULLS LAST;
