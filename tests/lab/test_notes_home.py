"""lab.notes.home: Home's three captions from the core's numbers."""

from kl_core.distributions import Gaussian
from kl_core.exact import estimator_moments, kl
from kl_core.montecarlo import simulate
from lab.notes import home as notes

KEYS = ("k1", "k2", "k3")


def test_captions_give_k1s_negative_share_and_k2s_exact_bias():
    q, p = Gaussian(0, 1), Gaussian(1, 1)
    sim = simulate(q, p, 2000, keys=KEYS)
    moments = {k: estimator_moments(k, q, p) for k in KEYS}
    caps = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, kl(q, p))
    assert caps["k1"].startswith(f"{sim['k1'].neg_fraction:.0%} of single values are negative")
    assert caps["k2"] == "Never negative, but its exact mean is 0.625, not 0.5: biased by +25.0%."
    assert "the KL itself" in caps["k3"]


def test_p_equal_q():
    q = Gaussian(0, 1)
    sim = simulate(q, q, 100, keys=KEYS)
    moments = {k: estimator_moments(k, q, q) for k in KEYS}
    caps = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, 0.0)
    assert set(caps.values()) == {"With p = q every log-ratio is 0, so every value is 0."}
