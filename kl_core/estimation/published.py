r"""Schulman's published experiment tables, as data, in one place.

J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html, samples :math:`x \sim q = \mathcal N(0,1)`
and reports, for :math:`p = \mathcal N(0.1, 1)` and :math:`p = \mathcal N(1, 1)`,
each estimator's bias and standard deviation divided by the true
:math:`\mathrm{KL}[q\|p]` (his k2 row is also divided by :math:`\mathrm{KL}[q\|p]`).
The numbers are kept as the strings he printed, so that their precision is
part of the data: ``"1.42"`` is known to ±0.005, ``"1.7"`` to ±0.05, ``"20"`` to ±0.5.

========================  ===========  =============  =============  =============
p                         true KL      k1             k2             k3
========================  ===========  =============  =============  =============
:math:`\mathcal N(0.1,1)`  0.005       0 / 20         0.002 / 1.42   0 / 1.42
:math:`\mathcal N(1,1)`    0.5         0 / 2          0.25 / 1.73    0 / 1.7
========================  ===========  =============  =============  =============

(bias/true / stdev/true.)  The exact values (:func:`kl_core.estimation.exact.estimator_moments`)
round to these, except that the exact k2 bias/true for μ = 0.1,
:math:`(\tfrac12(0.01 + 0.005^2) - 0.005)/0.005 = 0.0025`, lies exactly on the
rounding boundary of his ``0.002``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from kl_core._docfill import docfill
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation.distributions import Distribution, Gaussian

__all__ = ["SCHULMAN_2020", "PublishedExperiment", "PublishedRow", "match_published"]

SOURCE = "J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html"


def _decimals(text: str) -> int:
    """Digits after the decimal point of a printed number, e.g. ``"1.42"`` → 2, ``"1.7"`` → 1."""
    return max(0, -Decimal(text).as_tuple().exponent)


@dataclass(frozen=True)
class PublishedRow:
    """One estimator's row of a published table.

    Attributes
    ----------
    estimator : str
        Key in :data:`kl_core.estimation.estimators.ESTIMATORS`.
    bias_text, std_text : str
        bias/true and stdev/true exactly as printed.
    """

    estimator: str
    bias_text: str
    std_text: str

    @property
    def bias_over_true(self) -> float:
        """bias/true as a float."""
        return float(self.bias_text)

    @property
    def std_over_true(self) -> float:
        """stdev/true as a float."""
        return float(self.std_text)

    @property
    def bias_decimals(self) -> int:
        """Printed decimals of bias/true."""
        return _decimals(self.bias_text)

    @property
    def std_decimals(self) -> int:
        """Printed decimals of stdev/true."""
        return _decimals(self.std_text)


@dataclass(frozen=True)
class PublishedExperiment:
    r"""One published experiment: :math:`q`, :math:`p`, the true KL and the rows.

    Attributes
    ----------
    q, p : Gaussian
        Sampler and target.
    true_kl_text : str
        :math:`\mathrm{KL}[q\|p]` as printed.
    rows : tuple of PublishedRow
        k1, k2, k3.
    source : str
        Where it was published.
    """

    q: Gaussian
    p: Gaussian
    true_kl_text: str
    rows: tuple[PublishedRow, ...]
    source: str = SOURCE

    @property
    def true_kl(self) -> float:
        """The printed true KL as a float."""
        return float(self.true_kl_text)

    def row(self, estimator: str) -> PublishedRow | None:
        """The row of ``estimator``, or None if he did not publish one."""
        return next((r for r in self.rows if r.estimator == estimator), None)


SCHULMAN_2020: tuple[PublishedExperiment, ...] = (
    PublishedExperiment(
        q=Gaussian(0.0, 1.0),
        p=Gaussian(0.1, 1.0),
        true_kl_text="0.005",
        rows=(
            PublishedRow("k1", "0", "20"),
            PublishedRow("k2", "0.002", "1.42"),
            PublishedRow("k3", "0", "1.42"),
        ),
    ),
    PublishedExperiment(
        q=Gaussian(0.0, 1.0),
        p=Gaussian(1.0, 1.0),
        true_kl_text="0.5",
        rows=(
            PublishedRow("k1", "0", "2"),
            PublishedRow("k2", "0.25", "1.73"),
            PublishedRow("k3", "0", "1.7"),
        ),
    ),
)


@docfill(**SECTIONS)
def match_published(q: Distribution, p: Distribution) -> PublishedExperiment | None:
    r"""The published experiment run with exactly this ``q`` and ``p``, if any.

    %(pair_params)s

    Returns
    -------
    PublishedExperiment or None
        Schulman's experiment with :math:`q = \mathcal N(0,1)` and
        :math:`p = \mathcal N(0.1,1)` or :math:`\mathcal N(1,1)`; None otherwise.

    %(schulman_references)s

    Examples
    --------
    >>> match_published(Gaussian(0, 1), Gaussian(1, 1)).true_kl
    0.5
    >>> match_published(Gaussian(0, 1), Gaussian(2, 1)) is None
    True
    """
    return next((e for e in SCHULMAN_2020 if e.q == q and e.p == p), None)
