"""Benchmarks with recorded results (see bench/README.md).

Nothing here runs under pytest, and nothing asserts on time.
"""
