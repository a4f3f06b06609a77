"""kl_core.validation: argument checks, and messages the app can translate."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

import kl_core
from kl_core.doctor.parse import UnreadableInput, decode
from kl_core.estimation.distributions import Gaussian, parse, practical_issue
from kl_core.validation import InputError, Message, by_key, check_positive, reason, registry_entry

CORE = Path(kl_core.__file__).parent
MESSAGE_CALLS = {"Message", "InputError", "UnreadableInput"}


def test_message_is_its_english_text_and_keeps_its_template():
    m = Message("{name} = {v:g} is outside [{lo:g}, {hi:g}]", name="sigma", v=1e-9, lo=1e-6, hi=1e6)
    assert m == "sigma = 1e-09 is outside [1e-06, 1e+06]"
    assert m.template == "{name} = {v:g} is outside [{lo:g}, {hi:g}]"
    assert dict(m.params) == {"name": "sigma", "v": 1e-9, "lo": 1e-6, "hi": 1e6}


def test_message_and_error_survive_pickling():
    m = Message("{n} rows", n=3)
    back = pickle.loads(pickle.dumps(m))
    assert (back, back.template, dict(back.params)) == ("3 rows", "{n} rows", {"n": 3})
    exc = UnreadableInput("the script has an unclosed ' quote (line {line})", line=4)
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is UnreadableInput
    assert (str(back), back.template, dict(back.params)) == (str(exc), exc.template, {"line": 4})


def test_input_error_is_a_value_error_naming_the_parameter():
    with pytest.raises(ValueError, match=r"sigma must be > 0, got -1") as info:
        check_positive(-1, "sigma")
    assert isinstance(info.value, InputError)
    assert info.value.template == "{name} must be > 0, got {value!r}"
    assert info.value.params["name"] == "sigma"


def test_a_sentence_without_params_is_taken_literally():
    exc = InputError("a dict {'a': 1} in a sentence")
    assert str(exc) == "a dict {'a': 1} in a sentence"
    assert exc.message.template.format() == str(exc)


def test_a_reason_nests_inside_the_outer_message():
    with pytest.raises(InputError) as info:
        parse("normal(0,-1)")
    exc = info.value
    assert str(exc) == "spec 'normal(0,-1)': sigma must be > 0, got -1.0"
    assert exc.template == "spec {spec!r}: {reason}"
    inner = exc.params["reason"]
    assert isinstance(inner, Message) and inner.template == "{name} must be > 0, got {value!r}"
    assert reason(ValueError("plain")) == "plain"


def test_practical_issue_is_a_message():
    issue = practical_issue(Gaussian(0, 1e-9))
    assert issue == "sigma = 1e-09 is outside [1e-06, 1e+06]"
    assert isinstance(issue, Message) and "{name}" in issue.template
    assert practical_issue(Gaussian(0, 1)) == ""


def test_doctor_input_errors_are_translatable():
    with pytest.raises(UnreadableInput) as info:
        decode(b"\x00abc")
    assert isinstance(info.value, InputError) and info.value.template == str(info.value)


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


@pytest.mark.parametrize(
    "path", sorted(set(CORE.rglob("*.py")) - {CORE / "validation.py"}),
    ids=lambda p: str(p.relative_to(CORE))
)
def test_every_template_is_a_literal(path):
    """Babel extracts a template only from a string literal: no f-strings, no variables for Message."""
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and _call_name(node) in MESSAGE_CALLS and node.args):
            continue
        first = node.args[0]
        where = f"{path.name}:{node.lineno}"
        assert not isinstance(first, (ast.JoinedStr, ast.BinOp)), f"{where}: template is an expression"
        if _call_name(node) == "Message":
            assert isinstance(first, ast.Constant) and isinstance(first.value, str), where


def test_registry_entry_returns_the_entry_or_names_the_parameter_and_the_keys():
    registry = {"b": 2, "a": 1}
    assert registry_entry(registry, "a", "key") == 1
    with pytest.raises(ValueError, match=r"^name must be one of \['a', 'b'\], got 'c'$"):
        registry_entry(registry, "c", "name")


def test_by_key_keys_entries_in_order_and_refuses_a_repeated_key():
    from types import SimpleNamespace as Entry

    a, b = Entry(key="a"), Entry(key="b")
    registry = by_key(b, a)
    assert list(registry) == ["b", "a"] and registry["a"] is a
    with pytest.raises(ValueError, match=r"distinct keys, got 'a' twice"):
        by_key(a, b, Entry(key="a"))

