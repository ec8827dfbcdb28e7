-- warclake: views over the corpus stage's tables (<lake>/corpus/...), after sql/views.sql.
--
-- tasks/corpus/storage/catalog_views.py runs this file; a table with no file yet is first defined
-- from its empty_corpus_<name>() macro (same columns, no rows), as views.sql does for the
-- lake's sources. Statements end with ';' at the end of a line.

CREATE OR REPLACE MACRO corpus_glob(tbl) AS
    warclake_root() || '/corpus/' || tbl || '/' || warclake_dumps() || '/*.parquet';

-- source: corpus_document_signatures
CREATE OR REPLACE VIEW corpus_document_signatures AS
SELECT * EXCLUDE (minhash, bands) FROM read_parquet(corpus_glob('docsigs'), hive_partitioning = false, union_by_name = true);

-- source: corpus_paragraph_rows
CREATE OR REPLACE VIEW corpus_paragraph_rows AS
SELECT * FROM read_parquet(corpus_glob('paragraphs'), hive_partitioning = false, union_by_name = true);

-- source: paragraph_hosts
CREATE OR REPLACE VIEW paragraph_hosts AS
SELECT * FROM read_parquet(corpus_glob('para_hosts'), hive_partitioning = false, union_by_name = true);

-- source: paragraph_paths
CREATE OR REPLACE VIEW paragraph_paths AS
SELECT * FROM read_parquet(corpus_glob('para_paths'), hive_partitioning = false, union_by_name = true);

-- source: paragraph_group_rows
CREATE OR REPLACE VIEW paragraph_group_rows AS
SELECT * FROM read_parquet(corpus_glob('para_groups'), hive_partitioning = false, union_by_name = true);

-- source: duplicate_pairs
-- (a pair whose documents share band keys of several partitions is found in each: DISTINCT)
CREATE OR REPLACE VIEW duplicate_pairs AS
SELECT DISTINCT * FROM read_parquet(corpus_glob('pairs'), hive_partitioning = false, union_by_name = true);

-- source: distinctive_paragraph_pairs
-- (document pairs confirmed on the paragraphs that are not any site's template; para_pairs.py)
CREATE OR REPLACE VIEW distinctive_paragraph_pairs AS
SELECT * FROM read_parquet(corpus_glob('para_pairs'), hive_partitioning = false, union_by_name = true);

-- source: document_decisions
CREATE OR REPLACE VIEW document_decisions AS
SELECT * FROM read_parquet(corpus_glob('decisions/documents'), hive_partitioning = false, union_by_name = true);

-- source: paragraph_decisions
CREATE OR REPLACE VIEW paragraph_decisions AS
SELECT * FROM read_parquet(corpus_glob('decisions/paragraphs'), hive_partitioning = false, union_by_name = true);

-- source: document_model_scores
-- (per document: the fastText score the model-score step stored, with its label and model)
CREATE OR REPLACE VIEW document_model_scores AS
SELECT * FROM read_parquet(corpus_glob('model_scores'), hive_partitioning = false, union_by_name = true);

-- source: paragraph_model_scores
-- (per paragraph: its language-model log10 probability, tokens and perplexity, word-list matches)
CREATE OR REPLACE VIEW paragraph_model_scores AS
SELECT * FROM read_parquet(corpus_glob('para_model_scores'), hive_partitioning = false, union_by_name = true);

-- Per document with a model score: the scores the decisions used (over the kept text), and
-- where its perplexity ranks among its language's documents, in CCNet's thirds: head
-- (lowest perplexity), middle, tail.
CREATE OR REPLACE VIEW document_scores AS
SELECT docId, dump, lang, kept, rule, fasttext_score, perplexity, word_list_matches, word_list_ratio,
       fasttext_model, lm_model, word_list,
       CASE WHEN perplexity IS NOT NULL THEN
            percent_rank() OVER (PARTITION BY lang, perplexity IS NULL ORDER BY perplexity) END AS perplexity_rank,
       CASE WHEN perplexity IS NULL THEN NULL
            WHEN percent_rank() OVER (PARTITION BY lang, perplexity IS NULL ORDER BY perplexity) < 1 / 3 THEN 'head'
            WHEN percent_rank() OVER (PARTITION BY lang, perplexity IS NULL ORDER BY perplexity) < 2 / 3 THEN 'middle'
            ELSE 'tail' END AS perplexity_bucket
FROM document_decisions
WHERE fasttext_score IS NOT NULL OR perplexity IS NOT NULL OR word_list_matches IS NOT NULL;

-- Per distinct normalised paragraph text, over every dump: where and how often it occurs.
CREATE OR REPLACE VIEW paragraph_stats AS
WITH h AS (
    SELECT text_hash, sum(n_docs)::BIGINT AS occurrences, count(DISTINCT host) AS hosts,
           count(DISTINCT domain) AS domains, count(DISTINCT dump) AS dumps,
           min(first_date) AS first_date, max(last_date) AS last_date,
           min(sample_doc) AS sample_doc, arg_min(sample_idx, sample_doc) AS sample_idx
    FROM paragraph_hosts GROUP BY text_hash
), p AS (
    SELECT text_hash, list(path ORDER BY n DESC, path)[1:3] AS top_paths
    FROM (SELECT text_hash, path, sum(n) AS n FROM paragraph_paths GROUP BY text_hash, path)
    GROUP BY text_hash
)
SELECT * FROM h LEFT JOIN p USING (text_hash);

-- The near-duplicate group of each grouped text: groups only merge as dumps arrive, so
-- the lake's group is the smallest id any dump gives the text.
CREATE OR REPLACE VIEW paragraph_groups AS
SELECT text_hash, min(group_hash) AS group_hash FROM paragraph_group_rows GROUP BY text_hash;

-- Per near-duplicate group, over every dump: its texts, where and how often they occur.
CREATE OR REPLACE VIEW paragraph_group_stats AS
WITH h AS (
    SELECT g.group_hash, count(DISTINCT h.text_hash) AS texts, sum(n_docs)::BIGINT AS occurrences,
           count(DISTINCT host) AS hosts, count(DISTINCT domain) AS domains, count(DISTINCT dump) AS dumps,
           min(first_date) AS first_date, max(last_date) AS last_date
    FROM paragraph_hosts h JOIN paragraph_groups g USING (text_hash) GROUP BY g.group_hash
), p AS (
    SELECT group_hash, list(path ORDER BY n DESC, path)[1:3] AS top_paths
    FROM (SELECT g.group_hash, path, sum(n) AS n FROM paragraph_paths JOIN paragraph_groups g USING (text_hash)
          GROUP BY g.group_hash, path)
    GROUP BY group_hash
)
SELECT * FROM h LEFT JOIN p USING (group_hash);

-- Every rule that fired on a document (quality rules and duplicates), one row each.
CREATE OR REPLACE VIEW document_rule_hits AS
SELECT docId, dump, lang, r.rule, r.value, r.threshold, cluster_id, duplicate_of, run_id
FROM (SELECT *, unnest(rules) AS r FROM document_decisions);

-- The corpus: finished documents the decisions keep, with their text as the corpus has it
-- (paragraphs labelled good, when labelled, minus the paragraphs a repeated-text rule
-- dropped; no paths or link markers). Documents left with no text are not in it.
CREATE OR REPLACE VIEW corpus_documents AS
SELECT * FROM (
    SELECT d.docId, d.url, d.lang, d.dump, d.date, d.warc_file, d.warc_offset,
           array_to_string(list_filter(list_transform(doc_paragraphs(d.text),
               lambda p, i: CASE WHEN (d.paragraph_labels IS NULL OR d.paragraph_labels[i] = 'good')
                                  AND NOT list_contains(coalesce(pd.dropped, []), i)
                                 THEN paragraph_plain(p) END),
               lambda x: x IS NOT NULL), chr(10) || chr(10)) AS text
    FROM done_documents d
    JOIN document_decisions dd ON dd.docId = d.docId AND dd.dump = d.dump AND dd.kept
    LEFT JOIN (SELECT docId, dump, list(idx) AS dropped FROM paragraph_decisions GROUP BY docId, dump) pd
           ON pd.docId = d.docId AND pd.dump = d.dump
) WHERE text <> '';

-- Removals by rule, language and dump: documents (first-listed rule) and paragraphs.
CREATE OR REPLACE VIEW corpus_removals AS
SELECT 'document' AS unit, rule, lang, dump, count(*) AS removed
FROM document_decisions WHERE NOT kept GROUP BY ALL
UNION ALL
SELECT 'paragraph', rule, lang, dump, count(*) FROM paragraph_decisions GROUP BY ALL;
