"""kl_core.gradients.demo: the toy setting of the Gradients page and the README's grad example."""

from __future__ import annotations

import pytest

from kl_core.gradients import demo
from kl_core.gradients.demo import demo_logits, demo_reward


def test_demo_setting_is_the_readme_example_and_repeats():
    assert demo_logits(6, 1.0).tolist() == [1.0, 0.0, -1.0, 0.5, 0.0, 0.0]
    assert demo_reward(6).tolist() == [1.0, 0.2, 0.5, -0.3, 0.0, 0.8]
    assert demo_logits(4, 0.0).tolist() == [0.0] * 4  # π_ref is uniform
    assert demo_logits(8, -2.0).tolist() == [-2.0, 0.0, 2.0, -1.0, 0.0, 0.0, -2.0, 0.0]
    assert demo_reward(2).tolist() == [1.0, 0.2]


def test_the_uneven_reference_drifts_from_its_own_logits():
    assert demo_logits(6, 0.0, reference="uneven").tolist() == list(demo.UNEVEN_REF)
    assert demo_logits(6, 1.0, reference="uneven").tolist() == [0.0, 2.0, 3.0, 0.0, 0.0, 0.0]
    assert demo_logits(8, -0.5, reference="uneven").tolist() == [3.0, -1.0, 1.5, 0.0, 0.0, 0.0, 3.0, -1.0]
    assert demo_logits(6, 1.0, reference="uniform").tolist() == demo_logits(6, 1.0).tolist()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: demo_logits(1, 1.0), "k must be between 2 and"),
        (lambda: demo_logits(2000, 1.0), "k must be between 2 and"),
        (lambda: demo_logits(6, float("inf")), "drift must be finite"),
        (lambda: demo_reward(2.5), "k must be a positive integer"),  # type: ignore[arg-type]
        (lambda: demo_logits(6, 1.0, reference="skewed"), "reference must be one of"),
    ],
)
def test_demo_refuses_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_module_exports_exist():
    for name in demo.__all__:
        assert hasattr(demo, name)
