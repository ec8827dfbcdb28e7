-- Where each dump's extraction time went: records and seconds per stage of the extractor
-- (the summaries' "stages"), summed over the dump's finished archives, and "other" for the
-- archives' time outside the stages. Seconds are the workers' time, not the wall clock.
WITH per_stage AS (
    SELECT dump, e.key AS stage, e.value.count AS records, e.value.seconds AS seconds
    FROM rollup_files, unnest(map_entries(stages)) AS t(e)
    WHERE status <> 'failed'
), other AS (
    SELECT f.dump, 'other' AS stage, NULL::BIGINT AS records,
           greatest(sum(f.seconds) - coalesce(max(s.seconds), 0), 0) AS seconds
    FROM rollup_files f LEFT JOIN (SELECT dump, sum(seconds) AS seconds FROM per_stage GROUP BY dump) s USING (dump)
    WHERE f.status <> 'failed' AND f.stages IS NOT NULL AND cardinality(f.stages) > 0
    GROUP BY f.dump
), rows AS (
    SELECT dump, stage, sum(records)::BIGINT AS records, sum(seconds) AS seconds FROM per_stage GROUP BY dump, stage
    UNION ALL
    SELECT dump, stage, records, seconds FROM other
)
-- Rounded to the microsecond: sums of floats depend on the order the files are read in,
-- and one lake must report the same figures wherever it is read from.
SELECT dump, stage, records, round(seconds, 6) AS seconds,
       round(seconds / nullif(sum(seconds) OVER (PARTITION BY dump), 0), 6) AS share,
       round(1000 * seconds / nullif(records, 0), 6) AS ms_per_record
FROM rows
ORDER BY dump, list_position(['read', 'charset', 'language', 'parse', 'boilerplate', 'write', 'other'], stage),
         stage;
