"""Auditing a user's own per-token log-probabilities.

``table_files`` (reading a CSV or Parquet file, with its limits) and
``statistics`` (which KL, how large, how noisy: ``audit``).
"""
