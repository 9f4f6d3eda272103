"""Tables that fit the terminal they are printed on.

CI logs and pipes are 80 columns wide. A renderable here chooses its layout when rich prints it,
from the width it is given: the full table from ``NARROW`` columns up, and below that a narrower
layout whose identifiers are shortened from the left with an ellipsis (the end of a run id is
what tells runs apart), never folded into pieces.

Off a terminal (a pipe, a file, a CI log) an identifier is never cut: a reader there copies it,
greps for it or parses it. The layout is chosen for the width as on a terminal, but every
identifier is whole and a line that then runs past the width is printed whole, not wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment

NARROW = 100
ELLIPSIS = "…"
SEPARATOR = 3  # a column separator with its padding: " │ "
UNBOUNDED = 100_000  # the width a renderable is measured at off a terminal

_WHOLE: ContextVar[bool] = ContextVar("whole_identifiers", default=False)


def whole() -> bool:
    """Whether identifiers are printed whole (off a terminal), not cut to fit."""
    return _WHOLE.get()


@contextmanager
def identifiers_whole(on: bool = True) -> Iterator[None]:
    token = _WHOLE.set(on)
    try:
        yield
    finally:
        _WHOLE.reset(token)


def left_ellipsis(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by dropping its start: '…/gpt-4/HumanEval_12'
    (whole off a terminal)."""
    if whole() or len(text) <= width:
        return text
    if width <= 0:
        return ""
    return ELLIPSIS + text[len(text) - width + 1:] if width > 1 else ELLIPSIS


def right_ellipsis(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters at its end (whole off a terminal)."""
    if whole() or len(text) <= width:
        return text
    return text[: max(0, width - 1)] + ELLIPSIS


def on_terminal(console: Console) -> bool:
    """Whether the report is read on a terminal (identifiers may be cut to fit) or off one."""
    return console.is_terminal


def _drawn(console: Console, options: ConsoleOptions, build: Callable[[int], RenderableType]) -> RenderResult:
    """``build(width)`` drawn at the width it is given on a terminal; off one, built for that
    width with identifiers whole and drawn without a bound, so that rich neither wraps nor cuts a
    line (the console prints it uncropped: see ``console.print_renderable``)."""
    width = options.max_width
    if on_terminal(console):
        yield build(width)
        return
    from rich.measure import Measurement

    with identifiers_whole():
        renderable = build(width)
    # as wide as it must be, no wider: the narrow layouts are laid out for the width already (a
    # text's lines, a table of unbreakable cells), so only a whole identifier makes one wider
    needed = Measurement.get(console, options.update(max_width=UNBOUNDED), renderable)
    yield from console.render(renderable, options.update(max_width=max(width, needed.maximum)))


def spare(width: int, columns: Iterable[Iterable[str]], minimum: int = 12) -> int:
    """The width left for one flexible column once the others (each as wide as its widest cell,
    header included) and the separators are placed; at least ``minimum``."""
    fixed = [max((len(cell) for cell in column), default=0) for column in columns]
    return max(minimum, width - sum(fixed) - SEPARATOR * len(fixed))


class Fitted:
    """A renderable laid out for the width it is printed at: ``wide()`` from ``NARROW`` columns,
    ``narrow(width)`` below."""

    def __init__(self, wide: Callable[[], RenderableType], narrow: Callable[[int], RenderableType],
                 identifiers: Iterable[str] = ()) -> None:
        self.wide = wide
        self.narrow = narrow
        self.identifiers = list(identifiers)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if width >= NARROW and not on_terminal(console):
            # off a terminal the wide layout is kept while it shows every identifier whole on a
            # line; one it would fold sends the output to the narrow layout, drawn whole
            lines = console.render_lines(self.wide(), options, pad=False)
            shown = ["".join(segment.text for segment in line) for line in lines]
            if all(any(identifier in line for line in shown) for identifier in self.identifiers):
                yield from (segment for line in lines for segment in (*line, Segment.line()))
                return
        yield from _drawn(console, options, lambda at: self.wide() if at >= NARROW and on_terminal(console)
                          else self.narrow(at))


class AtWidth:
    """A renderable laid out for the width it is printed at, one layout whatever the width."""

    def __init__(self, render: Callable[[int], RenderableType]) -> None:
        self.render = render

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _drawn(console, options, self.render)
