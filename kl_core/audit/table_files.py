r"""Reading a user's CSV or Parquet file of per-token log-probs into a data frame.

The one reader of such files: :func:`read_table` (size limit, format, bytes,
frame) is what :func:`kl_core.audit.statistics.load_table` reads a file with, and
:func:`kl_core.cli.audit.table_columns` uses the same steps, so that a file is
read the same way whether its columns are listed or audited, from the app or
the command line.

What a file meets here, in order:

1. the size limit, :data:`MAX_FILE_BYTES`, before anything is parsed;
2. an empty file, or one that is not text: a PNG, a PDF or an Excel
   workbook renamed ``.csv`` is named by its first bytes (its *magic
   number*), and a Parquet file named ``.csv`` is simply read as Parquet;
3. the separator: comma, semicolon, tab or ``|``, found from the first lines
   (:func:`sniff_csv`); a semicolon or tab file whose numbers use a decimal
   comma (``-1,25``, as spreadsheets in many locales save) is read as such;
4. a header with no rows of data.

Every refusal is an :class:`~kl_core.validation.InputError` whose ``str()``
names the parameter (``path_or_buffer``) for programmatic callers, and whose
``user`` sentence names the file and says what to do, for the app.
"""

from __future__ import annotations

import io
import os
import re
from typing import Any, BinaryIO

from kl_core.validation import InputError, Message

__all__ = [
    "FORMATS",
    "MAGIC",
    "MAX_FILE_BYTES",
    "SEPARATORS",
    "file_format",
    "file_label",
    "read_bytes",
    "read_frame",
    "read_table",
    "sniff_csv",
]

MAX_FILE_BYTES = 50 * 1024 * 1024
"""Largest file read (50 MiB), checked before parsing.

The app's uploader has the same limit: ``server.maxUploadSize = 50`` (MB, as
Streamlit counts them: MiB) in ``.streamlit/config.toml``; a test checks they agree."""

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
"""File extensions read, and their format."""

SEPARATORS = (",", ";", "\t", "|")
"""Column separators :func:`sniff_csv` recognises, in order of preference."""

SNIFF_BYTES = 4096
"""Bytes of a file's start that :func:`sniff_csv` and the binary check look at."""

MAGIC = (  # first bytes → what the file is (none of these is text)
    (b"\x89PNG", Message("a PNG image")),
    (b"\xff\xd8\xff", Message("a JPEG image")),
    (b"GIF8", Message("a GIF image")),
    (b"%PDF", Message("a PDF document")),
    (b"PK\x03\x04", Message("a ZIP archive or an Excel workbook (.xlsx)")),
    (b"\xd0\xcf\x11\xe0", Message("an old Excel workbook (.xls)")),
    (b"\x1f\x8b", Message("a gzip-compressed file")),
)
_PARQUET_MAGIC = b"PAR1"
_DECIMAL_COMMA = re.compile(r"(?<![\d,])-?\d+,\d+(?![\d,])")
_DECIMAL_POINT = re.compile(r"\d\.\d")
_WHAT_TO_UPLOAD = Message(
    "Upload a CSV file (text: a header row naming the columns, then one row per token) or a Parquet file."
)


def file_label(name: str | None) -> str:
    """A file's name as shown to a user: its base name, or "the upload".

    Parameters
    ----------
    name : str or None
        The file's path or name; None for an unnamed upload.

    Returns
    -------
    str
        The base name, or the (translatable) words "the upload".
    """
    return os.path.basename(name) if name else Message("the upload")


def file_format(name: str | None, fmt: str | None = None) -> str:
    """``"csv"`` or ``"parquet"``: ``fmt`` if given, else from the file name's extension.

    Parameters
    ----------
    name : str or None
        The file's name (``.csv``, ``.parquet`` or ``.pq``).
    fmt : {"csv", "parquet"}, optional
        The format, overriding the name.

    Returns
    -------
    str
        ``"csv"`` or ``"parquet"``.

    Raises
    ------
    ValueError
        If ``fmt`` is not one of the two, or the name has no known extension.
    """
    if fmt is not None:
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"fmt must be 'csv' or 'parquet', got {fmt!r}")
        return fmt
    ext = os.path.splitext(name)[1].lower() if isinstance(name, str) else ""
    if ext in FORMATS:
        return FORMATS[ext]
    if name:
        raise InputError("path_or_buffer must be a .csv or .parquet file, got {name!r}", name=name).worded(
            "“{file}” is not a CSV or Parquet file (its name must end in .csv, .parquet or .pq). {todo}",
            file=file_label(name), todo=_WHAT_TO_UPLOAD,
        )
    raise InputError(
        "path_or_buffer must be a .csv or .parquet file, got 'an unnamed buffer'; "
        "pass fmt='csv' or fmt='parquet'"
    )


def read_bytes(source: str | os.PathLike[str] | BinaryIO, limit: int = MAX_FILE_BYTES) -> tuple[bytes, str | None]:
    """Read at most ``limit`` bytes of ``source`` (a path or a binary file); return them and the file name.

    Parameters
    ----------
    source : str, path or binary file-like
        A path, or an open binary file (Streamlit's ``UploadedFile`` also
        gives its ``size``, so an oversized upload is refused unread).
    limit : int, default :data:`MAX_FILE_BYTES`
        The largest size accepted, in bytes.

    Returns
    -------
    (bytes, str or None)
        The file's bytes and its name (None for an unnamed buffer).

    Raises
    ------
    ValueError
        If the path is not a file, the object cannot be read, or it is larger than ``limit``.
    """
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise InputError("path_or_buffer {path!r} is not a file", path=path)
        size = os.path.getsize(path)
        if size > limit:  # refuse before reading anything
            raise _too_big(path, size, limit)
        with open(path, "rb") as fh:
            return fh.read(), path
    if not hasattr(source, "read"):
        raise ValueError(
            f"path_or_buffer must be a path or a binary file-like object, got {type(source).__name__}"
        )
    name = getattr(source, "name", None)
    name = name if isinstance(name, str) else None
    size = getattr(source, "size", None)  # Streamlit's UploadedFile knows its size
    if not isinstance(size, int) and getattr(source, "seekable", lambda: False)():
        here = source.tell()
        size = source.seek(0, os.SEEK_END) - here
        source.seek(here)
    if isinstance(size, int) and size > limit:
        raise _too_big(name, size, limit)
    data = source.read(limit + 1)
    if isinstance(data, str):
        data = data.encode()
    if len(data) > limit:
        raise _too_big(name, size if isinstance(size, int) else None, limit)
    return data, name


def _size_text(n: int) -> str:
    """A size as a user reads it: ``84 MB`` (MiB, as the uploader counts them), ``300 KB``, ``64 bytes``."""
    if n >= 2**20:
        mb = n / 2**20
        return f"{mb:.0f} MB" if mb >= 10 else f"{mb:.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.0f} KB"
    return Message("{n} bytes", n=n)


def _too_big(name: str | None, size: int | None, limit: int) -> InputError:
    exc = InputError("path_or_buffer is larger than the {limit:,}-byte limit (MAX_FILE_BYTES)", limit=limit)
    if size is not None:
        return exc.worded(
            "“{file}” is {size}, over the limit of {limit}. Upload fewer rows (one training step is "
            "plenty for an audit), or save the table as Parquet, which is several times smaller.",
            file=file_label(name), size=_size_text(size), limit=_size_text(limit),
        )
    return exc.worded(
        "“{file}” is over the limit of {limit}. Upload fewer rows (one training step is plenty for "
        "an audit), or save the table as Parquet, which is several times smaller.",
        file=file_label(name), limit=_size_text(limit),
    )


def _not_text(name: str | None, data: bytes) -> InputError | None:
    """The error for bytes that are not a text table (by their first bytes), or None if they look like text."""
    head = data[:SNIFF_BYTES]
    what = next((w for magic, w in MAGIC if head.startswith(magic)), None)
    controls = sum(b < 9 or 13 < b < 32 for b in head)
    if what is None and b"\x00" not in head and controls <= len(head) // 100:
        return None
    exc = InputError(
        "path_or_buffer: {name!r} is not a text CSV file (it starts with {start!r})",
        name=name or "the buffer", start=head[:8],
    )
    if what is None:
        return exc.worded("“{file}” is not a text file, so it is not a CSV. {todo}", file=file_label(name), todo=_WHAT_TO_UPLOAD)
    return exc.worded(
        "“{file}” is not a CSV: it looks like {what}. {todo}", file=file_label(name), what=what, todo=_WHAT_TO_UPLOAD
    )


def _decode(data: bytes) -> str:
    """The text of a CSV file: UTF-8 (with or without a byte-order mark), else Windows-1252/Latin-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            return data.decode("latin-1")


def sniff_csv(text: str) -> tuple[str, str]:
    r"""The column separator and the decimal mark of a CSV text, from its first lines.

    A separator is taken when it occurs the same number of times (at least
    once) on the header and on every one of the first 20 lines, quotes aside;
    among several, the most frequent, then in the order of
    :data:`SEPARATORS`.  With none, the file is one column and ``","`` is
    returned.  The decimal mark is ``","`` when the separator is not a comma
    and the numbers are written like ``-1,25`` with no ``1.25`` anywhere.

    Parameters
    ----------
    text : str
        The file's text (its first few KiB are enough).

    Returns
    -------
    (str, str)
        The separator (``","``, ``";"``, ``"\t"`` or ``"|"``) and the decimal mark (``"."`` or ``","``).

    Examples
    --------
    >>> sniff_csv("lp;lq\n-1,5;-2,25\n")
    (';', ',')
    >>> sniff_csv("lp\tlq\n-1.5\t-2.25\n")
    ('\t', '.')
    """
    sample = text[:SNIFF_BYTES]
    lines = [ln for ln in sample.splitlines() if ln.strip()]
    if len(sample) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut short
    lines = [re.sub(r'"[^"]*"', "", ln) for ln in lines[:20]]
    best, best_count = ",", 0
    for sep in SEPARATORS:
        counts = {ln.count(sep) for ln in lines}
        if len(counts) == 1 and (count := counts.pop()) > best_count:
            best, best_count = sep, count
    body = "\n".join(lines[1:])
    decimal = "," if best != "," and _DECIMAL_COMMA.search(body) and not _DECIMAL_POINT.search(body) else "."
    return best, decimal


def read_frame(data: bytes, name: str | None, fmt: str, *, nrows: int | None = None) -> Any:
    """A pandas data frame of a CSV or Parquet file's bytes (``nrows=0``: the header only).

    Parameters
    ----------
    data : bytes
        The file's bytes (see :func:`read_bytes`).
    name : str or None
        Its name, for the messages.
    fmt : {"csv", "parquet"}
        The format by its name; bytes starting with Parquet's ``PAR1`` are
        read as Parquet whatever the name.
    nrows : int, optional
        Rows to read (``0``: only the column names).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        If the bytes are empty, not a text table, cannot be parsed, or (with
        ``nrows`` not 0) hold a header but no rows.
    """
    import pandas as pd

    label = file_label(name)
    if data.startswith(_PARQUET_MAGIC):
        fmt = "parquet"  # a Parquet file named .csv: read it for what it is
    if not data.strip():
        raise InputError("path_or_buffer: {name!r} is empty", name=name or "the buffer").worded(
            "“{file}” is empty. {todo}", file=label, todo=_WHAT_TO_UPLOAD
        )
    try:
        if fmt == "parquet":
            if nrows == 0:
                import pyarrow.parquet as pq

                cols = [c for c in pq.read_schema(io.BytesIO(data)).names if not c.startswith("__index_level_")]
                return pd.DataFrame(columns=cols)
            df = pd.read_parquet(io.BytesIO(data))
        else:
            if (exc := _not_text(name, data)) is not None:
                raise exc
            text = _decode(data)
            sep, decimal = sniff_csv(text)
            df = pd.read_csv(io.StringIO(text), sep=sep, decimal=decimal, nrows=nrows)
    except InputError:
        raise
    except Exception as exc:  # pandas/pyarrow raise many types; all mean "unreadable"
        why = " ".join(str(exc).split())
        err = InputError(
            "path_or_buffer: {name!r} could not be parsed as {fmt}: {why}",
            name=name or "the buffer", fmt=fmt.upper(), why=why,
        )
        if fmt == "parquet":
            raise err.worded(
                "“{file}” could not be read as a Parquet file ({why}). Save it again, or upload it as a CSV.",
                file=label, why=why,
            ) from exc
        raise err.worded(
            "“{file}” could not be read as a table ({why}). Check that every row has as many "
            "separators as the header row.",
            file=label, why=why,
        ) from exc
    if nrows != 0 and len(df) == 0:
        cols = ", ".join(str(c) for c in df.columns)
        raise InputError("path_or_buffer: {name!r} has no data rows", name=name or "the buffer").worded(
            "“{file}” has a header row ({columns}) but no rows of data: add one row per token.",
            file=label, columns=cols,
        )
    return df


def read_table(
    path_or_buffer: str | os.PathLike[str] | BinaryIO,
    *,
    fmt: str | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    nrows: int | None = None,
) -> tuple[Any, str | None]:
    """Read a CSV or Parquet file into a data frame: the size limit, the format, the bytes, the frame.

    Parameters
    ----------
    path_or_buffer : str, path or binary file-like
        A ``.csv``, ``.parquet`` or ``.pq`` file, or an open binary file (an
        upload); its ``name`` gives the format unless ``fmt`` is given.
    fmt : {"csv", "parquet"}, optional
        The format, overriding the file name (:func:`file_format`).
    max_bytes : int, default :data:`MAX_FILE_BYTES`
        The largest size accepted, in bytes (:func:`read_bytes`).
    nrows : int, optional
        Rows to read (``0``: only the column names), as in :func:`read_frame`.

    Returns
    -------
    (pandas.DataFrame, str or None)
        The frame, and the file's name (None for an unnamed buffer), for messages.

    Raises
    ------
    ValueError
        If ``max_bytes`` is not a positive integer, or the file is not
        CSV/Parquet, is over the limit, or cannot be read (see
        :func:`file_format`, :func:`read_bytes`, :func:`read_frame`).

    Examples
    --------
    >>> df, name = read_table(io.BytesIO(b"lp,lq\\n-1.0,-1.5\\n"), fmt="csv")
    >>> list(df.columns), name
    (['lp', 'lq'], None)
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    name = os.fspath(path_or_buffer) if isinstance(path_or_buffer, str | os.PathLike) else None
    name = name or getattr(path_or_buffer, "name", None)
    fmt = file_format(name, fmt)
    data, name = read_bytes(path_or_buffer, max_bytes)
    return read_frame(data, name, fmt, nrows=nrows), name
