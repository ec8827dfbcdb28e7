-- Output/input size ratio per dump (the seed's second plot): zstd documents parquet bytes
-- over the WARC.gz bytes they came from. Failed inputs produced no output for reasons
-- other than their content, so they are left out of both sides.
SELECT dump,
       count(*) AS files,
       sum(input_bytes)::BIGINT AS input_bytes,
       sum(output_bytes)::BIGINT AS output_bytes,
       sum(output_bytes) / nullif(sum(input_bytes), 0) AS ratio
FROM rollup_files
WHERE status <> 'failed'
GROUP BY dump
ORDER BY dump;
