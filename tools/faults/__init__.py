"""Servers that break on purpose, and remote reading measured against them."""
