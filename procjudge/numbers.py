"""The one way procjudge writes a number in words: 62 rather than 62.0, 84.5 as is, 84.67 at most
two decimals. Every evidence, rule and report text uses it."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=4096)  # the same few scores and points recur in every run of a batch
def fmt_num(value: float) -> str:
    """A number as people write it: 62 rather than 62.0, 84.5 as is, at most two decimals."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")
