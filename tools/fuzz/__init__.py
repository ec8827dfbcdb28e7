"""Fuzzers: generated and damaged inputs through the compiled modules and their Python references, or through the archive reader; hostile pages' cost."""
