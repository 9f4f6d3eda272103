"""The one registry of output formats: which commands each serves, and the renderer for each.

The command line only looks formats up here: ``--format`` choices are the formats a command
serves, and rendering is ``render(command, name, value, **context)``: the typed result, and what
else a report may use (a run's ``detail``, the ``judged`` runs a comparison page opens, the
terminal ``width``), each renderer taking the parts of the context it names. A new format (SARIF, HTML, Parquet)
is one entry and its renderers, not another branch in the CLI. Renderers are imported when used,
so ``procjudge score`` loads only what it prints with.
"""

from __future__ import annotations

import importlib
from typing import Any

import msgspec


class Format(msgspec.Struct, frozen=True, kw_only=True):
    """An output format: its name, a line for ``--help``, whether it writes bytes, and for each
    command it serves the renderer (``module:function``; batch formats name a Reporter factory)."""

    name: str
    help: str
    binary: bool = False
    detail: bool = False  # it shows runs' detail (diffs, test names): the command reads it for the renderer
    renderers: dict[str, str]

    def serves(self, command: str) -> bool:
        return command in self.renderers


FORMATS: tuple[Format, ...] = (
    Format(name="table", help="a breakdown for the terminal", renderers={
        "score": "procjudge.render.table:score", "batch": "procjudge.render.batch:REPORTERS.table",
        "compare": "procjudge.render.compare:table", "drift": "procjudge.render.drift:table",
        "estimate": "procjudge.render.review:table", "explain": "procjudge.render.explain:entry",
        "rules": "procjudge.render.explain:rules"}),
    Format(name="json", help="machine-readable (schema procjudge.score/1, .batch/1, .compare/1)", renderers={
        "score": "procjudge.render.json:score", "batch": "procjudge.render.batch:REPORTERS.json",
        "compare": "procjudge.render.json:dumps", "drift": "procjudge.render.json:dumps",
        "estimate": "procjudge.render.json:dumps", "explain": "procjudge.render.json:dumps",
        "rules": "procjudge.render.json:dumps"}),
    Format(name="markdown", help="a pull-request comment or CI step summary", renderers={
        "score": "procjudge.render.markdown:score", "batch": "procjudge.render.batch:REPORTERS.markdown",
        "compare": "procjudge.render.compare:markdown", "drift": "procjudge.render.drift:markdown",
        "estimate": "procjudge.render.review:markdown"}),
    Format(name="html", help="one self-contained page to open and share (charts, findings, diffs)", detail=True, renderers={
        "score": "procjudge.render.html:score", "batch": "procjudge.render.html:HtmlReporter",
        "compare": "procjudge.render.html:compare"}),
    Format(name="parquet", help="runs and items tables for DuckDB, pandas, Polars, Spark (needs -o; pyarrow)", binary=True,
           renderers={"batch": "procjudge.render.parquet:ParquetReporter"}),
    Format(name="csv", help="one row per run (review estimate: one per stratum)", renderers={
        "batch": "procjudge.render.batch:REPORTERS.csv", "estimate": "procjudge.render.review:csv_report"}),
    Format(name="junit", help="one testcase per run", renderers={"batch": "procjudge.render.batch:REPORTERS.junit"}),
    Format(name="github", help="GitHub Actions annotations", renderers={"batch": "procjudge.render.batch:REPORTERS.github"}),
    Format(name="sarif", help="SARIF 2.1.0 for code scanning", renderers={"batch": "procjudge.render.batch:REPORTERS.sarif"}),
    Format(name="gitlab", help="GitLab Code Quality", renderers={"batch": "procjudge.render.batch:REPORTERS.gitlab"}),
)


def names(command: str) -> list[str]:
    """The formats a command serves, in registry order."""
    return [f.name for f in FORMATS if f.serves(command)]


def help_text(command: str) -> str:
    return "; ".join(f"{f.name}: {f.help}" for f in FORMATS if f.serves(command)) + "."


def renderer(command: str, name: str) -> Any:
    """The renderer a command uses for a format (KeyError for a format it does not serve)."""
    spec = next(f for f in FORMATS if f.name == name).renderers[command]
    module_name, _, attribute = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = target[part] if isinstance(target, dict) else getattr(target, part)
    return target


def shows_detail(name: str) -> bool:
    """Whether a format shows runs' detail, which the command must then read for it."""
    return next(f for f in FORMATS if f.name == name).detail


def render(command: str, name: str, value: Any, **context: Any) -> Any:
    """``value`` rendered by the command's renderer for the format, given the parts of
    ``context`` the renderer takes by name."""
    import inspect

    function = renderer(command, name)
    accepted = inspect.signature(function).parameters
    return function(value, **{k: v for k, v in context.items() if k in accepted})


def reporter(name: str, **providers: Any) -> Any:
    """A batch format's Reporter, given the parts of the context its factory takes by name; each
    context value is a provider (a function of no argument), called only when taken (the rule
    catalogue is built only for the reports that list it)."""
    import inspect

    factory = renderer("batch", name)
    accepted = inspect.signature(factory).parameters
    return factory(**{k: provide() for k, provide in providers.items() if k in accepted})
