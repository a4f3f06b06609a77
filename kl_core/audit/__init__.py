"""Auditing a user's own per-token log-probabilities.

``table_files`` (reading a CSV or Parquet file, with its limits) and
``statistics`` (which KL, how large, how noisy: ``audit``).
"""

__all__ = ["DIRECTIONS"]

# Here, not in statistics: the command line's parser needs it without the audit's numerics
# (``python -m kl_core --help`` registers every subcommand).
DIRECTIONS = ("sampler-other", "other-sampler")
"""Accepted values of an audit's ``direction``: ``"sampler-other"`` is KL[sampler‖other]."""
