"""Every user-visible message is clean text: no control character from a mistyped escape.

A ``"\\theta"`` written without ``r`` (or its backslash doubled) becomes a TAB and "heta" on
screen; ``"\\beta"`` a backspace, ``"\\frac"`` a form feed, ``"\\rho"`` a carriage return.
"""

import re
from pathlib import Path

from babel.messages.pofile import read_po

CATALOG = Path(__file__).resolve().parents[2] / "locale" / "zh" / "LC_MESSAGES" / "messages.po"
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # all but the newline


def test_no_message_holds_a_control_character():
    with CATALOG.open("rb") as f:
        catalog = read_po(f)
    bad = []
    for message in catalog:
        for text in (message.id if isinstance(message.id, tuple) else (message.id,)):
            if text and CONTROL.search(text):
                bad.append(text[:80])
    assert not bad, bad
    assert CONTROL.search("\theta") and not CONTROL.search(r"\theta")  # the check itself bites
