"""Claim 10 (issue 17): the rb counterexample's description is true at every T the page allows.

The old help said "log π_θ/π_ref is the same for both likely sequences, so Σk1
barely varies": true at T = 2 only.  The page now describes the pair in words
true at every T and adds both exact stds at the chosen T, with the larger one
named from the numbers.  Independent check: the two likely sequences 0…0 and
1…1 enumerated by hand from the chains' log-probabilities.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from kl_core.sequences.estimators import RB_COUNTEREXAMPLE, exact_curves
from kl_core.sequences.markov import next_token_kl, parse_markov
from lab.notes import sequences as notes

CURVES = exact_curves(*RB_COUNTEREXAMPLE, notes.MAX_LENGTH)
POLICY, REF = (parse_markov(s) for s in RB_COUNTEREXAMPLE)


def _two_sequences(length: int) -> tuple[np.ndarray, np.ndarray]:
    """Σk1 and rb of 0…0 and of 1…1, by enumeration (each has probability ½ up to e^-30)."""
    seqs = np.array([[0] * length, [1] * length])
    sum_k1 = POLICY.log_prob(seqs) - REF.log_prob(seqs)
    first_kl, per_prefix = next_token_kl(POLICY, REF)  # KL of the first token, KL after each token
    rb = first_kl + (length - 1) * per_prefix[seqs[:, 0]]
    return sum_k1, rb


@pytest.mark.parametrize("length", notes.LENGTHS)
def test_the_stds_and_the_verdict_shown_at_every_t(length):
    text = notes.counterexample_text(CURVES, length)
    m = re.search(r"At T = (\d+) the std of Σk1 is (\S+) and rb's is (\S+): (.*)$", text)
    assert m is not None, text
    assert int(m.group(1)) == length
    sd1, sdrb = float(CURVES.std["sum_k1"][length - 1]), float(CURVES.std["rb"][length - 1])
    assert float(m.group(2)) == pytest.approx(sd1, rel=5e-4, abs=1e-12)
    assert float(m.group(3)) == pytest.approx(sdrb, rel=5e-4, abs=1e-12)
    # independent: two equally likely sequences, so each std is half their difference
    k1_pair, rb_pair = _two_sequences(length)
    assert sd1 == pytest.approx(abs(k1_pair[0] - k1_pair[1]) / 2, abs=1e-4)
    assert sdrb == pytest.approx(abs(rb_pair[0] - rb_pair[1]) / 2, abs=1e-4)
    if length >= 2:  # |T − 2|/2 against (T − 1)/2
        assert sd1 == pytest.approx(abs(length - 2) / 2, abs=1e-4)
        assert sdrb == pytest.approx((length - 1) / 2, abs=1e-4)
    verdict = m.group(4)
    if sdrb > sd1:
        assert verdict == "rb is the noisier."
    else:
        assert verdict == "here Σk1 is the noisier."


def test_the_static_words_hold_at_every_t():
    """Each token after a first 0 adds 1 to both; after a first 1, 0; the first token 1 adds 1 more."""
    text = notes.counterexample_text(CURVES, 2)
    assert "Σk1 is the same for both likely sequences" in text
    for length in notes.LENGTHS:
        k1_pair, rb_pair = _two_sequences(length)
        later = length - 1
        first_gap = k1_pair[1] - (k1_pair[0] - later)  # first-token log-ratio: token 1 minus token 0
        assert first_gap == pytest.approx(1.0, abs=1e-9)
        assert rb_pair[0] - rb_pair[1] == pytest.approx(later, abs=1e-9)   # rb: +1 per later token after 0
        assert k1_pair[0] - k1_pair[1] == pytest.approx(later - 1, abs=1e-9)
    assert float(CURVES.std["sum_k1"][1]) < 1e-4   # at T = 2 the offset cancels the one later token


def test_the_menu_help_names_the_first_t_from_which_rb_is_noisier():
    help_text = notes.source_help()
    t = int(re.search(r"at every T ≥ (\d+)", help_text).group(1))
    worse = CURVES.std["rb"] > CURVES.std["sum_k1"]
    assert worse[t - 1:].all()                  # every T from t to the slider's end, not only the steps
    assert not worse[: t - 1].any()             # and not before
    assert t in notes.LENGTHS and t == 2
