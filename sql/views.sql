-- warclake: analysts' views over the lake (data contract: README.md, "The lake").
--
-- tasks/lake/catalog.py runs this file after defining these macros:
--   warclake_root()       the lake's absolute path or URL, no trailing slash
--   warclake_dumps()      the partition folders to read: 'dump=*', or 'dump=<DUMP>' for one dump
--   warclake_mixed_schemas()  true when the lake holds files of more than one schema version
--                         (then the parquet sources bind by name, reading every footer)
--   charset_label(label)  an encoding label as the extractor reports it (WHATWG names, lower
--                         case, the Shift_JIS family as windows-31j); written from the
--                         extractor's label table, so the two cannot disagree
-- Paths are resolved when a view is queried, so the catalogue works from any working
-- directory and sees files written after it was built. A source with no file yet is
-- defined from its empty_<name>() macro instead (same columns, no rows).
-- The dump is a column of every file, so hive partitioning stays off.
-- Statements end with ';' at the end of a line (catalog.py splits on that).

CREATE OR REPLACE MACRO warclake_glob(kind, ext) AS
    warclake_root() || '/' || kind || '/' || warclake_dumps() || '/*.' || ext;

-- ---------------------------------------------------------------- text helpers
-- A document's text is paragraphs joined by a blank line; each paragraph is
-- '<css-path>' chr(28) '<text>', with link text between chr(2) and chr(3).

CREATE OR REPLACE MACRO doc_paragraphs(text) AS
    CASE WHEN text IS NULL OR text = '' THEN []::VARCHAR[]
         ELSE string_split(text, chr(10) || chr(10)) END;

CREATE OR REPLACE MACRO paragraph_path(p) AS
    CASE WHEN strpos(p, chr(28)) > 0 THEN substr(p, 1, strpos(p, chr(28)) - 1) END;

-- strpos is 0 when there is no separator, and substr(p, 1) is then the whole paragraph.
CREATE OR REPLACE MACRO paragraph_plain(p) AS
    replace(replace(substr(p, strpos(p, chr(28)) + 1), chr(2), ''), chr(3), '');

-- Characters inside link markers (link density = link_chars / length of the plain text).
CREATE OR REPLACE MACRO paragraph_link_chars(p) AS
    length(array_to_string(
        regexp_extract_all(p, chr(2) || '([^' || chr(3) || ']*)' || chr(3), 1), ''));

-- The block tag of a CSS path: 'body>div.content#main>p.note' -> 'p'.
CREATE OR REPLACE MACRO path_tag(path) AS
    regexp_extract(path, '(^|>)([^>.#]+)[^>]*$', 2);

-- Plain text of all paragraphs: paths and link markers removed, paragraphs kept apart
-- by a blank line.
CREATE OR REPLACE MACRO plain_text(text) AS
    CASE WHEN text IS NOT NULL THEN
        array_to_string(list_transform(doc_paragraphs(text), lambda p: paragraph_plain(p)),
                        chr(10) || chr(10))
    END;

-- Cleaned plain text: only the paragraphs labelled 'good' by the boilerplate stage.
-- Labels are NULL when cleaning was off: then every paragraph is kept.
CREATE OR REPLACE MACRO clean_text(text, labels) AS
    CASE WHEN labels IS NULL THEN plain_text(text)
         WHEN text IS NOT NULL THEN
        array_to_string(list_filter(
            list_transform(doc_paragraphs(text),
                           lambda p, i: CASE WHEN labels[i] = 'good' THEN paragraph_plain(p) END),
            lambda x: x IS NOT NULL), chr(10) || chr(10))
    END;

-- ---------------------------------------------------------------- empty sources
-- The contract's columns, used when a source has no file yet (an empty lake or dump).

CREATE OR REPLACE MACRO empty_documents() AS TABLE
    SELECT NULL::VARCHAR AS text, NULL::VARCHAR AS docId, NULL::VARCHAR AS url,
           NULL::VARCHAR AS charset, NULL::VARCHAR AS lang, NULL::TIMESTAMPTZ AS date,
           NULL::VARCHAR AS dump, NULL::VARCHAR AS warc_file, NULL::BIGINT AS warc_offset,
           NULL::VARCHAR AS charset_source, NULL::FLOAT AS lang_score,
           NULL::VARCHAR AS boilerplate, NULL::VARCHAR[] AS paragraph_labels
    LIMIT 0;

CREATE OR REPLACE MACRO empty_ledger() AS TABLE
    SELECT NULL::VARCHAR AS dump, NULL::VARCHAR AS warc_file, NULL::BIGINT AS warc_offset,
           NULL::VARCHAR AS record_type, NULL::VARCHAR AS url, NULL::VARCHAR AS outcome,
           NULL::VARCHAR AS charset, NULL::VARCHAR AS charset_source, NULL::VARCHAR AS lang,
           NULL::BIGINT AS bytes_in, NULL::BIGINT AS payload_bytes, NULL::VARCHAR AS quirks
    LIMIT 0;

CREATE OR REPLACE MACRO empty_files() AS TABLE
    SELECT NULL::VARCHAR AS dump, NULL::VARCHAR AS warc_file, NULL::VARCHAR AS input,
           NULL::BIGINT AS input_bytes, NULL::JSON AS input_identity,
           NULL::BIGINT AS documents_bytes, NULL::BIGINT AS ledger_bytes,
           NULL::BIGINT AS output_bytes, NULL::BIGINT AS records, NULL::BIGINT AS documents,
           NULL::MAP(VARCHAR, BIGINT) AS outcomes, NULL::VARCHAR AS status,
           NULL::VARCHAR AS error, NULL::BIGINT AS error_offset,
           NULL::VARCHAR AS extractor_version, NULL::VARCHAR AS schema_version,
           NULL::VARCHAR AS config_fingerprint, NULL::JSON AS config, NULL::VARCHAR AS host,
           NULL::TIMESTAMPTZ AS started, NULL::TIMESTAMPTZ AS finished, NULL::DOUBLE AS seconds,
           NULL::MAP(VARCHAR, STRUCT(count BIGINT, seconds DOUBLE)) AS stages,
           NULL::MAP(VARCHAR, BIGINT) AS quirks
    LIMIT 0;

CREATE OR REPLACE MACRO empty_rollup_archives() AS TABLE
    SELECT NULL::VARCHAR AS archive, NULL::VARCHAR AS tag, NULL::VARCHAR AS part,
           NULL::BOOLEAN AS valid, * FROM empty_files();

CREATE OR REPLACE MACRO empty_rollup_counts() AS TABLE
    SELECT NULL::VARCHAR AS part, NULL::VARCHAR AS dump, NULL::VARCHAR AS fact,
           NULL::VARCHAR AS key, NULL::VARCHAR AS key2, NULL::DATE AS month,
           NULL::BIGINT AS n, NULL::BIGINT AS bytes
    LIMIT 0;

-- ---------------------------------------------------------------- sources
-- The parquet sources bind from one file's schema, so a query opens each footer once, when
-- it reads the file: binding by name (union_by_name) reads every footer of the lake first,
-- which grows with the number of archives. Only a lake in the middle of a re-extraction
-- to a new schema version binds by name (warclake_mixed_schemas()).

-- source: documents
CREATE OR REPLACE VIEW documents AS
SELECT * FROM read_parquet(warclake_glob('documents', 'parquet'),
                           hive_partitioning = false, union_by_name = warclake_mixed_schemas());

-- source: ledger
CREATE OR REPLACE VIEW ledger AS
SELECT * FROM read_parquet(warclake_glob('ledger', 'parquet'),
                           hive_partitioning = false, union_by_name = warclake_mixed_schemas());

-- A summary's fields, typed explicitly: the outcome keys differ from file to file, and a
-- struct inferred from a sample of files would drop the rare ones.
CREATE OR REPLACE MACRO summary_fields(content) AS json_transform(content, '{
    "dump": "VARCHAR", "warc_file": "VARCHAR", "input": "VARCHAR",
    "input_bytes": "BIGINT", "input_identity": "JSON",
    "documents_bytes": "BIGINT", "ledger_bytes": "BIGINT", "output_bytes": "BIGINT",
    "records": "BIGINT", "documents": "BIGINT", "outcomes": "MAP(VARCHAR, BIGINT)",
    "status": "VARCHAR", "error": "VARCHAR", "error_offset": "BIGINT",
    "extractor_version": "VARCHAR", "schema_version": "VARCHAR",
    "config_fingerprint": "VARCHAR", "config": "JSON", "host": "VARCHAR",
    "started": "TIMESTAMPTZ", "finished": "TIMESTAMPTZ", "seconds": "DOUBLE",
    "stages": "MAP(VARCHAR, STRUCT(count BIGINT, seconds DOUBLE))",
    "quirks": "MAP(VARCHAR, BIGINT)"}');

-- source: files
-- A summary that is not valid JSON counts as not done (as the extractor treats it) instead
-- of breaking every query.
CREATE OR REPLACE VIEW files AS
SELECT unnest(summary_fields(content))
FROM read_text(warclake_glob('files', 'json'))
WHERE json_valid(content);

-- The per-dump rollup (tasks/lake/rollup.py): one row per summary rolled up, with its
-- fields, and the counts of the reports over the documents and ledgers of those archives.
-- Current as of the last report or flow run of the dump.

-- source: rollup_archives
CREATE OR REPLACE VIEW rollup_archives AS
SELECT * FROM read_parquet(warclake_root() || '/rollup/' || warclake_dumps() || '/archives.parquet',
                           hive_partitioning = false);

-- source: rollup_counts
-- A part no archive names any more (replaced, left by a killed refresh) is left out.
CREATE OR REPLACE VIEW rollup_counts AS
SELECT * FROM read_parquet(warclake_root() || '/rollup/' || warclake_dumps() || '/part-*.parquet',
                           hive_partitioning = false)
SEMI JOIN (SELECT DISTINCT part FROM rollup_archives) USING (part);

-- ---------------------------------------------------------------- derived views

-- Documents of finished inputs only: a documents file whose files/*.json is not written
-- yet belongs to an extraction still running (or one that crashed) and is left out, and so
-- is what an earlier run left of an input whose latest attempt failed.
CREATE OR REPLACE VIEW done_documents AS
SELECT * FROM documents SEMI JOIN (SELECT dump, warc_file FROM files WHERE status <> 'failed') USING (dump, warc_file);

CREATE OR REPLACE VIEW done_ledger AS
SELECT * FROM ledger SEMI JOIN (SELECT dump, warc_file FROM files WHERE status <> 'failed') USING (dump, warc_file);

-- The host of a URL: lower-case, without user info, port or trailing dot; NULL when none.
CREATE OR REPLACE MACRO url_host(url) AS
    nullif(rtrim(lower(regexp_extract(url, '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)', 1)), '.'), '');

-- Every host of the lake with its registered domain, by the Public Suffix List (the
-- public_suffix table, bundled): the longest matching rule is the public suffix, an
-- exception rule wins over the others, no rule means the last label; the registered
-- domain is the suffix plus one label (NULL for a host that is itself a public suffix; an
-- IP address is its own domain).
CREATE OR REPLACE VIEW host_domains AS
WITH hosts AS (
    SELECT DISTINCT url_host(url) AS host FROM documents WHERE url_host(url) IS NOT NULL
), cands AS (
    SELECT host, i, array_to_string(parts[i:], '.') AS cand, array_to_string(parts[i + 1:], '.') AS parent
    FROM (SELECT host, parts, unnest(range(1, len(parts) + 1)) AS i
          FROM (SELECT host, string_split(host, '.') AS parts FROM hosts))
), matches AS (
    SELECT host, i, kind FROM cands JOIN public_suffix ON suffix = cand AND kind <> 'wildcard'
    UNION ALL
    SELECT host, i, kind FROM cands JOIN public_suffix ON suffix = parent AND kind = 'wildcard'
), starts AS (  -- the label where the public suffix starts
    SELECT host, coalesce(min(i) FILTER (WHERE kind = 'exception') + 1,
                          min(i) FILTER (WHERE kind <> 'exception')) AS start
    FROM matches GROUP BY host
)
SELECT host,
       CASE WHEN regexp_full_match(host, '[0-9.]+|\[.*\]') THEN host
            WHEN coalesce(start, len(parts)) > 1
            THEN array_to_string(parts[coalesce(start, len(parts)) - 1:], '.') END AS domain
FROM (SELECT host, string_split(host, '.') AS parts FROM hosts) LEFT JOIN starts USING (host);

-- One row per finished document with what analysts count by: host, registered domain,
-- paragraphs and plain-text length (characters, link markers and paths left out).
CREATE OR REPLACE VIEW document_info AS
SELECT d.docId, d.dump, d.warc_file, d.warc_offset, d.url, url_host(d.url) AS host, h.domain,
       d.lang, charset_label(d.charset) AS charset, d.date,
       len(doc_paragraphs(d.text)) AS n_paragraphs, length(plain_text(d.text)) AS text_chars
FROM done_documents d LEFT JOIN host_domains h ON h.host = url_host(d.url);

-- One row per document with the cleaned plain text (good paragraphs only when labelled).
CREATE OR REPLACE VIEW clean_documents AS
SELECT docId, url, lang, charset_label(charset) AS charset, date, dump, warc_file,
       warc_offset, boilerplate, clean_text(text, paragraph_labels) AS text
FROM documents;

-- One row per paragraph (idx counts from 1, as DuckDB lists do).
CREATE OR REPLACE VIEW paragraphs AS
SELECT docId, dump, warc_file, warc_offset, url, lang,
       para.idx AS idx,
       paragraph_path(para.raw) AS css_path,
       path_tag(paragraph_path(para.raw)) AS tag,
       paragraph_plain(para.raw) AS text,
       paragraph_link_chars(para.raw) AS link_chars,
       labels[para.idx] AS label
FROM (
    SELECT docId, dump, warc_file, warc_offset, url, lang, paragraph_labels AS labels,
           unnest(list_transform(doc_paragraphs(text),
                                 lambda p, i: {'idx': i, 'raw': p})) AS para
    FROM documents
);

-- The summaries the rollup holds, as `files` has them (those that parse).
CREATE OR REPLACE VIEW rollup_files AS
SELECT * EXCLUDE (archive, tag, part, valid) FROM rollup_archives WHERE valid;

-- Per-dump summary of the finished inputs.
CREATE OR REPLACE VIEW dumps AS
SELECT dump,
       count(*) AS files,
       count(*) FILTER (WHERE status = 'complete') AS complete,
       count(*) FILTER (WHERE status = 'salvaged') AS salvaged,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       sum(records)::BIGINT AS records,
       sum(documents)::BIGINT AS documents,
       sum(input_bytes)::BIGINT AS input_bytes,
       sum(output_bytes)::BIGINT AS output_bytes,
       min(started) AS first_started,
       max(finished) AS last_finished
FROM files
GROUP BY dump
ORDER BY dump;
