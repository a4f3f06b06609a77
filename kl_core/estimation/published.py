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
from decimal import Decimal, InvalidOperation

from kl_core._docfill import docfill
from kl_core.estimation._docstrings import SECTIONS
from kl_core.estimation.distributions import Distribution, Gaussian

__all__ = ["SCHULMAN_2020", "Printed", "PublishedExperiment", "PublishedRow", "match_published"]

SOURCE = "J. Schulman, Approximating KL Divergence (2020), http://joschu.net/blog/kl-approx.html"


@dataclass(frozen=True)
class Printed:
    """A number as it was printed: the text, its value, and the rounding its digits allow.

    Attributes
    ----------
    text : str
        The digits as printed, e.g. ``"1.42"``.

    Examples
    --------
    >>> Printed("1.42").value, Printed("1.42").decimals, Printed("1.42").rounding
    (1.42, 2, 0.005)
    >>> Printed("20").rounding
    0.5
    """

    text: str

    def __post_init__(self) -> None:
        try:
            finite = Decimal(self.text).is_finite()
        except (InvalidOperation, TypeError):
            finite = False
        if not finite:
            raise ValueError(f"text must be a printed finite number, got {self.text!r}")

    def __str__(self) -> str:
        return self.text

    @property
    def value(self) -> float:
        """The printed number as a float."""
        return float(self.text)

    @property
    def decimals(self) -> int:
        """Digits after the decimal point: ``"1.42"`` → 2, ``"1.7"`` → 1, ``"20"`` → 0."""
        return max(0, -int(Decimal(self.text).as_tuple().exponent))

    @property
    def rounding(self) -> float:
        """Half a unit in the last printed place: the most a correct value can differ by."""
        return 0.5 * 10.0**-self.decimals


@dataclass(frozen=True)
class PublishedRow:
    """One estimator's row of a published table.

    Attributes
    ----------
    estimator : str
        Key in :data:`kl_core.estimation.estimators.ESTIMATORS`.
    bias, std : Printed
        bias/true and stdev/true exactly as printed.
    """

    estimator: str
    bias: Printed
    std: Printed


@dataclass(frozen=True)
class PublishedExperiment:
    r"""One published experiment: :math:`q`, :math:`p`, the true KL and the rows.

    Attributes
    ----------
    q, p : Gaussian
        Sampler and target.
    true_kl : Printed
        :math:`\mathrm{KL}[q\|p]` as printed.
    rows : tuple of PublishedRow
        k1, k2, k3.
    source : str
        Where it was published.
    """

    q: Gaussian
    p: Gaussian
    true_kl: Printed
    rows: tuple[PublishedRow, ...]
    source: str = SOURCE

    def row(self, estimator: str) -> PublishedRow | None:
        """The row of ``estimator``, or None if he did not publish one."""
        return next((r for r in self.rows if r.estimator == estimator), None)


def _row(estimator: str, bias: str, std: str) -> PublishedRow:
    return PublishedRow(estimator, Printed(bias), Printed(std))


SCHULMAN_2020: tuple[PublishedExperiment, ...] = (
    PublishedExperiment(
        q=Gaussian(0.0, 1.0),
        p=Gaussian(0.1, 1.0),
        true_kl=Printed("0.005"),
        rows=(_row("k1", "0", "20"), _row("k2", "0.002", "1.42"), _row("k3", "0", "1.42")),
    ),
    PublishedExperiment(
        q=Gaussian(0.0, 1.0),
        p=Gaussian(1.0, 1.0),
        true_kl=Printed("0.5"),
        rows=(_row("k1", "0", "2"), _row("k2", "0.25", "1.73"), _row("k3", "0", "1.7")),
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
    >>> match_published(Gaussian(0, 1), Gaussian(1, 1)).true_kl.value
    0.5
    >>> match_published(Gaussian(0, 1), Gaussian(2, 1)) is None
    True
    """
    return next((e for e in SCHULMAN_2020 if e.q == q and e.p == p), None)
