"""Estimating a KL from samples of q, and the exact values to check it against.

``distributions`` (the public face of ``families/``, one module per family, and
its registry), ``estimators`` (k1, k2, k3, kλ, …: the estimator registry),
``divergences`` (the f-divergence registry), ``exact`` (exact KL, f-divergences
and moments, by quadrature: ``_expectation``, ``_integrands``, ``_quadrature``),
``tails`` (is a moment finite?), ``montecarlo``, ``reliability``,
``sampling_distributions`` (standard errors of estimates), ``control_variates``,
``bregman``, ``fisher``, ``paths``, ``presets`` and ``published`` (Schulman's tables).
"""
