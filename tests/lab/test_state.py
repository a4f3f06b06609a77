"""lab.state's options: a sequence, or a mapping of option to its untranslated label."""

from __future__ import annotations

import i18n
from i18n import N_
from lab.state import _labelled

SAMPLERS = {"on": N_("on-policy"), "old": N_("older policy")}


def test_a_mapping_gives_its_keys_shown_as_its_labels_translated():
    options, fmt = _labelled(SAMPLERS, None)
    assert options == ["on", "old"]
    assert [fmt(o) for o in options] == ["on-policy", "older policy"]
    with i18n.using("zh"):
        shown = [fmt(o) for o in options]
    assert shown != ["on-policy", "older policy"] and all(shown)


def test_a_format_func_given_wins_over_the_labels():
    options, fmt = _labelled(SAMPLERS, str.upper)
    assert options == ["on", "old"] and fmt("on") == "ON"


def test_a_sequence_is_shown_as_text():
    options, fmt = _labelled((1, 2, 5), None)
    assert options == [1, 2, 5] and fmt(5) == "5"
