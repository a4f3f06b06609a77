r"""Docstring sections the estimation modules share, written once.

Filled into a docstring's ``%(name)s`` line by :func:`kl_core._docfill.docfill`,
so that every function taking an estimator and a pair of distributions
describes them in the same words.
"""

from __future__ import annotations

__all__ = ["SCHULMAN", "SECTIONS"]

#: The source of the estimators k1, k2, k3 and kλ.
SCHULMAN = 'J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html'

_KEY = """\
key : str
    A key of :data:`kl_core.estimation.estimators.ESTIMATORS`."""
_PAIR = """\
q, p : Distribution
    Sampler and target."""
_LAM = r"""lam : float, optional
    :math:`\lambda` for ``k_lambda`` (required there, ignored elsewhere)."""

_LOGR = r"""logr : array_like
    :math:`\log p(x) - \log q(x)` for samples :math:`x \sim q`."""

SECTIONS = {
    "logr": _LOGR,
    "logr_params": f"Parameters\n----------\n{_LOGR}",
    "per_sample_returns": f"Returns\n-------\nnumpy.ndarray\n    Per-sample values.\n\nReferences\n----------\n{SCHULMAN}",
    "pair_params": f"Parameters\n----------\n{_PAIR}",
    "estimator_pair_params": f"Parameters\n----------\n{_KEY}\n{_PAIR}",
    "estimator_pair_lam_params": f"Parameters\n----------\n{_KEY}\n{_PAIR}\n{_LAM}",
    "schulman_references": f"References\n----------\n{SCHULMAN}",
}
