"""Tables that fit the terminal they are printed on.

CI logs and pipes are 80 columns wide. A renderable here chooses its layout when rich prints it,
from the width it is given: the full table from ``NARROW`` columns up, and below that a narrower
layout whose identifiers are shortened from the left with an ellipsis (the end of a run id is
what tells runs apart), never folded into pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

NARROW = 100
ELLIPSIS = "…"
SEPARATOR = 3  # a column separator with its padding: " │ "


def left_ellipsis(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by dropping its start: '…/gpt-4/HumanEval_12'."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - width + 1:] if width > 1 else ELLIPSIS


def right_ellipsis(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + ELLIPSIS


def spare(width: int, columns: Iterable[Iterable[str]], minimum: int = 12) -> int:
    """The width left for one flexible column once the others (each as wide as its widest cell,
    header included) and the separators are placed; at least ``minimum``."""
    fixed = [max((len(cell) for cell in column), default=0) for column in columns]
    return max(minimum, width - sum(fixed) - SEPARATOR * len(fixed))


class Fitted:
    """A renderable laid out for the width it is printed at: ``wide()`` from ``NARROW`` columns,
    ``narrow(width)`` below."""

    def __init__(self, wide: Callable[[], RenderableType], narrow: Callable[[int], RenderableType]) -> None:
        self.wide = wide
        self.narrow = narrow

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield self.wide() if width >= NARROW else self.narrow(width)


class AtWidth:
    """A renderable laid out for the width it is printed at, one layout whatever the width."""

    def __init__(self, render: Callable[[int], RenderableType]) -> None:
        self.render = render

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.render(options.max_width)
