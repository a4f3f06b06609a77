r"""The second-order (Fisher) view of f-divergences along a path.

Near :math:`\theta = 0` every smooth f-divergence between the base
:math:`p_0` and :math:`p_\theta` is the same quadratic up to the factor
:math:`f''(1)`:

.. math:: D_f(p_\theta, p_0) = \mathbb{E}_{p_0}\!\left[f\!\left(\tfrac{p_\theta}{p_0}\right)\right]
          = \tfrac12 f''(1)\, F\, \theta^2 + O(\theta^3).

Because :math:`f(u) = -\log u` (KL[q‖p]) and :math:`f(u) = \tfrac12\log^2 u`
(the mean of k2) both have :math:`f''(1) = 1`, k2 is nearly unbiased for small
:math:`\theta` and its bias :math:`\mathbb{E}[k_2] - \mathrm{KL}` is of third order.

Source: J. Schulman, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kl_core.estimation.divergences import DIVERGENCES, get_divergence
from kl_core.estimation.exact import f_divergence
from kl_core.estimation.paths import get_path
from kl_core.validation import as_float_array

__all__ = [
    "FisherCurve", "K2Bias", "divergence_along_path", "fisher_curve", "k2_bias_along_path",
    "quadratic_approximation", "smooth_divergences",
]


def _thetas(thetas: ArrayLike) -> np.ndarray:
    arr = np.atleast_1d(as_float_array(thetas, "thetas"))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("thetas must be a non-empty 1-d array")
    if not np.isfinite(arr).all():
        raise ValueError("thetas must be finite")
    return arr


def quadratic_approximation(name: str, fisher: float, thetas: ArrayLike) -> np.ndarray:
    r"""The Fisher quadratic :math:`\tfrac12 f''(1)\, F\, \theta^2`.

    Parameters
    ----------
    name : str
        A smooth entry of :data:`kl_core.estimation.divergences.DIVERGENCES`.
    fisher : float
        Fisher information :math:`F` at :math:`\theta = 0`.
    thetas : array_like
        Positions along the path.

    Returns
    -------
    numpy.ndarray
        The quadratic at each :math:`\theta`.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> quadratic_approximation("kl_qp", 1.0, [0.1]).tolist()
    [0.005000000000000001]
    """
    div = get_divergence(name)
    if div.f2_at_1 is None:
        raise ValueError(f"name={name!r}: f''(1) is undefined, so there is no quadratic term")
    return 0.5 * div.f2_at_1 * float(fisher) * _thetas(thetas) ** 2


def divergence_along_path(path: str, name: str, thetas: ArrayLike) -> np.ndarray:
    r"""Exact :math:`D_f(p_\theta, p_0) = \mathbb{E}_{p_0}[f(p_\theta / p_0)]` along a path.

    Parameters
    ----------
    path : str
        A key of :data:`kl_core.estimation.paths.PATHS`.
    name : str
        A key of :data:`kl_core.estimation.divergences.DIVERGENCES`.
    thetas : array_like
        Positions along the path.

    Returns
    -------
    numpy.ndarray
        The divergence at each :math:`\theta` (``inf`` where it diverges).

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> divergence_along_path("shift", "kl_qp", [1.0]).tolist()
    [0.5]
    """
    pth = get_path(path)
    get_divergence(name)
    base = pth.base
    return np.array([f_divergence(name, pth.at(t), base) for t in _thetas(thetas)])


@dataclass(frozen=True)
class FisherCurve:
    r"""An f-divergence along a path, next to its Fisher quadratic.

    Attributes
    ----------
    path : str
        Key of :data:`kl_core.estimation.paths.PATHS`.
    name : str
        Key of :data:`kl_core.estimation.divergences.DIVERGENCES` (a smooth entry).
    fisher : float
        The path's Fisher information :math:`F` at :math:`\theta = 0`.
    f2_at_1 : float
        :math:`f''(1)`.
    thetas : numpy.ndarray
        Positions along the path.
    exact : numpy.ndarray
        :math:`D_f(p_\theta, p_0)` (``inf`` where it diverges).
    quadratic : numpy.ndarray
        :math:`\tfrac12 f''(1)\, F\, \theta^2`.
    """

    path: str
    name: str
    fisher: float
    f2_at_1: float
    thetas: np.ndarray
    exact: np.ndarray
    quadratic: np.ndarray

    @property
    def ratio(self) -> np.ndarray:
        r""":math:`D_f(p_\theta, p_0) \,/\, \tfrac12 f''(1) F \theta^2`, which tends to 1 as :math:`\theta \to 0`.

        At :math:`\theta = 0` both are 0 and the ratio is its limit, 1; where
        :math:`D_f` is infinite the ratio is ``inf``.
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.quadratic > 0, self.exact / self.quadratic, 1.0)


def fisher_curve(path: str, name: str, thetas: ArrayLike) -> FisherCurve:
    r"""An f-divergence along a path and the quadratic it starts as.

    .. math:: D_f(p_\theta, p_0) = \mathbb{E}_{p_0}\!\left[f\!\left(\tfrac{p_\theta}{p_0}\right)\right]
              \quad\text{and}\quad \tfrac12 f''(1)\, F\, \theta^2,

    whose ratio tends to 1 as :math:`\theta \to 0`: with the score
    :math:`s = \partial_\theta \log p_\theta|_0`, :math:`r = p_\theta/p_0 = 1 + \theta s + O(\theta^2)`,
    and :math:`f(r) = f'(1)(r-1) + \tfrac12 f''(1)(r-1)^2 + O((r-1)^3)` with
    :math:`\mathbb{E}_{p_0}[r - 1] = 0` and :math:`\mathbb{E}_{p_0}[s^2] = F`.

    Parameters
    ----------
    path : str
        A key of :data:`kl_core.estimation.paths.PATHS`.
    name : str
        A smooth entry of :data:`kl_core.estimation.divergences.DIVERGENCES` (not ``"tv"``).
    thetas : array_like
        Positions along the path.

    Returns
    -------
    FisherCurve
        Exact values, the quadratic, and their ratio.

    Raises
    ------
    ValueError
        If ``name`` has no :math:`f''(1)` (total variation), or ``path``/``name`` is unknown.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html;
    I. Csiszár, "Information-type measures of difference of probability distributions" (1967).

    Examples
    --------
    >>> curve = fisher_curve("shift", "pearson", [0.0, 1.0])
    >>> curve.quadratic.tolist()
    [0.0, 1.0]
    >>> round(float(curve.ratio[1]), 6)  # chi^2 = e - 1 at theta = 1
    1.718282
    """
    pth = get_path(path)
    div = get_divergence(name)
    th = _thetas(thetas)
    quadratic = quadratic_approximation(name, pth.fisher, th)  # raises for TV
    return FisherCurve(
        path=pth.key,
        name=div.key,
        fisher=pth.fisher,
        f2_at_1=float(div.f2_at_1),
        thetas=th,
        exact=divergence_along_path(path, name, th),
        quadratic=quadratic,
    )


@dataclass(frozen=True)
class K2Bias:
    r"""How far :math:`\mathbb{E}_q[k_2]` departs from :math:`\mathrm{KL}[q\|p]` along a path.

    Attributes
    ----------
    thetas : numpy.ndarray
        Positions along the path.
    kl : numpy.ndarray
        :math:`\mathrm{KL}[p_0\|p_\theta]`, the target.
    mean_k2 : numpy.ndarray
        :math:`\mathbb{E}_{p_0}[k_2]`.
    """

    thetas: np.ndarray
    kl: np.ndarray
    mean_k2: np.ndarray

    @property
    def bias(self) -> np.ndarray:
        r""":math:`\mathbb{E}[k_2] - \mathrm{KL}`."""
        return self.mean_k2 - self.kl

    @property
    def relative_bias(self) -> np.ndarray:
        r""":math:`(\mathbb{E}[k_2] - \mathrm{KL}) / \mathrm{KL}`; NaN where KL = 0."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.kl > 0, self.bias / self.kl, np.nan)


def k2_bias_along_path(path: str, thetas: ArrayLike) -> K2Bias:
    r"""The bias of k2 as a function of the distance along a path.

    .. math:: \mathbb{E}_{p_0}[k_2] - \mathrm{KL}[p_0\|p_\theta]
              = D_{\frac12\log^2}(p_\theta, p_0) - D_{-\log}(p_\theta, p_0) = O(\theta^3)

    Parameters
    ----------
    path : str
        A key of :data:`kl_core.estimation.paths.PATHS`.
    thetas : array_like
        Positions along the path.

    Returns
    -------
    K2Bias
        KL, the mean of k2, and their difference.

    References
    ----------
    J. Schulman, "Approximating KL Divergence" (2020), http://joschu.net/blog/kl-approx.html

    Examples
    --------
    >>> round(float(k2_bias_along_path("shift", [1.0]).relative_bias[0]), 12)
    0.25
    """
    th = _thetas(thetas)
    return K2Bias(
        thetas=th,
        kl=divergence_along_path(path, "kl_qp", th),
        mean_k2=divergence_along_path(path, "k2", th),
    )


def smooth_divergences() -> Sequence[str]:
    r"""Keys of the registry entries with a defined :math:`f''(1)`.

    Only these have the Fisher quadratic :math:`\tfrac12 f''(1) F \theta^2`;
    total variation, :math:`\tfrac12|u-1|`, has a kink at 1.

    Returns
    -------
    list of str
        Keys of :data:`kl_core.estimation.divergences.DIVERGENCES`.
    """
    return [k for k, d in DIVERGENCES.items() if d.smooth]
