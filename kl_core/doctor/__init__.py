"""The config doctor: what a training config's KL term computes, and what to change.

``parse`` (safe readers: shell, Hydra overrides, flags, YAML, JSON, Python),
``profiles`` (where each trainer places a KL term; release keys in ``keys/``),
``releases`` (release eras, ``releases.toml``), ``diagnosis`` (what the card
says: KL terms, warnings and checked fixes), ``card`` (the card as text and as Markdown).
"""
