"""Benchmarks and the one-shot GPU check of the reference trainer."""
