"""Scoring boilerplate removal against gold sets: readers, metrics and the eval runner."""
