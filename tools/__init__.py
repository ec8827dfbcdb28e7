"""Development tools, run from a checkout (``python -m tools.NAME``) and not shipped in the
wheel: fuzzers, fault servers, evaluations of single parts, model training, scale generators."""
