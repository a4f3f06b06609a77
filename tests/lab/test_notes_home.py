"""lab.notes.home: Home's three captions from the core's numbers."""

from kl_core.estimation.distributions import Gaussian
from kl_core.estimation.exact import estimator_moments, kl
from kl_core.estimation.montecarlo import simulate
from lab.format import number, share
from lab.notes import home as notes

KEYS = ("k1", "k2", "k3")


def test_captions_give_k1s_negative_share_and_k2s_exact_bias():
    q, p = Gaussian(0, 1), Gaussian(1, 1)
    sim = simulate(q, p, 2000, keys=KEYS)
    moments = {k: estimator_moments(k, q, p) for k in KEYS}
    caps = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, kl(q, p), 1.0)
    # as the chart's subtitle writes the share (at μ = 3 the caption said 7 %, the chart 6.6 %)
    assert caps["k1"].startswith(f"{share(sim['k1'].neg_fraction)} of single values are negative")
    assert caps["k2"] == "Never negative, but its exact mean is 0.625, not 0.5: biased by +25.0%."
    assert "the KL itself" in caps["k3"]


def test_a_bias_that_ends_in_a_half_keeps_its_digit():
    """At μ = 0.5 k2's bias is μ²/4 = 6.25 % exactly; one place printed 6.2 %, which reads as a slip."""
    q, p = Gaussian(0, 1), Gaussian(0.5, 1)
    moments = {k: estimator_moments(k, q, p) for k in KEYS}
    sim = simulate(q, p, 200, keys=KEYS)
    caps = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, kl(q, p), 0.5)
    assert caps["k2"].endswith("biased by +6.25%.")
    # μ = 3: the mean 14.625 is printed whole (4 digits gave 14.62, the table beside it 14.63)
    assert notes._k2_caption(14.625, 4.5).startswith("Never negative, but its exact mean is 14.625, not 4.5")


def test_p_equal_q():
    q = Gaussian(0, 1)
    sim = simulate(q, q, 100, keys=KEYS)
    moments = {k: estimator_moments(k, q, q) for k in KEYS}
    caps = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, 0.0, 0.0)
    assert set(caps.values()) == {"With p = q every log-ratio is 0, so every value is 0."}


def _table(mu: float, lang: str = "en"):
    import i18n

    q, p = Gaussian(0, 1), Gaussian(mu, 1)
    sim = simulate(q, p, 2000, keys=KEYS)
    moments = {k: estimator_moments(k, q, p) for k in KEYS}
    with i18n.using(lang):
        return notes.estimator_table(KEYS, sim, moments, kl(q, p), 2000), sim, moments


def test_the_table_holds_the_core_numbers_under_its_headers():
    table, sim, moments = _table(1.0)
    df = table.frame.set_index("estimator")
    assert list(df.index) == list(KEYS)
    for k in KEYS:
        assert df.loc[k, "mean of 2,000 values"] == sim[k].mean
        assert df.loc[k, "exact mean"] == moments[k].mean
        assert df.loc[k, "share of values < 0"] == sim[k].neg_fraction
        assert df.loc[k, "per-sample std (exact)"] == moments[k].std
    assert (df["exact KL[q‖p]"] == 0.5).all()
    assert set(table.formats) == set(df.columns)  # every number column has its format


def test_the_table_in_chinese_has_the_same_numbers():
    en, _, _ = _table(1.0)
    zh, _, _ = _table(1.0, "zh")
    assert list(zh.frame.columns) == ["估计器", "2,000 个值的均值", "精确均值", "精确 KL[q‖p]",
                                      "值 < 0 的比例", "单样本标准差（精确）"]
    assert (zh.frame.to_numpy() == en.frame.to_numpy()).all()
    assert list(zh.formats.values()) == list(en.formats.values())


def test_captions_in_chinese_keep_the_numbers():
    import i18n

    q, p = Gaussian(0, 1), Gaussian(1, 1)
    sim = simulate(q, p, 2000, keys=KEYS)
    moments = {k: estimator_moments(k, q, p) for k in KEYS}
    with i18n.using("zh"):
        caps = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, kl(q, p), 1.0)
    assert caps["k2"] == "从不为负，但它的精确均值是 0.625，而不是 0.5：有偏，偏差为 +25.0%。"
    assert caps["k1"].startswith(f"{share(sim['k1'].neg_fraction)} 的单个值为负")


def test_table_caption_compares_the_spreads_it_is_given():
    q = Gaussian(0, 1)
    for mu, word in ((0.5, "smaller"), (2.0, "larger")):
        p = Gaussian(mu, 1)
        moments = {k: estimator_moments(k, q, p) for k in KEYS}
        text = notes.table_caption(q.name, p.name, 20_000, 0, moments)
        assert text.startswith(f"q = {q.name}, p = {p.name}: the same 20,000 draws")
        assert f"k3's spread is {word}" in text
    same = {k: estimator_moments(k, q, q) for k in KEYS}
    assert "spread" not in notes.table_caption(q.name, q.name, 20_000, 0, same)


def _captions(mu: float):
    q, p = Gaussian(0, 1), Gaussian(mu, 1)
    sim = simulate(q, p, 20_000, seed=0, keys=KEYS, sample_size=20_000)
    moments = {k: estimator_moments(k, q, p) for k in KEYS}
    return notes.histogram_captions({k: sim[k] for k in KEYS}, moments, kl(q, p), mu), sim


def test_a_kl_that_rounds_to_zero_is_not_called_p_equal_q():
    """μ = 1e-200: KL = 5e-401 rounds to 0, but k1 = −μx is not 0 (it said "With p = q … every value is 0")."""
    caps, sim = _captions(1e-200)
    assert not any("p = q" in c for c in caps.values())
    size = float(abs(sim["k1"].samples).max())
    assert caps["k1"] == ("KL[q‖p] is 0 to double precision here, but the values are not all 0: they lie "
                          f"within about {size:.4g} of 0.")
    assert not sim["k2"].samples.any()
    assert caps["k2"] == "KL[q‖p] is 0 to double precision here, and so is every value."


def test_k2s_caption_says_not_only_where_the_digits_differ():
    """μ = 0.005: E[k2] = KL(1 + μ²/4); it said "its exact mean is 1.25e-05, not 1.25e-05: biased by +0.0%"."""
    caps, _ = _captions(0.005)
    assert caps["k2"] == ("Never negative; its exact mean agrees with the KL, 1.25e-05, to the digits shown, "
                          "but is biased by +0.00062%.")
    caps, _ = _captions(0.03)  # the digits differ, the bias under 0.05%
    assert caps["k2"] == "Never negative, but its exact mean is 0.0004501, not 0.00045: biased by +0.022%."
    caps, _ = _captions(1e-8)  # μ²/4 = 2.5e-17 is below what the quotient of two doubles resolves
    assert caps["k2"] == ("Never negative, and its exact mean agrees with the KL, 5e-17, to better than one "
                          "part in 10¹¹.")


def test_the_table_shows_k2s_exact_mean_and_the_kl_with_the_captions_digits():
    """μ = 0.05: the caption said "its exact mean is 0.001251, not 0.00125" while the table ("%.5f")
    showed both as 0.00125."""
    table, sim, moments = _table(0.05)
    df = table.frame.set_index("estimator")
    caption = notes.histogram_captions(sim, moments, 0.05**2 / 2, 0.05)["k2"]
    mean = table.formats["exact mean"] % df.loc["k2", "exact mean"]
    kl_shown = table.formats["exact KL[q‖p]"] % df.loc["k2", "exact KL[q‖p]"]
    assert mean == "0.001251" and kl_shown == "0.00125"
    assert f"its exact mean is {mean}, not {kl_shown}" in caption


def test_k3s_caption_says_a_sample_mean_can_miss_where_k3_is_noisier_than_k1():
    """At μ = 3 the panel showed a sample mean of 4.28 under "its exact mean is the KL itself" (4.5)."""
    for mu, noisier in ((3.0, True), (0.5, False)):
        q, p = Gaussian(0, 1), Gaussian(mu, 1)
        moments = {k: estimator_moments(k, q, p) for k in KEYS}
        sim = simulate(q, p, 2000, keys=KEYS)
        cap = notes.histogram_captions({k: sim[k] for k in KEYS}, moments, kl(q, p), mu)["k3"]
        assert ("noisier than k1" in cap) == noisier
        assert (f"(this one: {number(sim['k3'].mean)})" in cap) == noisier


def test_a_std_below_a_normal_double_is_not_printed_as_a_number():
    """An audit: ?mu=1e-100 gave "per-sample std 0 against 1e-100" (k3's is μ²/√2 = 7e-201, a variance of 5e-401
    computed as 0), and ?mu=1e-80 printed a std 0.2 % off from a subnormal variance."""
    import math

    from kl_core.estimation.distributions import Gaussian
    from kl_core.estimation.exact import estimator_moments

    for mu in (1e-80, 1e-100):
        m = {k: estimator_moments(k, Gaussian(0, 1), Gaussian(mu, 1)) for k in ("k1", "k2", "k3")}
        text = notes.table_caption("N(0, 1)", "N(μ, 1)", 20_000, 0, m)
        assert "per-sample std below 1.492e-154 against" in text and "*None* in the table" in text
        table = notes.estimator_table(("k1", "k2", "k3"), {k: _summary() for k in m}, m, mu * mu / 2, 20_000)
        stds = table.frame.iloc[:, -1].tolist()
        assert not math.isnan(stds[0]) and math.isnan(stds[2])
    plain = {k: estimator_moments(k, Gaussian(0, 1), Gaussian(0.5, 1)) for k in ("k1", "k2", "k3")}
    assert "*None*" not in notes.table_caption("N(0, 1)", "N(0.5, 1)", 20_000, 0, plain)


def test_k3_is_said_to_be_carried_by_rare_values_only_where_it_is_far_noisier():
    """An audit: at μ = 1.15 k3's std is 4 % above k1's, yet the caption said rare, huge values carry its mean."""
    from kl_core.estimation.distributions import Gaussian
    from kl_core.estimation.exact import estimator_moments

    def caption(mu):
        m = {k: estimator_moments(k, Gaussian(0, 1), Gaussian(mu, 1)) for k in ("k1", "k3")}
        return notes._k3_caption(_summary(), m["k3"], m["k1"])

    assert "rare, huge values" not in caption(1.15) and "rare, huge values" in caption(2.0)


def _summary():
    """One estimator's run at μ = 0.5 (the captions and the table read only its mean and share < 0)."""
    return simulate(Gaussian(0, 1), Gaussian(0.5, 1), 200, seed=0, keys=("k1",))["k1"]
