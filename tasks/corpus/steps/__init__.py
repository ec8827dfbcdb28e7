"""The corpus stage's global steps over a dump: paragraph statistics and groups, candidate and
confirmed document pairs, decisions, export and the report page."""
