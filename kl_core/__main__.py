"""``python -m kl_core``: see :mod:`kl_core.cli`."""

from kl_core.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
