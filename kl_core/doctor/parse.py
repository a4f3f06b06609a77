r"""Safe readers for the config doctor: shell launch scripts, YAML, JSON and Python, never run.

Users paste what they have: a launch script with Hydra overrides (verl), a
``train_ppo_ray`` command line (OpenRLHF), a YAML or JSON config for
``trl grpo``/``trl rloo``, or Python holding a ``GRPOConfig(...)`` call.  This
module turns any of them into a list of :class:`RawSetting` without executing
anything the user gave:

* the size is capped at :data:`MAX_BYTES`; NUL bytes or text that is not UTF-8
  count as a binary file;
* a shell script is *read*, not run: backslash continuations are joined,
  comments dropped, quotes removed, and ``$VAR`` / ``${VAR:-default}`` /
  ``"${ARRAY[@]}"`` replaced by what the script itself assigned at top level
  (a value assigned inside ``if``/``case``/loops, a command substitution or an
  unset variable stays *not literal*, and is reported as such);
* Hydra overrides go through Hydra's own override grammar (``hydra-core``'s
  ``OverridesParser``, imported only when a verl command is read), which
  types each value without running anything;
* YAML goes through PyYAML's safe loader only, so tags that construct objects
  (``!!python/object``) are refused; aliases may not expand past
  :data:`MAX_VALUES` values;
* Python goes through :func:`ast.parse` only: keyword arguments of the config
  call are taken when :func:`ast.literal_eval` accepts them, and every other
  argument is named as not literal;
* anything unreadable raises :class:`UnreadableInput` with one clear sentence.

Why the shell reader is this module's own: :mod:`shlex` splits words but drops
which parts were quoted (``'$X'`` stays ``$X``, ``"$X"`` expands), knows no
arrays, ``${VAR:-default}`` or ``if``/``case`` branches, and stops at the first
unbalanced quote; a shell parser such as ``bashlex`` gives a tree but expands
nothing.  What the doctor needs, and no library gives without running the
script, is the launch command with the script's *own* top-level assignments
substituted and everything else marked not literal, so that is what
:func:`_tokenize` and :class:`_Env` keep.  Everything that has a parser of its
own uses it: Hydra's grammar for overrides, PyYAML, :mod:`json`, :mod:`ast`.

Which library and release the settings belong to is decided by
:mod:`kl_core.doctor.diagnosis`.  Source of the formats: Hydra's override grammar
(``key=value``, ``+key``, ``++key``, ``~key``), Python's :mod:`argparse`, and the
example launch scripts of verl, OpenRLHF and TRL; the estimators the configs
select are J. Schulman's, "Approximating KL Divergence" (2020),
http://joschu.net/blog/kl-approx.html.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kl_core._docfill import docfill
from kl_core.audit import table_files
from kl_core.libraries.snippets import marked_message
from kl_core.validation import InputError, Message

__all__ = [
    "CONFIG_CALLS", "MAX_BYTES", "MAX_VALUES", "PARSER_CALLS", "Command", "Entry",
    "ParsedInput", "RawSetting", "UnreadableInput", "Word", "decode", "entry_points", "joined",
    "hydra_flag", "parse_flags", "parse_overrides", "read", "looks_python", "read_python", "read_shell",
    "read_structured", "scalar", "too_large", "as_double",
]

#: Docstring sections several functions here share (filled in by :func:`kl_core._docfill.docfill`).
_DOC_SECTIONS = {
    "text_params": r"""Parameters
----------
text : str
    A launch script or command line (already :func:`decode`-d).""",
}

MAX_BYTES = 256 * 1024
"""Largest input read (256 KiB): a launch script or config is a few KiB."""

MAX_VALUES = 50_000
"""Most values a YAML/JSON document may expand to (aliases included)."""

CONFIG_CALLS = ("GRPOConfig", "RLOOConfig", "PPOConfig")
"""Config classes whose keyword arguments the Python reader takes."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_PLAIN = re.compile(r"[^\s\\'\"$`;&|<>()#]+")
_QUOTED = re.compile(r'[^"\\$`]+|.', re.S)
_ARRAY_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_MAX_DEPTH = 20  # nesting of ${...} defaults followed before giving up
_OPEN = {"if", "case", "for", "while", "until", "select"}
_CLOSE = {"fi", "esac", "done"}
_LEADING = {"then", "else", "elif", "do", "!", "time", "exec", "nohup", "command", "builtin"}
_DECLARE = {"export", "declare", "local", "readonly", "typeset"}


def joined(sep: str, items: Any) -> str:
    """``sep.join(items)``, as a :class:`Message` when an item is one (so each item is translated).

    The template is only placeholders and ``sep``: the app translates the items, not the list.

    Parameters
    ----------
    sep : str
        The separator, e.g. ``"; "``.
    items : iterable of str
        Texts, some of them :class:`Message`.

    Returns
    -------
    str
        The joined text; a :class:`Message` with params ``m0``, ``m1`` … when an item is one.
    """
    items = list(items)
    if not any(isinstance(i, Message) for i in items):
        return sep.join(items)
    template = sep.replace("{", "{{").replace("}", "}}").join("{m" + str(i) + "}" for i in range(len(items)))
    return marked_message(template, **{"m" + str(i): v for i, v in enumerate(items)})


class UnreadableInput(InputError):
    """The input cannot be read; the message is one sentence saying why (translatable in the app)."""


@dataclass(frozen=True)
class RawSetting:
    """One setting as the user wrote it.

    Attributes
    ----------
    key : str
        The key as written, without Hydra's ``+``/``++``/``~`` (``"algorithm.kl_penalty"``,
        ``"--algo.kl.estimator"``, ``"beta"``).
    value : Any
        The value as a Python scalar or list (None when it is not literal).
    text : str
        The value as written.
    literal : bool
        False when the value depends on something the doctor cannot read
        (an environment variable, a command, a Python expression).
    op : str
        Hydra's prefix: ``""``, ``"+"``, ``"++"`` or ``"~"`` (delete).
    origin : str
        Where a literal value came from when it is not written in place,
        e.g. ``"default of $KL_COEF in the script"``.
    """

    key: str
    value: Any
    text: str
    literal: bool = True
    op: str = ""
    origin: str = ""


@dataclass(frozen=True)
class Word:
    """One shell word after the script's own variables are substituted.

    Attributes
    ----------
    text : str
        The word; parts the doctor cannot resolve keep their source (``$HOME``).
    opaque_from : int
        Index in :attr:`text` where the first unresolved part starts, or -1.
    origin : str
        Which script variable defaults were used, if any.
    """

    text: str
    opaque_from: int = -1
    origin: str = ""

    @property
    def literal(self) -> bool:
        """True if every part of the word is known."""
        return self.opaque_from < 0


@dataclass(frozen=True)
class Command:
    """One simple command of a script, expanded.

    Attributes
    ----------
    words : tuple of Word
    line : int
        Its first line (1-based).
    depth : int
        0 at top level; more inside ``if``/``case``/loops or after ``&&``/``||``.
    """

    words: tuple[Word, ...]
    line: int
    depth: int


@dataclass(frozen=True)
class ParsedInput:
    """What a reader found.

    Attributes
    ----------
    kind : str
        ``"command"``, ``"yaml"``, ``"json"`` or ``"python"``.
    settings : tuple of RawSetting
        For YAML, JSON and Python; commands keep their words in :attr:`arguments`
        until the trainer's syntax is known.
    arguments : tuple of Word
        The words after the trainer's name (commands only).
    names : tuple of str
        What named the trainer: a module (``"verl.trainer.main_ppo"``), a CLI
        (``"trl grpo"``) or a config class (``"GRPOConfig"``).
    command : str or None
        The start of the command that was read.
    notes : tuple of str
        What was skipped, and why.
    """

    kind: str
    settings: tuple[RawSetting, ...] = ()
    arguments: tuple[Word, ...] = ()
    names: tuple[str, ...] = ()
    command: str | None = None
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- #
# Bytes to text
# --------------------------------------------------------------------------- #
def decode(data: bytes | str) -> str:
    """Text of an input: at most :data:`MAX_BYTES`, UTF-8, no NUL bytes; newlines normalised.

    Parameters
    ----------
    data : bytes or str
        The file's bytes or the pasted text.

    Returns
    -------
    str

    UTF-16 and UTF-32 text with a byte-order mark, and UTF-16 without one (every
    other byte NUL, as Windows editors write it), is decoded; a UTF-8 BOM is dropped.

    Raises
    ------
    UnreadableInput
        If it is too large, binary or not UTF-8.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise too_large(len(raw))
    wide = _utf16(raw)
    if wide is not None:
        return decode(wide)
    if b"\x00" in raw:
        what = next((w for magic, w in table_files.MAGIC if raw.startswith(magic)), None)
        if what is not None:
            raise UnreadableInput(
                "the input is not text: it looks like {what}; paste or upload a launch script or a config",
                what=what,
            )
        raise UnreadableInput("the input looks like a binary file (it contains NUL bytes); paste a launch script or a config")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableInput(
            "the input is not UTF-8 text (byte {byte} cannot be decoded); paste a launch script or a config",
            byte=exc.start,
        ) from None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise UnreadableInput("the input is empty; paste a launch script or a config")
    return text


def _utf16(raw: bytes) -> str | None:
    """The text of UTF-16/32 input (with a BOM, or UTF-16 whose every other byte is NUL), else None."""
    import codecs

    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(bom):
            try:
                return raw.decode(enc)
            except UnicodeDecodeError:
                return None
    if len(raw) >= 4 and len(raw) % 2 == 0:
        even, odd = raw[0::2], raw[1::2]
        for zeros, other, enc in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
            if zeros.count(0) >= 0.9 * len(zeros) and other.count(0) == 0:
                try:
                    return raw.decode(enc)
                except UnicodeDecodeError:
                    return None
    return None


def too_large(size: int) -> UnreadableInput:
    """The error for an input of ``size`` bytes, more than :data:`MAX_BYTES`, naming its real size.

    Parameters
    ----------
    size : int
        The input's size in bytes.

    Returns
    -------
    UnreadableInput
    """
    shown = f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 1024:.0f} KiB"
    return UnreadableInput(
        "the input is {size}; the doctor reads at most {most} KiB (a launch script or config is a few KiB)",
        size=shown, most=MAX_BYTES // 1024,
    )


# --------------------------------------------------------------------------- #
# Scalars
# --------------------------------------------------------------------------- #
_INT = re.compile(r"^[+-]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[+-]?((\d[\d_]*)?\.\d+([eE][+-]?\d+)?|\d[\d_]*\.?([eE][+-]?\d+)?|\d[\d_]*\.)$")


def scalar(text: str) -> Any:
    """A command-line value as Hydra and argparse users mean it.

    ``true``/``false`` (any case) → bool, ``null``/``None`` → None, integers and
    floats (``1e-3``, ``inf``) → numbers, ``[a, b]`` and ``{a: 1}`` → a list or
    dict (through PyYAML's safe loader), quoted text → the text; anything else
    stays a string.

    Parameters
    ----------
    text : str
        The value as written.

    Returns
    -------
    Any
    """
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none", "~"):
        return None
    if _INT.match(t):
        return int(t.replace("_", ""))
    if _FLOAT.match(t) or low in ("inf", "+inf", "-inf", "nan"):
        return float(t.replace("_", ""))
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    if t[:1] in "[{" and t[-1:] in "]}":
        try:
            import yaml

            return yaml.safe_load(t)
        except Exception:  # noqa: BLE001 - a value that is not YAML stays text
            return t
    return t


def as_double(value: Any) -> float | None:
    """A setting's value as the double a trainer computes with, or None if it is not a number.

    A bool or None is not a number; an integer past the largest double is ±inf, as
    ``float("1e400")`` is (and as a float32 tensor makes any value past 3.4e38); a string
    is read as :func:`float` reads it.

    Parameters
    ----------
    value : Any
        A value from :func:`scalar`, a config file or a default.

    Returns
    -------
    float or None

    Examples
    --------
    >>> as_double(10**400), as_double("0.1"), as_double(True), as_double("k3")
    (inf, 0.1, None, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, float):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def _is_interpolation(text: str) -> bool:
    return "${" in text


# --------------------------------------------------------------------------- #
# Shell: tokens
# --------------------------------------------------------------------------- #
@dataclass
class _Part:
    kind: str  # lit | var | arr | args | cmd
    text: str
    name: str = ""
    op: str = ""
    default: str = ""


@dataclass
class _Tok:
    parts: list[_Part] = field(default_factory=list)
    quoted: bool = False
    line: int = 0

    def add(self, kind: str, text: str, **kw: str) -> None:
        if kind == "lit" and self.parts and self.parts[-1].kind == "lit":
            self.parts[-1].text += text
        else:
            self.parts.append(_Part(kind, text, **kw))

    @property
    def plain(self) -> str | None:
        """The word's text if it is all literal."""
        if all(p.kind == "lit" for p in self.parts):
            return "".join(p.text for p in self.parts)
        return None


@dataclass
class _Stmt:
    toks: list[_Tok]
    line: int
    conditional: bool  # after && or ||
    arrays: dict[int, list[_Tok]] = field(default_factory=dict)  # token index -> array body


def _matching(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the bracket matching text[i] == open_ (quotes respected)."""
    depth, j, n = 0, i, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "'" and open_ != "'":
            k = text.find("'", j + 1)
            j = n if k < 0 else k + 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise UnreadableInput(
        "the script has an unclosed {open!r} (line {line})", open=open_, line=text.count(chr(10), 0, i) + 1
    )


def _dollar(text: str, i: int, tok: _Tok) -> int:
    """Read an expansion starting at text[i] == '$'; return the index after it."""
    n = len(text)
    nxt = text[i + 1] if i + 1 < n else ""
    if nxt == "(":
        end = _matching(text, i + 1, "(", ")")
        tok.add("cmd", text[i:end])
        return end
    if nxt == "{":
        end = _matching(text, i + 1, "{", "}")
        inner = text[i + 2 : end - 1]
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]$", inner)
        if m:
            tok.add("arr", text[i:end], name=m.group(1))
            return end
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])(:?[-=+?])?(.*)$", inner, re.S)
        if m and (m.group(2) or not m.group(3)):
            tok.add("var", text[i:end], name=m.group(1), op=m.group(2) or "", default=m.group(3) or "")
        else:  # ${#x}, ${x/a/b}, ${x:0:3}: not followed
            tok.add("cmd", text[i:end])
        return end
    if nxt in ("@", "*"):
        tok.add("args", text[i : i + 2])
        return i + 2
    m = _NAME.match(text, i + 1)
    if m:
        tok.add("var", text[i : m.end()], name=m.group(0))
        return m.end()
    if nxt.isdigit() or nxt in "#?$!-":
        tok.add("cmd", text[i : i + 2])
        return i + 2
    if nxt == "'":  # $'...' ANSI-C quoting
        end = text.find("'", i + 2)
        end = n if end < 0 else end
        tok.add("lit", text[i + 2 : end].encode("utf-8").decode("unicode_escape", "replace"))
        return end + 1
    tok.add("lit", "$")
    return i + 1


def _tokenize(text: str) -> list[_Stmt]:
    """Split a script into statements of tokens; nothing is executed."""
    stmts: list[_Stmt] = []
    toks: list[_Tok] = []
    arrays: dict[int, list[_Tok]] = {}
    cur: _Tok | None = None
    line = 1
    stmt_line = 1
    conditional = False
    array_stack: list[tuple[list[_Tok], dict[int, list[_Tok]], int]] = []
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal cur
        if cur is not None:
            toks.append(cur)
            cur = None

    def end_stmt(next_conditional: bool = False) -> None:
        nonlocal toks, arrays, stmt_line, conditional
        end_word()
        if array_stack:  # inside NAME=( ... ): newlines only separate elements
            return
        if toks:
            stmts.append(_Stmt(toks, stmt_line, conditional, arrays))
        toks, arrays = [], {}
        conditional = next_conditional
        stmt_line = line

    def word() -> _Tok:
        nonlocal cur
        if cur is None:
            cur = _Tok(line=line)
        return cur

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c == "\\" and i + 1 == n:  # a backslash ending the file, with no newline after it: bash drops it
            i += 1
            continue
        if c in " \t":
            end_word()
            i += 1
            continue
        if c == "\n":
            line += 1
            end_stmt()
            i += 1
            continue
        if c == "#" and cur is None:
            k = text.find("\n", i)
            i = n if k < 0 else k
            continue
        if c == ";":
            end_stmt()
            i += 2 if text.startswith(";;", i) else 1
            continue
        if c in "&|":
            two = text[i : i + 2]
            if c == "&" and cur is None and two == "&>":  # &> file
                i += 2
                i = _skip_target(text, i)
                continue
            end_stmt(next_conditional=two in ("&&", "||") or conditional)
            i += 2 if two in ("&&", "||", "|&") else 1
            continue
        if c in "<>":
            if cur is not None and cur.plain is not None and cur.plain.isdigit():
                cur = None  # the fd of 2>&1
            else:
                end_word()
            j = i + 1
            while j < n and text[j] in "<>&|":
                j += 1
            if text[i:j] in ("<<", "<<-"):
                i = _skip_heredoc(text, j)
                continue
            if j < n and text[j].isdigit() and text[j - 1] == "&":
                j += 1
                i = j
                continue
            i = _skip_target(text, j)
            continue
        if c == "(":
            if cur is not None and cur.plain is not None and _ARRAY_START.fullmatch(cur.plain):
                end_word()
                array_stack.append((toks, arrays, len(toks) - 1))
                toks, arrays = [], {}
                i += 1
                continue
            end_word()
            toks.append(_Tok([_Part("lit", "(")], line=line))
            i += 1
            continue
        if c == ")":
            end_word()
            if array_stack:
                body = toks
                toks, arrays, index = array_stack.pop()
                arrays[index] = body
            else:
                toks.append(_Tok([_Part("lit", ")")], line=line))
            i += 1
            continue
        if c == "'":
            k = text.find("'", i + 1)
            if k < 0:
                raise UnreadableInput("the script has an unclosed ' quote (line {line})", line=line)
            w = word()
            w.quoted = True
            w.add("lit", text[i + 1 : k])
            line += text.count("\n", i, k)
            i = k + 1
            continue
        if c == '"':
            w = word()
            w.quoted = True
            j = i + 1
            while True:
                if j >= n:
                    raise UnreadableInput('the script has an unclosed " quote (line {line})', line=line)
                d = text[j]
                if d == '"':
                    j += 1
                    break
                if d == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                    if text[j + 1] != "\n":
                        w.add("lit", text[j + 1])
                    j += 2
                    continue
                if d == "$":
                    j = _dollar(text, j, w)
                    continue
                if d == "`":
                    k = text.find("`", j + 1)
                    k = n - 1 if k < 0 else k
                    w.add("cmd", text[j : k + 1])
                    j = k + 1
                    continue
                m = _QUOTED.match(text, j)
                w.add("lit", m.group(0))
                line += m.group(0).count("\n")
                j = m.end()
            i = j
            continue
        if c == "$":
            j = _dollar(text, i, word())
            line += text.count("\n", i, j)
            i = j
            continue
        if c == "`":
            k = text.find("`", i + 1)
            k = n - 1 if k < 0 else k
            word().add("cmd", text[i : k + 1])
            i = k + 1
            continue
        if c == "\\" and i + 1 < n:
            word().add("lit", text[i + 1])
            i += 2
            continue
        m = _PLAIN.match(text, i)  # a run of ordinary characters in one step
        word().add("lit", m.group(0) if m else c)
        i = m.end() if m else i + 1
    if array_stack:
        raise UnreadableInput("the script has an unclosed array: NAME=( without its )")
    end_stmt()
    return stmts


def _skip_target(text: str, j: int) -> int:
    """Skip the file name after a redirection."""
    n = len(text)
    while j < n and text[j] in " \t":
        j += 1
    while j < n and text[j] not in " \t\n;&|":
        if text[j] in "'\"":
            k = text.find(text[j], j + 1)
            j = n if k < 0 else k + 1
        else:
            j += 1
    return j


#: ``read -r -d '' NAME <<EOF … EOF``: a here-document read into a variable (OpenRLHF's older example scripts).
_HEREDOC_READ = re.compile(
    r"^([ \t]*)read((?:[ \t]+-[A-Za-z]+(?:[ \t]+(?:''|\"\"))?)*)[ \t]+([A-Za-z_]\w*)[ \t]*<<-?[ \t]*(['\"]?)"
    r"([A-Za-z_0-9]+)\4[ \t]*\n(.*?)\n[ \t]*\5[ \t]*$", re.M | re.S)


def _heredoc_reads(text: str) -> str:
    """The script with each here-document ``read`` into a variable written as an assignment of its body, on as
    many lines (so every later line keeps its number): ``NAME="…"``, expanded as bash expands the body, or
    ``NAME='…'`` where the delimiter is quoted (no expansion)."""
    def assign(m: re.Match[str]) -> str:
        indent, name, quote, body = m[1], m[3], m[4], m[6]
        if quote:
            return m[0] if "'" in body else f"{indent}{name}='\n{body}\n'"
        body = body.replace("\\\n", " \n").replace('"', '\\"')  # a line continuation is a space, as in bash
        return f'{indent}{name}="\n{body}\n"'

    return _HEREDOC_READ.sub(assign, text)


def _skip_heredoc(text: str, j: int) -> int:
    """Skip a here-document: its delimiter word, then lines up to the delimiter."""
    m = re.match(r"\s*(['\"]?)([A-Za-z_0-9]+)\1", text[j:])
    if not m:
        return j
    delim = m.group(2)
    k = text.find("\n", j)
    if k < 0:
        return len(text)
    end = re.search(rf"^\s*{re.escape(delim)}\s*$", text[k + 1 :], re.M)
    return len(text) if end is None else k + 1 + end.end()


# --------------------------------------------------------------------------- #
# Shell: variables and expansion
# --------------------------------------------------------------------------- #
@dataclass
class _Var:
    words: list[Word]  # one for a scalar, the elements for an array
    array: bool = False
    partial: bool = False  # an array with elements added inside a branch


class _Env:
    def __init__(self) -> None:
        self.vars: dict[str, _Var] = {}
        self.notes: list[str] = []

    def expand(self, tok: _Tok, depth: int = 0) -> list[Word]:
        """A token as zero or more words (an array expands to its elements)."""
        if len(tok.parts) == 1 and tok.parts[0].kind in ("arr", "args"):
            p = tok.parts[0]
            if p.kind == "args":
                self._note(Message("{text} passes the script's own arguments, which the doctor cannot see", text=p.text))
                return []
            var = self.vars.get(p.name)
            if var is None:
                return [Word(p.text, 0)]
            if var.partial:
                self._note(Message("{name} has elements added inside if/case blocks; only its unconditional ones are read",
                                   name=p.name))
            return list(var.words)
        text, opaque, origins = "", -1, []
        for p in tok.parts:
            if p.kind == "lit":
                text += p.text
                continue
            value: Word | None = None
            if p.kind == "var":
                value = self._lookup(p, depth)
            elif p.kind == "cmd" and p.text.startswith("$((") and p.text.endswith("))"):
                value = self._arithmetic(p.text)
            elif p.kind == "arr":
                var = self.vars.get(p.name)
                if var is not None and all(w.literal for w in var.words):
                    value = Word(" ".join(w.text for w in var.words))
            if value is None or not value.literal:
                if opaque < 0:
                    opaque = len(text)
                text += p.text
                why = value.origin if value is not None and value.origin else (
                    Message("${name} is not set in the script", name=p.name) if p.kind == "var" and p.name else
                    Message("{text} is shell arithmetic, which the doctor does not evaluate", text=p.text)
                    if p.text.startswith("$((") else Message("{text} runs a command", text=p.text))
                origins.append(why)
            else:
                text += value.text
                if value.origin:
                    origins.append(value.origin)
        return [Word(text, opaque, joined("; ", dict.fromkeys(origins)))]

    def _arithmetic(self, text: str) -> Word | None:
        """``$(( … ))`` over integers and the script's own integer variables, as bash computes it; None where a
        name is not such a variable or an operator is not one of ``+ - * / %`` (bash divides toward zero)."""
        names: dict[str, int] = {}
        for name in set(re.findall(r"\$?\{?([A-Za-z_]\w*)\}?", text[3:-2])):
            var = self.vars.get(name)
            word = var.words[0] if var is not None and not var.array else None
            if word is None or not word.literal or not re.fullmatch(r"-?\d+", word.text.strip()):
                return None
            names[name] = int(word.text)
        expr = re.sub(r"\$\{?([A-Za-z_]\w*)\}?", r"\1", text[3:-2]).strip()
        try:
            value = _bash_int(ast.parse(expr, mode="eval").body, names)
        except (SyntaxError, ValueError, ZeroDivisionError):
            return None
        return Word(str(value), -1, Message("{text} in the script", text=text))

    def _lookup(self, p: _Part, depth: int) -> Word | None:
        var = self.vars.get(p.name)
        if var is not None and not var.array:
            w = var.words[0]
            if not (p.op in (":-", ":=") and w.literal and w.text == ""):
                return w
        if p.op in (":-", "-", ":=", "=") and depth < _MAX_DEPTH:
            stmts = _tokenize(p.default) if p.default else []
            toks = stmts[0].toks if stmts else []
            words = [w for t in toks for w in self.expand(t, depth + 1)]
            if not words:
                return Word("", -1, Message("default of ${name} in the script", name=p.name))
            joined = " ".join(w.text for w in words)
            word = (Word(joined, -1, Message("default of ${name} in the script", name=p.name))
                    if all(w.literal for w in words) else Word(joined, 0))
            if p.op in (":=", "="):  # ${X:=v} also sets X, for the rest of the script (`: "${X:=v}"`)
                self.vars[p.name] = _Var([word])
            return word
        return None

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def assign(self, name: str, words: list[Word], array: bool, append: bool, branch: bool) -> None:
        old = self.vars.get(name)
        if branch:
            if array and append and old is not None and old.array:
                old.partial = True
            else:  # depends on which branch runs
                self.vars[name] = _Var([Word(f"${name}", 0, Message("${name} is set inside an if/case block or after && / ||",
                                                                    name=name))])
            return
        if append and old is not None:
            if array and old.array:
                old.words = old.words + words
                return
            if not array and not old.array:
                w0, w1 = old.words[0], words[0] if words else Word("")
                opaque = w0.opaque_from if w0.opaque_from >= 0 else (
                    len(w0.text) + w1.opaque_from if w1.opaque_from >= 0 else -1)
                self.vars[name] = _Var([Word(w0.text + w1.text, opaque)])
                return
        self.vars[name] = _Var(words if array else [words[0] if words else Word("")], array=array)


def _bash_int(node: ast.AST, names: dict[str, int]) -> int:
    """An integer expression as bash's ``$(( ))`` computes it (``/`` and ``%`` truncate toward zero)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        x = _bash_int(node.operand, names)
        return -x if isinstance(node.op, ast.USub) else x
    if isinstance(node, ast.BinOp):
        a, b = _bash_int(node.left, names), _bash_int(node.right, names)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod):
            if b == 0:
                raise ZeroDivisionError
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return q if not isinstance(node.op, ast.Mod) else a - b * q
    raise ValueError("not bash integer arithmetic")


def _assignment(tok: _Tok) -> tuple[str, bool, _Tok] | None:
    """``NAME=value`` or ``NAME+=value``: (name, append, value token)."""
    if not tok.parts or tok.parts[0].kind != "lit":
        return None
    m = _ASSIGN.match(tok.parts[0].text)
    if not m:
        return None
    rest = _Tok([_Part("lit", tok.parts[0].text[m.end():]), *tok.parts[1:]], tok.quoted, tok.line)
    rest.parts = [p for p in rest.parts if not (p.kind == "lit" and p.text == "")]
    return m.group(1), m.group(2) == "+", rest


def _commands(text: str, _nesting: int = 0) -> tuple[list[Command], list[str]]:
    """Expanded simple commands of a script, with the script's own variables substituted.

    The string of a ``bash -c "…"`` is read as a script too (its commands follow
    the one that runs it), so a trainer launched through ``srun … bash -c`` is found.
    """
    env = _Env()
    out: list[Command] = []
    depth = 0
    for st in _tokenize(_heredoc_reads(text)):
        toks = list(st.toks)
        first = toks[0].plain if toks else None
        while first in _LEADING and len(toks) > 1:
            toks = toks[1:]
            first = toks[0].plain
        if first in _CLOSE or first == "}":
            depth = max(0, depth - 1)
            continue
        if first in _OPEN:
            depth += 1
            continue
        if first in _LEADING or first in ("(", ")", "[", "[[", "test"):
            continue
        if toks and "{" in (toks[0].plain, toks[-1].plain):  # a group, or a function body
            depth += 1
            continue
        branch = depth > 0 or st.conditional
        cmd_depth = depth + (1 if st.conditional else 0)
        if first in _DECLARE:
            toks = [t for t in toks[1:] if not (t.plain or "").startswith("-")]
            if not toks:
                continue
        k = 0
        while k < len(toks) and _assignment(toks[k]) is not None:
            k += 1
        rest = toks[k:]
        # `X=1 cmd $X`: a prefix assignment is the command's environment only, and bash expands $X in its words
        # with the value from before; alone (or after export), an assignment sets the script's variable
        if first in _DECLARE or not rest:
            for tok in toks[:k]:
                name, append, value = _assignment(tok)
                index = next(x for x, t in enumerate(st.toks) if t is tok)
                if index in st.arrays:
                    words = [w for t in st.arrays[index] for w in env.expand(t)]
                    env.assign(name, words, True, append, branch)
                else:
                    words = env.expand(value) if value.parts else [Word("")]
                    env.assign(name, words[:1] or [Word("")], False, append, branch)
            continue
        words = tuple(w for t in rest for w in _split_fields(t, env.expand(t)))
        if words:
            out.append(Command(words, st.line, cmd_depth))
            inner = _shell_c(words)
            if inner is not None and _nesting < _MAX_NESTING:  # srun … bash -c "…": the string is a script too
                for c in _commands(inner, _nesting + 1)[0]:
                    out.append(Command(c.words, st.line + c.line - 1, cmd_depth + c.depth))
    return out, env.notes


def _split_fields(tok: _Tok, words: list[Word]) -> list[Word]:
    """Bash's word splitting: an unquoted word whose expansions hold spaces (``$ARGS``) is several words, and an
    empty one none.  A word with any quoted part, or a part the doctor could not resolve, is left whole."""
    if tok.quoted or all(p.kind == "lit" for p in tok.parts):
        return words
    out = []
    for w in words:
        if w.literal:
            out += [Word(f, -1, w.origin) for f in w.text.split()]
        else:
            out.append(w)
    return out


_SHELLS = {"bash", "sh", "zsh", "dash"}
_MAX_NESTING = 3  # bash -c "bash -c '…'" nesting followed


def _shell_c(words: tuple[Word, ...]) -> str | None:
    """The script string of a ``bash -c "…"`` (or ``sh -xc '…'``) inside a command, if there is one."""
    texts = [w.text for w in words]
    for j, t in enumerate(texts[:-1]):
        if t.rsplit("/", 1)[-1] in _SHELLS:
            k = j + 1
            while k < len(texts) and texts[k].startswith("-") and not texts[k].startswith("--"):
                if "c" in texts[k][1:]:
                    return texts[k + 1] if k + 1 < len(texts) else None
                k += 1
    return None


# --------------------------------------------------------------------------- #
# Readers
# --------------------------------------------------------------------------- #
def _find_trainer(commands: list[Command], names: tuple[str, ...]) -> tuple[Command, int, str] | None:
    """The command that runs a trainer: (command, index of the first argument, the name matched)."""
    found = []
    for cmd in commands:
        texts = [w.text for w in cmd.words]
        for j, t in enumerate(texts):
            for name in names:
                parts = name.split()
                if len(parts) > 1:
                    if texts[j : j + len(parts)] == parts:
                        found.append((cmd, j + len(parts), name))
                        break
                elif t == name or t.endswith("/" + name):
                    found.append((cmd, j + 1, name))
                    break
            else:
                continue
            break
    if not found:
        return None
    top = [f for f in found if f[0].depth == 0]
    return (top or found)[0]


_PYTHON = re.compile(r"python[\d.]*")
_LAUNCHERS = {"accelerate", "torchrun", "deepspeed"}
_PY_OPTS_WITH_VALUE = {"-X", "-W", "-c"}
#: Modules and TRL subcommands that are not trainers: a server, a package tool, a launcher.
_NOT_TRAINERS = ("pip", "ray", "venv", "vllm", "sglang", "json", "http", "pytest", "torch.distributed",
                 "accelerate", "deepspeed", "huggingface_hub", "wandb", "trl vllm-serve", "trl env")


@dataclass(frozen=True)
class Entry:
    """A command's entry point: the module, script or TRL subcommand it runs.

    Attributes
    ----------
    name : str
        ``"recipe.dapo.main_dapo"``, ``"train_grpo.py"`` or ``"trl grpo"``.
    kind : str
        ``"module"`` (``python -m``), ``"script"`` (a ``.py`` file) or ``"trl"``.
    command : Command
    start : int
        Index in ``command.words`` of its first argument.
    """

    name: str
    kind: str
    command: Command
    start: int

    @property
    def trainer(self) -> bool:
        """False for servers, package tools and launchers (``trl vllm-serve``, ``python -m pip``)."""
        return not any(self.name == n or self.name.startswith(n + ".") for n in _NOT_TRAINERS)


def _entry(cmd: Command) -> Entry | None:
    """What one command runs, looking past ``srun``, ``ray job submit --``, ``env``, ``accelerate launch``,
    ``torchrun`` and ``deepspeed`` to the ``python -m MODULE``, ``SCRIPT.py`` or ``trl SUBCOMMAND`` they start."""
    texts = [w.text for w in cmd.words]
    n = len(texts)
    for j, t in enumerate(texts):
        base = t.rsplit("/", 1)[-1]
        if _PYTHON.fullmatch(base) or base in _LAUNCHERS:
            k = j + 1
            if base == "accelerate":
                if k < n and texts[k] != "launch":
                    continue  # accelerate config, accelerate env
                k += 1
            while k < n:
                w = texts[k]
                if (w == "-m" or (w == "--module" and base in _LAUNCHERS)) and k + 1 < n:  # deepspeed --module X
                    return Entry(texts[k + 1], "module", cmd, k + 2)
                if w.endswith(".py") and not w.startswith("-"):
                    return Entry(w, "script", cmd, k + 1)
                if not w.startswith("-") and _PYTHON.fullmatch(base):
                    break  # python reading stdin, or a non-.py file
                k += 2 if (w in _PY_OPTS_WITH_VALUE and _PYTHON.fullmatch(base)) else 1
            continue
        if base == "trl" and j + 1 < n and re.fullmatch(r"[a-z][a-z_-]*", texts[j + 1]) \
                and "install" not in texts[:j] and "uninstall" not in texts[:j]:
            return Entry(f"trl {texts[j + 1]}", "trl", cmd, j + 2)
    return None


@docfill(**_DOC_SECTIONS)
def entry_points(text: str) -> list[Entry]:
    """Every entry point a script's commands run, in order (those inside ``bash -c "…"`` too).

    %(text_params)s

    Returns
    -------
    list of Entry

    Raises
    ------
    UnreadableInput
        On an unclosed quote, bracket or array.
    """
    return [e for e in (_entry(c) for c in _commands(text)[0]) if e is not None]


@docfill(**_DOC_SECTIONS)
def library_entry(text: str) -> str | None:
    """The first trainer a script's commands run, when no covered trainer is named.

    %(text_params)s

    Returns
    -------
    str or None
        A module name (``openrlhf.cli.train_dpo``, ``recipe.dapo.main_dapo``), a
        script path (``train_grpo.py``) or a TRL subcommand (``trl dpo``); the
        caller decides whether the doctor covers it.  Servers and package tools
        (``trl vllm-serve``, ``python -m pip``) are passed over.

    Raises
    ------
    UnreadableInput
        On an unclosed quote, bracket or array.
    """
    for e in entry_points(text):
        if e.trainer:
            return e.name
    return None


def read_shell(text: str, names: tuple[str, ...]) -> ParsedInput:
    """Read a launch script or command line without running it.

    Parameters
    ----------
    text : str
        The script (already :func:`decode`-d).
    names : tuple of str
        Names of trainers (module names, script paths, ``"trl grpo"``); the
        first command naming one is read.

    Returns
    -------
    ParsedInput
        ``kind="command"``, the trainer's arguments as :class:`Word` s, the
        name that matched (none if no command names a trainer: then every word
        of every top-level command is taken as an argument).

    Raises
    ------
    UnreadableInput
        On an unclosed quote, bracket or array.
    """
    commands, notes = _commands(text)
    hit = _find_trainer(commands, names)
    if hit is None:
        words = tuple(w for c in commands if c.depth == 0 for w in c.words)
        return ParsedInput("command", arguments=words, notes=tuple(notes))
    cmd, start, name = hit
    others = sum(1 for c in commands if c is not cmd and _find_trainer([c], names))
    if others:
        notes.append(Message("the script runs {name} {n} times; the doctor reads the first (line {line})",
                             name=name, n=others + 1, line=cmd.line))
    head = " ".join(w.text for w in cmd.words[:start])
    return ParsedInput("command", arguments=cmd.words[start:], names=(name,), command=head, notes=tuple(notes))


_FAST_VALUE = re.compile(r"(?![+-]?0\d)(?!(?i:none)$)(?:[A-Za-z0-9.+\-]+|[A-Za-z][A-Za-z0-9_.+\-]*)")
_FAST_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@functools.lru_cache(maxsize=4096)
def _hydra_override(text: str) -> Any:
    """One override parsed by Hydra's grammar (cached: a script's words repeat across the profiles tried)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return _overrides_parser(OverridesParser).parse_override(text)


@functools.cache
def _overrides_parser(cls: Any) -> Any:
    return cls.create()


@functools.cache
def _hydra_flags() -> dict[str, Any]:
    """Every flag of Hydra's own command line (``--config-name``, ``-cn``, ``--multirun``, ``-m`` …) → its action.

    Read from Hydra's parser itself, ``hydra._internal.utils.get_args_parser`` (hydra-core 1.3.2
    hydra/_internal/utils.py lines 501-596), the parser ``@hydra.main`` runs on ``sys.argv``
    (hydra/main.py line 86, ``args_parser.parse_args()``).
    """
    from hydra._internal.utils import get_args_parser  # lazy: hydra-core loads antlr

    return dict(get_args_parser()._option_string_actions)


def hydra_flag(flag: str) -> Any:
    """The action of Hydra's parser that ``flag`` names, or None when Hydra's parser does not accept it.

    As :mod:`argparse` reads it (Hydra's parser keeps ``allow_abbrev``): the flag itself, a unique prefix of a
    ``--`` flag (``--multi`` for ``--multirun``), or a short flag with its value attached (``-cjob``).  An
    ambiguous prefix (``--config``) is refused, as argparse refuses it ("ambiguous option").

    Parameters
    ----------
    flag : str
        A word of the command line that starts with ``-``, without any ``=value``.

    Returns
    -------
    argparse.Action or None
        The action, whose ``option_strings`` and ``nargs`` say what the flag is and takes.

    Examples
    --------
    >>> hydra_flag("--multi").option_strings
    ['--multirun', '-m']
    >>> hydra_flag("--config") is None, hydra_flag("--init_kl_coef") is None
    (True, True)
    """
    flags = _hydra_flags()
    if flag in flags:
        return flags[flag]
    if len(flag) < 2:
        return None
    # argparse's _get_option_tuples: flags the word abbreviates, and for a single dash the short flag it starts with
    found = [a for f, a in flags.items() if f.startswith(flag)]
    if not flag.startswith("--") and flag[:2] in flags and flags[flag[:2]].nargs is None:
        found.append(flags[flag[:2]])
    return found[0] if len(found) == 1 else None


#: Stray words named one by one on a card; past this many, one note counts the rest (a 256 KiB line of
#: 65,000 words made as many notes, and most of the doctor's time).
MAX_WORD_NOTES = 8


def _stray(notes: list[Any], strays: list[int], note: Callable[[], Any]) -> None:
    """Note one stray word (``note()``, built only while it will be shown), counting it in ``strays[0]``."""
    strays[0] += 1
    if strays[0] <= MAX_WORD_NOTES:
        notes.append(note())


def _strays_left(notes: list[Any], strays: list[int]) -> None:
    if strays[0] > MAX_WORD_NOTES:
        notes.append(Message("and {n:,} more words like these", n=strays[0] - MAX_WORD_NOTES))


def parse_overrides(words: tuple[Word, ...], unreadable: list[str] | None = None,
                    ) -> tuple[tuple[RawSetting, ...], tuple[str, ...]]:
    """Hydra overrides: ``key=value``, ``+key=value``, ``++key=value``, ``~key``, ``group@package=option``.

    Each literal word is parsed by Hydra's own override grammar
    (``hydra.core.override_parser.overrides_parser.OverridesParser``, the parser
    verl's ``main_ppo`` runs), which types the value (``1e-6`` a float, ``null``
    None, ``[a,b]`` a list, quotes removed) without executing anything; a sweep
    (``a=1,2``) is named, since it is several runs.  An interpolation
    (``${…}``) is kept as text for :func:`kl_core.doctor.diagnosis._resolve_references`.
    A word with a part the shell reader could not resolve is kept as not literal.

    Parameters
    ----------
    words : tuple of Word
        The words after the trainer's name.
    unreadable : list of str, optional
        Filled with the literal words that are neither a flag nor ``key=value`` nor ``~key`` (a
        ``\\ `` before a comment leaves a lone space): Hydra's override grammar raises
        OverrideParseException on each ("missing EQUAL"), and the run stops.

    A word that is not a flag of Hydra's own parser (:func:`hydra_flag`), such as
    ``--init_kl_coef 0.2``, is kept as a setting whose key is the flag (with the
    word after it as its value): Hydra's parser exits on it ("unrecognized
    arguments"), and :func:`kl_core.doctor.diagnosis.diagnose` says the run stops.

    Returns
    -------
    tuple
        ``(settings, notes)``; notes name words that are not overrides
        (``--config-name``, Hydra's other flags, stray words).
    """
    from hydra.errors import HydraException  # lazy: hydra-core loads antlr

    settings, notes, strays = [], [], [0]
    skip = False
    for k, w in enumerate(words):
        if skip:
            skip = False
            continue
        t = w.text
        if t.startswith("-") and not _looks_numeric(t):
            nxt = words[k + 1] if k + 1 < len(words) else None
            action = hydra_flag(t.split("=", 1)[0])
            if action is None:  # not a flag of Hydra's parser: it exits with "unrecognized arguments"
                flag, inline = (t.split("=", 1) + [None])[:2] if "=" in t else (t, None)
                value = Word(inline, w.opaque_from - len(flag) - 1 if w.opaque_from >= 0 else -1, w.origin) \
                    if inline is not None else (nxt if nxt is not None and not nxt.text.startswith("-")
                                                and "=" not in nxt.text else None)
                skip = inline is None and value is not None
                if value is None:
                    settings.append(RawSetting(flag, True, flag, w.literal, "", w.origin))
                else:
                    settings.append(RawSetting(flag, scalar(value.text) if value.literal else None, value.text,
                                               value.literal, "", value.origin))
                continue
            takes = action.nargs is None or (action.nargs == "?" and nxt is not None
                                             and not nxt.text.startswith("-") and "=" not in nxt.text)
            skip = takes and "=" not in t and nxt is not None
            value = t.split("=", 1)[1] if "=" in t else (nxt.text if skip and nxt is not None else "")
            if set(action.option_strings) & {"--config-name", "--config-path", "--config-dir"}:
                notes.append(Message("{flag} {value}: the doctor reads the overrides, with the release's defaults for the rest",
                                     flag=t.split("=", 1)[0], value=value))
            else:
                written = " ".join(w for w in (t.split("=", 1)[0], value) if w)
                notes.append(Message("{t}: a Hydra flag, not a setting", t=written))
            continue
        op = ""
        for prefix in ("++", "+", "~"):
            if t.startswith(prefix):
                op, t = prefix, t[len(prefix):]
                break
        cut = w.opaque_from - len(op) if w.opaque_from >= 0 else -1
        if "=" not in t:
            if op == "~":
                settings.append(RawSetting(t, None, "", True, "~"))
            else:
                _stray(notes, strays, lambda t=t: Message("{t}: not a key=value override", t=t))
                if unreadable is not None and w.literal:
                    unreadable.append(w.text)
            continue
        key, value = t.split("=", 1)
        if cut >= 0 and cut <= len(key):
            notes.append(Message("{t}: the key itself is not literal", t=t))
            continue
        if not w.literal:
            settings.append(RawSetting(key, None, value, False, op, w.origin))
            continue
        if _FAST_VALUE.fullmatch(value) and _FAST_KEY.fullmatch(key):
            # a plain number, word or name: tests/doctor/test_parse.py checks scalar() types these exactly as
            # Hydra's grammar does (over 75,000 random such values); parsing 20,000 of them with the grammar
            # would take seconds
            settings.append(RawSetting(key, scalar(value), value, True, op, w.origin))
            continue
        try:
            o = _hydra_override(w.text)
        except (HydraException, RecursionError) as exc:
            notes.append(Message("{t}: not a Hydra override ({why})", t=w.text, why=str(exc).split("\n")[0][:120]))
            continue
        key = o.key_or_group + ("@" + o.package if o.package else "")
        if o.is_sweep_override():
            notes.append(Message("{t}: a sweep over several values (a Hydra multirun); the doctor reads one run at a "
                                 "time, so this setting takes the release default", t=w.text))
            continue
        got = o.value()
        literal = not (isinstance(got, str) and _is_interpolation(got))
        settings.append(RawSetting(key, got if literal else None, value, literal, op, w.origin))
    _strays_left(notes, strays)
    return tuple(settings), tuple(notes)


def _canonical_flag(flag: str, specs: Mapping[str, Any], dashes: bool) -> tuple[str, str]:
    """The known flag ``flag`` names (argparse accepts unique prefixes), and a note when it was an abbreviation."""
    if dashes and flag.startswith("--"):
        flag = "--" + flag[2:].replace("-", "_")
    if flag in specs:
        return flag, ""
    starts = [f for f in specs if f.startswith(flag)]
    if len(starts) == 1:
        return starts[0], Message("{flag} is argparse's abbreviation of {full}", flag=flag, full=starts[0])
    return flag, ""


def parse_flags(words: tuple[Word, ...], specs: Mapping[str, Any], *, dashes: bool = False,
                negate: bool = False) -> tuple[tuple[RawSetting, ...], tuple[str, ...]]:
    """``--flag value`` arguments, read as :mod:`argparse` reads them.

    Parameters
    ----------
    words : tuple of Word
        The words after the trainer's name.
    specs : mapping
        Known flags → an object with ``action`` and ``nargs`` attributes
        (:class:`kl_core.doctor.profiles.KeySpec`); unknown flags take the words
        up to the next flag as values.
    dashes : bool, default False
        Accept ``--some-flag`` for ``--some_flag`` (transformers' HfArgumentParser does).
    negate : bool, default False
        Accept ``--no_flag`` for a boolean ``--flag`` (HfArgumentParser does).

    Returns
    -------
    tuple
        ``(settings, notes)``; a store_true flag has value True, a list-valued
        flag a list.  Keys are flags with their dashes (``"--algo.kl.estimator"``).
    """
    settings, notes, strays = [], [], [0]
    k, n = 0, len(words)
    while k < n:
        w = words[k]
        t = w.text
        if not t.startswith("-") or t == "-" or t == "--":
            _stray(notes, strays, lambda t=t: Message("{t}: a word that is not a flag", t=t))
            k += 1
            continue
        flag, inline = (t.split("=", 1) + [None])[:2] if "=" in t else (t, None)
        flag, abbrev = _canonical_flag(flag, specs, dashes)
        if abbrev:
            notes.append(abbrev)
        spec = specs.get(flag)
        if spec is None and negate and flag.startswith("--no_") and ("--" + flag[5:]) in specs:
            settings.append(RawSetting("--" + flag[5:], False, flag))
            k += 1
            continue
        k += 1
        values: list[Word] = []
        if inline is not None:
            values = [Word(inline, w.opaque_from - len(flag) - 1 if w.opaque_from >= 0 else -1, w.origin)]
        else:
            action = getattr(spec, "action", None) if spec is not None else None
            nargs = getattr(spec, "nargs", None) if spec is not None else None
            if action in ("store_true", "store_false", "store_const", "count"):
                want = 0
            elif isinstance(nargs, int):
                want = nargs
            elif nargs in ("+", "*") or spec is None or str(getattr(spec, "type", "") or "").startswith("list"):
                want = -1
            elif nargs == "?":
                want = -2
            else:
                want = 1
            while k < n and want != 0:
                nxt = words[k].text
                if nxt.startswith("--") or (nxt.startswith("-") and len(nxt) > 1 and not _looks_numeric(nxt)):
                    break
                values.append(words[k])
                k += 1
                if want > 0:
                    want -= 1
                elif want == -2:
                    break
            # argparse stops on a declared store flag without its value: "expected one argument"
            # (HfArgumentParser's bool fields take an optional value: their action is not "store")
            if want > 0 and not values and action == "store":
                notes.append(_missing_value(flag, words[k].text if k < n else None))
                continue
        action = getattr(spec, "action", None) if spec is not None else None
        if not values:
            value: Any = {"store_false": False}.get(action or "", True)
            settings.append(RawSetting(flag, value, flag))
            continue
        literal = all(v.literal for v in values)
        texts = [v.text for v in values]
        origin = joined("; ", dict.fromkeys(v.origin for v in values if v.origin))
        nargs = getattr(spec, "nargs", None) if spec is not None else None
        many = len(values) > 1 or isinstance(nargs, int) and nargs > 1 or nargs in ("+", "*")
        value = [scalar(x) for x in texts] if many else scalar(texts[0])
        settings.append(RawSetting(flag, value if literal else None, " ".join(texts), literal, "", origin))
    _strays_left(notes, strays)
    return tuple(settings), tuple(notes)


def _missing_value(flag: str, nxt: str | None) -> Message:
    """A flag that needs a value and has none: argparse exits, so the doctor reads it as not given."""
    if nxt is None:
        return Message("{flag} ends the command without the value it needs: the trainer stops with “expected "
                       "one argument”, and the doctor reads {flag} as not given", flag=flag)
    return Message("{flag} {next}: argparse reads {next} as a flag, not as the value {flag} needs, and the "
                   "trainer stops with “expected one argument”; the doctor reads {flag} as not given (write "
                   "{flag}={next} to pass the value)", flag=flag, next=nxt)


def _looks_numeric(text: str) -> bool:
    return bool(_INT.match(text) or _FLOAT.match(text))


def _flatten(tree: Any, prefix: str, out: list[RawSetting], budget: list[int], notes: list[str]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise UnreadableInput(
            "the document expands to more than {most:,} values (YAML aliases?); the doctor stops there",
            most=MAX_VALUES,
        )
    if isinstance(tree, dict) and tree:
        for key, value in tree.items():
            if not isinstance(key, (str, int, float, bool)) or key is None:
                if prefix:
                    raise UnreadableInput("a key under {prefix!r} is not text: {key!r}", prefix=prefix, key=key)
                raise UnreadableInput("a key under 'the top level' is not text: {key!r}", key=key)
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out, budget, notes)
        return
    if isinstance(tree, list):
        for v in tree:  # walk the values only to count them
            if isinstance(v, (dict, list)):
                _count(v, budget)
    text = json.dumps(tree, ensure_ascii=False, default=str) if not isinstance(tree, str) else tree
    literal = not (isinstance(tree, str) and _is_interpolation(tree))
    out.append(RawSetting(prefix, tree if literal else None, text, literal))


def _count(tree: Any, budget: list[int]) -> None:
    stack = [tree]
    while stack:
        node = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise UnreadableInput(
                "the document expands to more than {most:,} values (YAML aliases?); the doctor stops there",
                most=MAX_VALUES,
            )
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def read_structured(text: str, kind: str) -> ParsedInput:
    """Read a YAML or JSON mapping into dotted settings (safe loader only).

    Parameters
    ----------
    text : str
        The document.
    kind : {"yaml", "json"}

    Returns
    -------
    ParsedInput
        One :class:`RawSetting` per leaf, nested keys joined by dots; a string
        holding an ``${...}`` interpolation is not literal.  Hydra's ``defaults``
        list and its own ``hydra`` section are noted and skipped.

    Raises
    ------
    UnreadableInput
        If the document is not valid, uses a tag, expands past
        :data:`MAX_VALUES` values, nests too deeply, or is not a mapping.
    """
    try:
        if kind == "json":
            doc = json.loads(text)
        else:
            import yaml

            doc = yaml.load(text, Loader=config_loader())  # noqa: S506 - a safe loader: no object is constructed
    except RecursionError:
        raise UnreadableInput("the {kind} nests too deeply to be a config", kind=kind.upper()) from None
    except json.JSONDecodeError as exc:
        raise UnreadableInput(
            "the input is not valid JSON: {problem} (line {line}, column {column})",
            problem=exc.msg, line=exc.lineno, column=exc.colno,
        ) from None
    except Exception as exc:  # noqa: BLE001 - every YAML error becomes one sentence
        raise UnreadableInput(_yaml_message(exc)) from None
    if not isinstance(doc, dict):
        raise UnreadableInput(
            "the {kind} is a {type}, not a mapping of settings", kind=kind.upper(), type=type(doc).__name__
        )
    notes: list[str] = []  # Hydra's own sections (defaults, hydra) are set aside once the trainer is known
    out: list[RawSetting] = []
    try:
        _flatten(doc, "", out, [MAX_VALUES], notes)
    except RecursionError:
        raise UnreadableInput("the {kind} nests too deeply to be a config", kind=kind.upper()) from None
    return ParsedInput(kind, settings=tuple(out), notes=tuple(notes))


def _yaml_message(exc: Exception) -> Message:
    text = " ".join(str(exc).split())
    tag = re.search(r"tag '([^']+)'", text)
    if tag:
        return Message(
            "YAML tag {tag} is not allowed: the doctor reads "
            "plain YAML with a safe loader, which builds no objects",
            tag=tag.group(1).replace("tag:yaml.org,2002:", "!!"),
        )
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or text
    if mark is None:
        return Message("the input is not valid YAML: {problem}", problem=problem)
    return Message(
        "the input is not valid YAML: {problem} (line {line}, column {column})",
        problem=problem, line=mark.line + 1, column=mark.column + 1,
    )


PARSER_CALLS = ("TrlParser", "HfArgumentParser")
"""Argument parsers whose config comes from the command line or a ``--config`` YAML, not from the file."""


def _parse_python(text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():  # the user's code may trip SyntaxWarnings; they are not ours to print
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except SyntaxError as exc:
        raise UnreadableInput(
            "the Python does not parse: {problem} (line {line})", problem=exc.msg, line=exc.lineno
        ) from None
    except (RecursionError, MemoryError, ValueError):
        raise UnreadableInput("the Python nests too deeply to be read") from None


def _constants(tree: ast.Module) -> dict[str, tuple[Any, int]]:
    """Names assigned one literal value in the file (module constants, simple local names): name → (value, line).

    A name assigned twice, or to anything :func:`ast.literal_eval` rejects, is left out; so is one bound any other
    way too (``BETA *= 0.25``, a function's parameter ``beta``, a loop variable, an import): which value reaches
    the call then depends on running the file.
    """
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        names = ([node.id] if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del) else
                 [node.arg] if isinstance(node, ast.arg) else
                 [(node.asname or node.name).split(".")[0]] if isinstance(node, ast.alias) else
                 [node.name] if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else
                 [node.name] if isinstance(node, ast.ExceptHandler) and node.name else
                 list(node.names) if isinstance(node, ast.Global | ast.Nonlocal) else [])
        for n in names:
            bound[n] = bound.get(n, 0) + 1
    seen: dict[str, list[tuple[Any, int] | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        try:
            seen.setdefault(target, []).append((ast.literal_eval(value), node.lineno))
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            seen.setdefault(target, []).append(None)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None and bound.get(k) == 1}


def _set_after(tree: ast.Module, call: ast.Call) -> dict[str, tuple[ast.expr, int]]:
    """Attributes of the config object set after the call that builds it (``args = GRPOConfig(...)`` then
    ``args.beta = 0.0``): attribute → (value, line), the last one winning; the trainer reads them."""
    holders = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and node.value is call
               for t in node.targets if isinstance(t, ast.Name)}
    out: dict[str, tuple[ast.expr, int]] = {}
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assign) and n.lineno > call.lineno),
                       key=lambda n: n.lineno):
        for t in node.targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in holders:
                out[t.attr] = (node.value, node.lineno)
    return out


def _trl_imports(tree: ast.Module) -> set[str]:
    """Names the file imports from ``trl`` (``from trl import GRPOConfig, …``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "trl":
            out |= {a.asname or a.name for a in node.names}
    return out


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def looks_python(text: str) -> bool:
    """Whether a text is a Python file: it parses, and imports or defines something.

    Parameters
    ----------
    text : str

    Returns
    -------
    bool
    """
    if not re.search(r"^\s*(import|from|def|class)\s", text, re.M):
        return False
    try:
        tree = _parse_python(text)
    except UnreadableInput:
        return False
    return any(isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)) for n in tree.body)


def read_python(text: str) -> ParsedInput:
    """Read a Python file's training config without running it.

    The source is parsed with :func:`ast.parse` and never executed.

    * The keyword arguments of the first ``GRPOConfig(...)``, ``RLOOConfig(...)``
      or ``PPOConfig(...)`` call are taken when :func:`ast.literal_eval` accepts
      them, or when they name a constant the file assigns one literal value
      (``BETA = 0.02`` … ``beta=BETA``); anything else is kept as not literal,
      with its source text.
    * A file that builds its config with ``TrlParser`` or ``HfArgumentParser``
      holds no settings: they come from the command line or a ``--config`` YAML.
      When its module docstring shows the launch command (as TRL's example
      scripts do), that command's flags are read; otherwise the refusal says so.

    Parameters
    ----------
    text : str
        Python source.

    Returns
    -------
    ParsedInput
        ``kind="python"``, the call's class name in :attr:`ParsedInput.names`;
        or ``kind="command"`` for the docstring's launch command.

    Raises
    ------
    UnreadableInput
        If the source does not parse, nests too deeply, or holds neither such a
        call nor a launch command to read.
    """
    tree = _parse_python(text)
    calls, parsers = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in CONFIG_CALLS:
                calls.append((node.lineno, node.col_offset, name, node))
            elif name in PARSER_CALLS:
                parsers.append((node.lineno, name, node))
    lines = text.splitlines(keepends=True)
    if not calls:
        return _from_parser(tree, text, lines, parsers)
    consts = _constants(tree)
    calls.sort(key=lambda c: (c[0], c[1]))
    _, _, name, call = calls[0]
    notes = []
    if len(calls) > 1:
        notes.append(Message("{n} config calls; the doctor reads the first, {name}(...) on line {line}",
                             n=len(calls), name=name, line=call.lineno))
    if call.args:
        notes.append(Message("{name}(...) on line {line} has positional arguments, which are not read",
                             name=name, line=call.lineno))
    settings = []
    for kw in call.keywords:
        src = _segment(lines, kw.value)
        if kw.arg is None:
            settings.append(RawSetting(f"**{src}", None, f"**{src}", False))
            continue
        if isinstance(kw.value, ast.Name) and kw.value.id in consts:
            value, line = consts[kw.value.id]
            settings.append(RawSetting(kw.arg, value, src, True, origin=Message(
                "{name} = {value!r} on line {line}", name=kw.value.id, value=value, line=line)))
            continue
        try:
            value = ast.literal_eval(kw.value)
            settings.append(RawSetting(kw.arg, value, src, True))
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            settings.append(RawSetting(kw.arg, None, src, False))
    for attr, (node, line) in _set_after(tree, call).items():
        src = _segment(lines, node)
        settings = [x for x in settings if x.key != attr]
        origin = Message("set on line {line}, after the {name}(...) call", line=line, name=name)
        try:
            settings.append(RawSetting(attr, ast.literal_eval(node), src, True, origin=origin))
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            settings.append(RawSetting(attr, None, src, False, origin=origin))
    return ParsedInput("python", settings=tuple(settings), names=(name,),
                       command=f"{name}(...) on line {call.lineno}", notes=tuple(notes))


def _from_parser(tree: ast.Module, text: str, lines: list[str], parsers: list[Any]) -> ParsedInput:
    """A Python file without a config call: its ``TrlParser`` and docstring, or a refusal saying why."""
    trl = _trl_imports(tree)
    if not parsers:
        other = sorted({_call_name(n) for n in ast.walk(tree) if isinstance(n, ast.Call)} & trl)
        other = [o for o in other if o and o.endswith("Config")]
        if other:
            raise UnreadableInput(
                "the Python builds {config}, a TRL config the doctor does not cover; it reads "
                "{calls}", config=other[0], calls=", ".join(CONFIG_CALLS),
            )
        raise UnreadableInput(
            "the Python holds no call of {calls}; paste the code that builds the config",
            calls=", ".join(CONFIG_CALLS),
        )
    parsers.sort(key=lambda p: p[0])
    line, parser, node = parsers[0]
    built = f"{parser}({_segment(lines, node.args[0])})" if node.args else f"{parser}()"
    classes = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    names = [c for c in ("GRPOConfig", "RLOOConfig", "PPOConfig") if c in classes]
    if not names:
        other = sorted(c for c in classes & trl if c.endswith("Config") and c != "ModelConfig")
        if other:  # TrlParser((ScriptArguments, OnlineDPOConfig, ModelConfig)): not a trainer the doctor reads
            raise UnreadableInput(
                "the Python builds {config}, a TRL config the doctor does not cover; it reads "
                "{calls}", config=other[0], calls=", ".join(CONFIG_CALLS),
            )
    for doc in _module_strings(tree) if names else []:
        for e in entry_points(doc):
            args = e.command.words[e.start:]
            if e.trainer and any(w.text.startswith("--") for w in args):
                n_cmds = sum(1 for x in entry_points(doc) if x.trainer)
                note = Message("the settings come from {built} on line {line}: the command line or a --config "
                               "YAML. The doctor reads the launch command of the module's {where}{more}; settings "
                               "passed another way are not seen", built=built, line=line,
                               where=Message("docstring") if doc == ast.get_docstring(tree) else
                               Message("usage string after its imports"),
                               more=Message(" (the first of {n})", n=n_cmds) if n_cmds > 1 else "")
                head = " ".join(w.text for w in e.command.words[:e.start])
                return ParsedInput("command", arguments=args, names=(names[0],), command=head, notes=(note,))
    raise UnreadableInput(
        "the Python builds its config with {built} on line {line}: its settings come from the command "
        "line or a YAML file given with --config, not from this file, and its docstring shows no launch "
        "command; give the doctor that command or YAML", built=built, line=line)


def _module_strings(tree: ast.Module) -> list[str]:
    """The module's docstring, then every other string standing alone at its top level: TRL's examples put
    their usage block after the imports too (trl v1.9.0 examples/scripts/ppo/ppo.py), where it is no
    docstring to Python but is the file's usage note to its reader."""
    out = [ast.get_docstring(tree) or ""]
    out += [n.value.value for n in tree.body[1:] if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)]
    return [t for t in out if t]


def _segment(lines: list[str], node: ast.expr) -> str:
    """The source text of ``node`` (ast.get_source_segment re-splits the whole source on every call)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    end = node.end_col_offset if node.end_col_offset is not None else None
    if first == last:
        return lines[first].encode()[node.col_offset : end].decode("utf-8", "replace")
    parts = [lines[first].encode()[node.col_offset :].decode("utf-8", "replace"), *lines[first + 1 : last],
             lines[last].encode()[:end].decode("utf-8", "replace")]
    return "".join(parts)


#: A float as OmegaConf's YAML loader reads one (omegaconf/_utils.py, get_yaml_loader): YAML 1.2's forms
#: too, so ``1e-3`` is 0.001 where PyYAML's YAML 1.1 reads the string "1e-3".
_CONFIG_FLOAT = re.compile(
    r"""^(?:[-+]?[0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9_]+(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


@functools.cache
def config_loader() -> type:
    """PyYAML's safe loader reading numbers as the config libraries do: ``1e-3`` a float.

    verl reads its YAML with OmegaConf, whose loader adds this float resolver; TRL reads a
    ``--config`` YAML with PyYAML and then hands each value to its field's ``type`` (argparse
    turns the string "1e-3" into 0.001).  Either way ``beta: 1e-3`` is 0.001, not text.

    Returns
    -------
    type
        A subclass of ``yaml.CSafeLoader`` (or ``yaml.SafeLoader``): it constructs no objects.
    """
    import yaml

    class ConfigLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    ConfigLoader.add_implicit_resolver("tag:yaml.org,2002:float", _CONFIG_FLOAT, list("-+0123456789."))
    return ConfigLoader


_PY_CALL = re.compile(r"\b(" + "|".join(CONFIG_CALLS) + r")\s*\(")
_YAML_LINE = re.compile(r"^\s*(-\s+)?[\"']?[A-Za-z_][\w.\-]*[\"']?\s*:(\s|$)")


_RUN_KEY = re.compile(r"^\s*-?\s*run:\s*[|>]?", re.M)


def _run_block(text: str) -> str | None:
    """The ``run:`` script of a job YAML (top level, or a step of a list), if the text is such a YAML."""
    import yaml

    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe loader
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    items = doc if isinstance(doc, list) else [doc]
    for item in items:
        if isinstance(item, dict):
            for v in [item.get("run"), *(s.get("run") for s in item.get("steps", []) if isinstance(s, dict))]:
                if isinstance(v, str) and v.strip():
                    return v
    return None


def read(data: bytes | str, names: tuple[str, ...]) -> ParsedInput:
    """Decode an input and read it with the reader its form calls for.

    Python when it calls a config class; JSON when it starts with ``{``; YAML
    when most of its lines are ``key: value``; otherwise a shell script or
    command line.

    Parameters
    ----------
    data : bytes or str
        The input.
    names : tuple of str
        Trainer names, for :func:`read_shell`.

    Returns
    -------
    ParsedInput

    Raises
    ------
    UnreadableInput
        With one sentence saying why.
    """
    text = decode(data)
    stripped = text.lstrip()
    if _PY_CALL.search(text) or looks_python(text):  # Python is read as Python, never as shell
        return read_python(text)
    if stripped.startswith("{"):
        return read_structured(text, "json")
    lines = [ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]
    yaml_like = sum(1 for ln in lines if _YAML_LINE.match(ln) or ln.lstrip().startswith("- "))
    run = _run_block(text) if _RUN_KEY.search(text) else None
    if run is not None:  # a job YAML (SkyPilot, dstack, a CI step): its run: block is the launch script
        parsed = read_shell(run, names)
        note = Message("the launch command is read from the YAML's run: block")
        return ParsedInput(parsed.kind, parsed.settings, parsed.arguments, parsed.names, parsed.command,
                           (note, *parsed.notes))
    named = any(n in ln for ln in lines for n in names)
    if lines and not named and yaml_like >= 0.6 * len(lines) and not stripped.startswith("-"):
        return read_structured(text, "yaml")
    return read_shell(text, names)
