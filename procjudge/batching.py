"""One scoring pass over many run files, as ``procjudge batch`` asks for it: the files to read,
the reports to write, the gates, and the engine that scores them.

``plan`` checks everything a batch is asked before any run is scored (unknown ``--fail-on``
findings, an output that is an input, an engine that is not installed) and raises
``UsageError`` with the message a user reads; ``results`` then streams the scored runs from the
chosen engine. The command line only parses options and writes.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from .policy import Policy
from .results import Result, UsageError
from .tally import Gates

ENGINES = ("local", "dask")


class Plan(msgspec.Struct, kw_only=True):
    """A batch ready to score: the run files, each report with its target (None: standard
    output), the gates, and how to score."""

    paths: list[str]
    reporters: list[tuple[str, Any, str | None]]
    gates: Gates
    engine: str = "local"
    scheduler: str | None = None
    workers: int = 1

    @property
    def keeps_rows(self) -> bool:
        """Whether a report lists every run (the table and markdown keep every row)."""
        return any(name in ("table", "markdown") for name, _, _ in self.reporters)


def gate_findings(values: Iterable[str], known: list[str], name: str = "--fail-on") -> tuple[str, ...]:
    """The finding ids of ``--fail-on`` (comma-separated, repeatable), each a known rule; an error
    names the gate as ``name`` (the option, or the configuration key and its file)."""
    names = [d.strip() for value in values for d in value.split(",")]
    if "" in names:  # `--fail-on ''` or a stray comma would otherwise drop the gate without a word
        raise UsageError(f"{name}: an empty finding name; expected rule ids such as test_chasing,regression_blindness "
                         f"(`procjudge explain --list` lists them), or `none` to gate on no finding")
    if "none" in names:
        if len(names) > 1:
            raise UsageError(f"{name}: `none` turns the finding gate off and cannot be given with rule ids")
        return ()
    found = tuple(dict.fromkeys(names))
    unknown = [d for d in found if d not in known]
    if unknown:
        close = list(dict.fromkeys([k for k in known if k.startswith(unknown[0])]
                                   + difflib.get_close_matches(unknown[0], known, n=3)))[:3]
        hint = f" (did you mean {' or '.join(close)}?)" if close else f"; known: {', '.join(known)}"
        raise UsageError(f"{name}: unknown finding {unknown[0]!r}{hint}; `procjudge explain --list` lists them")
    return found


def plan(paths: list[str], outputs: list[tuple[str, str | None]], gates: Gates, *, engine: str = "local",
         scheduler: str | None = None, workers: int = 1, reporter: Callable[[str], Any], nothing: str) -> Plan:
    """Check a batch before scoring: every output writable and none of them an input, some run to
    read (else ``nothing`` is the message), Parquet given a target, the engine known and
    installed; ``reporter(name)`` makes each report."""
    from .safe_io import check_target

    for name, target in outputs:
        if target is None:
            continue
        if name == "parquet":  # -o DIR (made if missing, kept if there) or -o NAME.parquet: check its two files
            from .render.parquet import targets as parquet_files

            problem = next(filter(None, (check_target(file, paths, creates_folder=True)
                                         for file in parquet_files(target))), None)
        else:
            problem = check_target(target, paths)
        if problem:
            raise UsageError(problem)
    if not paths:
        raise UsageError(nothing)
    if any(name == "parquet" and target is None for name, target in outputs):
        raise UsageError("--format parquet writes files: give -o DIR (runs.parquet and items.parquet) or -o NAME.parquet")
    if engine not in ENGINES:
        raise UsageError(f"--engine {engine!r}: expected local or dask")
    if scheduler and engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    if engine == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError("--engine dask needs Dask: pip install 'procjudge[dask]'") from None
    try:
        reporters = [(name, reporter(name), target) for name, target in outputs]
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    return Plan(paths=paths, reporters=reporters, gates=gates, engine=engine, scheduler=scheduler, workers=workers)


def results(batch: Plan, policy: Policy) -> Iterator[Result]:
    """The batch's runs scored, in input order, by its engine; each report's needs (the lines of
    iterations, the whole verdict, a run's detail) asked of the workers only when some report has them."""
    wants = {"want_lines": any(r.needs_lines for _, r, _ in batch.reporters),
             "want_verdict": any(r.needs_verdict for _, r, _ in batch.reporters),  # else the lighter result
             "want_detail": any(r.needs_detail for _, r, _ in batch.reporters)}
    if batch.engine == "dask":
        from .dask import stream

        yield from stream(batch.paths, policy, batch.scheduler, batch.workers, **wants)
        return
    from .batch import score_paths

    yield from score_paths(batch.paths, policy, jobs=batch.workers, **wants)
