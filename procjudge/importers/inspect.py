"""Inspect AI evaluation logs (``.eval`` and ``.json``) as run files: one run per sample and epoch.

A dependency-free reader of the documented log format, chosen over ``inspect_ai``'s own log API
so that importing a log does not install an evaluation framework and its model SDKs: a ``.json``
log is one object with ``eval``, ``plan`` and ``samples``; an ``.eval`` log is a zip holding
``header.json`` and ``samples/<id>_epoch_<n>.json``. Recent Inspect versions compress ``.eval``
members with Zstandard, which the standard library reads only from Python 3.14: older Pythons
need ``zstandard`` (``pip install 'procjudge[inspect]'``), and the error says so.

**An agent scored once is read as its own loop**: a sample whose messages hold the tool calls
with which the agent changed files, scored once, is read by the code procjudge's Inspect scorer
uses live (:mod:`.inspect_calls`), its score the held-back outcome, so an imported sample is the
run the scorer judged. **Otherwise an iteration is one scored submission.** A multi-attempt agent (``basic_agent`` with
``max_attempts``) has each submission scored as it is made: Inspect logs those as intermediate
score events, then the final score. Per iteration: the score (a number as a 0..1 fraction, or
Inspect's ``C``/``P``/``I``/``N`` as 100/50/0/0) on procjudge's 0..100 scale, the test counts when
the scorer's metadata carries ``passed`` and ``total``, the submitted answer as the submitted code,
the scorer's explanation as the feedback the agent was shown, every tool call since the previous
submission in the action log, and the time of the first event with the duration. A final score
that repeats the last intermediate one (the same answer) is not a new iteration. The run's budget
is ``max_attempts`` from the plan when present.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zipfile
import zlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import msgspec
from msgspec.structs import replace

from ..model import (
    ActionLogEntry,
    Actions,
    Changes,
    Counts,
    Entry,
    Failure,
    FeedbackTests,
    IterationFeedback,
    IterationTelemetry,
    RunFile,
    RunInfo,
    ScoreRecord,
    TestResults,
)
from ..model import Task as Given
from ..policy import DEFAULT, Limits
from ..safe_io import WriteError
from .base import UNREADABLE, ImportIssue, NothingLogged
from .build import held_back, submissions
from .driver import Imported, Made, Task, drive
from .values import loads

LETTER_SCORES = {"C": 100.0, "P": 50.0, "I": 0.0, "N": 0.0}


class LogError(ValueError):
    """A log that cannot be read: why, in one line."""


# --------------------------------------------------------------------------- reading


def _zstd(data: bytes, limits: Limits, name: str) -> bytes:
    """A zstd member's bytes, decompressed within the member limit by the one bounded reader."""
    import io

    from ..bounded import Decompressed, InputLimit

    bound = msgspec.structs.replace(limits, decompressed_bytes=limits.member_bytes)
    try:
        with Decompressed(io.BytesIO(data), "zst", bound) as stream:
            out = io.BufferedReader(stream).read()
    except InputLimit as exc:
        raise LogError(f"{name}: {exc}") from None
    return out


# What zipfile raises on a damaged archive: a bad header or CRC, an unknown version or method
# (NotImplementedError), an encrypted member (RuntimeError), a cut stream.
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, OSError, zlib.error)


def _member(archive: zipfile.ZipFile, handle: Any, name: str, limits: Limits) -> Any:
    """One JSON member of an .eval zip, whatever its compression (stored, deflate, zstd), within
    the member limits; LogError naming the member otherwise."""
    from ..bounded import InputLimit, member

    info = archive.getinfo(name)
    if info.file_size > limits.member_bytes:
        raise LogError(f"{name} is {info.file_size:,} bytes uncompressed; members are limited to "
                       f"{limits.member_bytes:,} (limits.member_bytes in the policy)")
    try:
        if info.compress_type != 93:
            data = archive.read(name)  # zipfile stops at the declared size and checks the CRC
        else:
            handle.seek(info.header_offset)
            header = handle.read(30)
            if header[:4] != b"PK\x03\x04":
                raise LogError(f"{name}: not a zip local file header")
            skip = int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
            handle.seek(info.header_offset + 30 + skip)
            data = _zstd(handle.read(min(info.compress_size, limits.member_bytes)), limits, name)
        return loads(member(data, limits, name))
    except LogError:
        raise  # already says which member and why (a ValueError, not a JSON error)
    except InputLimit as exc:
        raise LogError(str(exc)) from None
    except (ValueError, RecursionError) as exc:  # JSON (and UTF-8) errors are ValueErrors
        raise LogError(f"{name}: not JSON: {str(exc)[:200] or type(exc).__name__}") from None
    except ZIP_ERRORS as exc:
        raise LogError(f"{name}: a corrupt member: {str(exc)[:200] or type(exc).__name__}") from None


def read_log(path: str, limits: Limits = DEFAULT.limits) -> tuple[dict[str, Any], Iterator[Any]]:
    """(the eval header: eval and plan, the samples one by one) of a .json or .eval log; LogError
    when it is not one, or is beyond the limits."""
    if path.endswith(".eval"):
        from ..locate import regular_file_problem

        problem = regular_file_problem(path)
        if problem is not None:
            raise LogError(problem)
        handle = open(path, "rb")  # noqa: SIM115 - closed by the generator below, or here on failure
        try:
            archive = zipfile.ZipFile(handle)
            if len(archive.infolist()) > limits.members:
                raise LogError(f"{len(archive.infolist()):,} members; archives are limited to {limits.members:,} "
                               "(limits.members in the policy)")
            header = _member(archive, handle, "header.json", limits)
        except (*ZIP_ERRORS, KeyError, LogError, ValueError) as exc:
            handle.close()
            raise LogError(f"not an Inspect .eval log: {str(exc)[:300]}") from None
        if not isinstance(header, dict):
            handle.close()
            raise LogError(f"not an Inspect .eval log: header.json holds {type(header).__name__}, not an object")

        def samples() -> Iterator[Any]:
            try:
                for name in sorted(n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json")):
                    try:
                        yield _member(archive, handle, name, limits)
                    except LogError as exc:  # one unreadable sample; the others are read
                        yield exc
            finally:
                handle.close()

        return header, samples()
    from ..bounded import member
    from ..locate import read_regular

    try:
        document = loads(member(read_regular(path, limits.member_bytes), limits, path))
    except RecursionError:
        raise LogError("not an Inspect log: nested too deeply") from None
    if not isinstance(document, dict) or "eval" not in document:
        raise LogError("not an Inspect log: no `eval` header")
    listed = document.get("samples") or []
    return document, iter(listed if isinstance(listed, list) else [listed])


# --------------------------------------------------------------------------- converting


def _resolve(value: Any, attachments: dict[str, str]) -> Any:
    """Inspect stores long strings once, as ``attachment://<hash>``: put them back."""
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value[len("attachment://"):], value)
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    return value


def score_value(value: Any) -> float | None:
    """A score on 0..100: a number as a 0..1 fraction (or already 0..100), a letter C/P/I/N."""
    if isinstance(value, bool):
        return 100.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        return round(number * 100, 4) if 0 <= number <= 1 else (number if 0 <= number <= 100 else None)
    if isinstance(value, str):
        return LETTER_SCORES.get(value.strip().upper())
    if isinstance(value, dict) and value:
        values = [v for v in (score_value(v) for v in value.values()) if v is not None]
        return round(sum(values) / len(values), 4) if values else None
    return None


def _seconds(a: str | None, b: str | None) -> float | None:
    try:
        return round((datetime.fromisoformat(str(b)) - datetime.fromisoformat(str(a))).total_seconds(), 3)
    except (TypeError, ValueError):
        return None


def _input_text(sample: dict[str, Any]) -> str:
    value = sample.get("input")
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for message in value:
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    return ""


def _max_attempts(header: dict[str, Any]) -> int | None:
    for step in (header.get("plan") or {}).get("steps") or []:
        params = step.get("params") or {}
        if isinstance(params.get("max_attempts"), int) and params["max_attempts"] > 0:
            return int(params["max_attempts"])
    return None


def convert(header: dict[str, Any], sample: dict[str, Any], agent: str | None = None) -> RunFile:
    """One sample (one epoch) of an Inspect log -> one run (the typed model): the agent's own loop when it
    edited files with tool calls and was scored once (a CLI agent, a ``react`` agent), else one
    iteration per scored submission."""
    attachments = sample.get("attachments") or {}
    events = [_resolve(e, attachments) for e in sample.get("events") or [] if isinstance(e, dict)]
    scored = _submissions(events)
    if len(scored) <= 1:
        local = _local_run(header, sample, agent, scored[0]["score"] if scored else None, attachments)
        if local is not None:
            return local
    if not scored:
        raise NothingLogged("no scored submission in this sample")
    iterations = []
    start = 0
    for k, event in enumerate(scored):
        end = events.index(event)
        iterations.append(_entry(k, event["score"], events[start:end + 1]))
        start = end + 1
    return submissions(_run_info(header, sample, agent, len(iterations)), iterations)


def _local_run(header: dict[str, Any], sample: dict[str, Any], agent: str | None, score: dict[str, Any] | None,
               attachments: dict[str, str]) -> RunFile | None:
    """The sample's tool calls read as procjudge's Inspect scorer reads them live
    (:func:`.inspect_calls.run_document`): an iteration is an edit and the checks the agent ran
    on it, so a sample imported from its log is the run the scorer judged. The sample's score is
    the held-back outcome (a full score passes it). None when the agent changed no file."""
    from .inspect_calls import run_document

    raw = sample.get("messages")
    if not isinstance(raw, list) or not any(isinstance(m, dict) and m.get("tool_calls") for m in raw):
        return None
    messages = [_message(_resolve(m, attachments)) for m in raw if isinstance(m, dict)]
    info = _run_info(header, sample, agent, 1)
    try:
        document = run_document(messages, sample=str(sample.get("id")), agent=info.agent or "",
                                statement=info.task.statement or "" if info.task is not None else "")
    except NothingLogged:
        return None
    run = replace(document.run, id=info.id, agent=info.agent, challenge=info.challenge, source=info.source,
                  task=info.task, started_at=info.started_at or document.run.started_at)
    document = replace(document, run=run)
    value = score_value(score.get("value")) if score is not None else None
    if value is None:
        return document
    final = document.iterations[-1].iteration_telemetry
    hidden, suites = held_back([{"name": "score", "passed": int(value >= 100), "total": 1}])
    final = replace(final, test_results=replace(final.test_results or TestResults(), hidden=hidden, hidden_suites=suites))
    return replace(document, iterations=[*document.iterations[:-1], replace(document.iterations[-1], iteration_telemetry=final)])


def _message(message: dict[str, Any]) -> Any:
    """A logged chat message with the attributes Inspect's own message objects have."""
    from types import SimpleNamespace

    calls = [SimpleNamespace(id=call.get("id"), function=call.get("function"),
                             arguments=call["arguments"] if isinstance(call.get("arguments"), dict) else {})
             for call in message.get("tool_calls") or [] if isinstance(call, dict)]
    error = message.get("error")
    content = message.get("content")
    if isinstance(content, list):
        content = [SimpleNamespace(text=part.get("text")) for part in content if isinstance(part, dict)]
    return SimpleNamespace(role=message.get("role"), content=content, tool_calls=calls,
                           tool_call_id=message.get("tool_call_id"),
                           error=SimpleNamespace(type=error.get("type"), message=error.get("message"))
                           if isinstance(error, dict) else None)


def _submissions(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scored submissions: a multi-attempt agent's intermediate scores, then the final score
    when it is a new answer (of the task's scorers: procjudge's own scorer judges the process)."""
    scored = [e for e in events if e.get("event") == "score" and isinstance(e.get("score"), dict)
              and e.get("scorer") != "procjudge"]  # procjudge's own process score is not the task's
    submissions = [e for e in scored if e.get("intermediate")]
    final = [e for e in scored if not e.get("intermediate")]
    if final and (not submissions or final[-1]["score"].get("answer") != submissions[-1]["score"].get("answer")):
        submissions.append(final[-1])
    return submissions


def _run_info(header: dict[str, Any], sample: dict[str, Any], agent: str | None, iterations: int) -> RunInfo:
    eval_spec = header.get("eval") or {}
    sample_id = str(sample.get("id"))
    epoch = sample.get("epoch") or 1
    task = str(eval_spec.get("task") or "task")
    statement = _input_text(sample)
    visible = (sample.get("metadata") or {}).get("visible_tests")
    shown = visible[:1000] if isinstance(visible, list) and all(isinstance(t, str) for t in visible) else None
    return RunInfo(id=f"{task}/{sample_id}" + (f"/epoch-{epoch}" if epoch != 1 else ""),
                   agent=agent or str(eval_spec.get("model") or "agent"), challenge=f"{task}/{sample_id}",
                   format="standard", max_iterations=max(iterations, _max_attempts(header) or iterations),
                   source="inspect", task=Given(statement=statement[:20_000], visible_tests=shown),
                   started_at=str(sample["started_at"]) if sample.get("started_at") else None)


def _entry(k: int, score: dict[str, Any], window: list[dict[str, Any]]) -> Entry:
    """One scored submission: its score and test counts, the answer as code, the tool calls since
    the submission before it, its timing, and the scorer's explanation as feedback."""
    value = score_value(score.get("value"))
    meta = score.get("metadata") or {}
    counted = isinstance(meta.get("passed"), int) and isinstance(meta.get("total"), int) and meta["total"] > 0
    answer = score.get("answer")
    tools = [e for e in window if e.get("event") == "tool"]
    log = [ActionLogEntry(tool="submit" if e.get("function") == "submit" else "other", target=str(e.get("function"))[:200])
           for e in tools]
    times = [e.get("timestamp") for e in window if e.get("timestamp")]
    duration = _seconds(times[0], times[-1]) if times else None
    telemetry = IterationTelemetry(
        iteration_number=k,
        score=ScoreRecord(post_iteration=value) if value is not None else None,
        test_results=TestResults(post_iteration=Counts(passed=meta["passed"], total=meta["total"],
                                                       failed=meta["total"] - meta["passed"])) if counted else None,
        changes=Changes(code=answer[:10_000_000], code_hash=hashlib.sha256(answer.encode("utf-8")).hexdigest())
        if isinstance(answer, str) and answer else None,
        actions=Actions(tool_calls_total=len(tools), log=log),
        timestamp_start=times[0] if times else None,
        duration_seconds=duration if duration is not None and duration >= 0 else None,
    )
    explanation = score.get("explanation")
    if not (value is not None and value < 100 and isinstance(explanation, str) and explanation):
        return Entry(iteration_telemetry=telemetry)
    failing = meta.get("failing") if isinstance(meta.get("failing"), list) else None
    failures = ([Failure(name=str(name)[:500], message=explanation[:2000]) for name in failing]
                if failing else [Failure(name="scorer", message=explanation[:2000])])
    return Entry(iteration_telemetry=telemetry, iteration_feedback=IterationFeedback(tests=FeedbackTests(failures=failures)))


def import_files(paths: list[str], out: str, agent: str | None = None, limits: Limits = DEFAULT.limits,
                 jobs: int = 1, overwrite: bool = False) -> Imported:
    """Import Inspect logs. A log that cannot be read is one error; a sample that cannot be, an
    error at its number, and the next is read. The samples are made in ``jobs`` worker processes."""
    return drive(tasks(paths, agent, limits), out, paths, overwrite, jobs)


def tasks(paths: list[str], agent: str | None, limits: Limits) -> Iterator[Task | ImportIssue]:
    """A run per sample of each log."""
    for path in paths:
        try:
            header, samples = read_log(path, limits)
        except (LogError, *UNREADABLE) as exc:
            yield ImportIssue(path, 1, str(exc)[:500])
            continue
        number = 0
        try:
            for number, sample in enumerate(samples, start=1):
                if isinstance(sample, LogError):
                    yield ImportIssue(path, number, str(sample)[:500])
                    continue
                label = f"sample {sample.get('id')}" if isinstance(sample, dict) else f"sample {number}"
                yield Task(path, number, functools.partial(_sample_run, header, sample, agent), label=label,
                           records=[sample], cut=300)
        except (LogError, WriteError, *UNREADABLE) as exc:
            yield ImportIssue(path, number, str(exc)[:500])


def _sample_run(header: dict[str, Any], sample: Any, agent: str | None) -> Made:
    """One sample's run, named by the agent and id it records."""
    if not isinstance(sample, dict):
        raise TypeError(f"expected an object, got {type(sample).__name__}")
    document = convert(header, sample, agent)
    return str(document.run.agent), str(document.run.id), document
