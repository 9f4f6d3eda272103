"""procjudge inside Inspect AI: a scorer that judges how the agent of a sample iterated.

    from procjudge.inspect import process_score

    Task(dataset=..., solver=basic_agent(tools=[bash()]), scorer=[my_tests(), process_score()])

The scorer reads the sample's messages: every tool call the agent made with the output that
answered it (``bash`` commands, ``text_editor`` and other edit calls, ``python``), as a shell
agent's log is read by ``procjudge import swe-agent``: an iteration is an edit of the code and the
checks the agent ran on it (its test runs, with the counts read from the runner's output, and the
scripts it ran to see what the code does), a check that validated nothing is named, not failed,
and the last iteration carries what the agent submitted. A sample whose agent edited and never
checked is one iteration that nothing validated. The process score is the score's value, so it
sits beside the task's own scores in the log and its viewer; the explanation says the tier, the
pattern and what cost or earned the points, and the metadata holds the verdict's items with their
evidence. A sample whose agent changed no file has nothing to judge: its value is 0 and
``metadata.judged`` is false.

Inspect is an optional extra (``pip install 'procjudge[inspect-scorer]'``); nothing else of
procjudge imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .importers.base import NothingLogged, explicit
from .importers.inspect_calls import ROOTS, run_document, steps
from .policy import DEFAULT, Policy, load_policy
from .verdict import Verdict

__all__ = ["ROOTS", "NotJudged", "explanation", "judge_messages", "judged_off_the_loop", "metadata", "process_score",
           "run_document", "steps"]


def explanation(verdict: Verdict) -> str:
    """The score's explanation: the verdict in a few lines a reader of the log takes in at once."""
    lines = [(f"process score {verdict.process_score:+g} ({verdict.tier}; {verdict.pattern}) over "
              f"{verdict.iterations_used} iteration(s): {' -> '.join(f'{s:g}' for s in verdict.trajectory)}")]
    scored = sorted((i for i in verdict.items if i.points), key=lambda i: i.points)
    for item in scored[:8]:
        lines.append(f"{item.points:+g} {item.id} [{item.strength}]: {item.evidence[:300]}")
    if len(scored) > 8:
        lines.append(f"... and {len(scored) - 8} more items")
    return "\n".join(lines)


def metadata(verdict: Verdict) -> dict[str, Any]:
    return {"judged": True, "tier": verdict.tier, "pattern": verdict.pattern, "raw_process_score": verdict.raw_process_score,
            "trajectory": verdict.trajectory, "anti_patterns": verdict.anti_patterns,
            "items": [{"id": i.id, "kind": i.kind, "points": i.points, "iterations": i.iterations, "strength": i.strength,
                       "basis": i.basis, "evidence": i.evidence} for i in verdict.items],
            "warnings": verdict.warnings[:20]}


def judge_messages(messages: list[Any], policy: Policy = DEFAULT, sample: str = "sample",
                   statement: str = "") -> Verdict | None:
    """The verdict on a sample's messages, or None when there is nothing to judge."""
    from .judge import judge
    from .records import load_record

    try:
        document = run_document(messages, sample=sample, statement=statement)
    except NothingLogged:
        return None
    return judge(load_record(explicit(document), f"<inspect sample {sample}>"), policy)


T = TypeVar("T")
JUDGE_SECONDS = 60.0  # a sample's judging is abandoned past this (its thread is left to finish)


def reason_of(exc: Exception) -> str:
    """An exception in one line: a LoadError as it reads, anything else with its type."""
    from .loading import LoadError

    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:300] if isinstance(exc, LoadError) else f"{type(exc).__name__}: {text[:300]}"


class NotJudged(str):
    """Why a sample or transcript was not judged (the judging took too long, or raised)."""


async def judged_off_the_loop(work: Callable[[], T], what: str) -> T | NotJudged:
    """``work()`` in a worker thread, off the event loop (the other samples go on meanwhile) and
    bounded by ``JUDGE_SECONDS``: its result, or why there is none (``what`` names the log)."""
    import anyio
    import anyio.to_thread

    try:
        with anyio.fail_after(JUDGE_SECONDS):
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except TimeoutError:
        return NotJudged(f"judging took longer than {JUDGE_SECONDS:g} s; not judged")
    except Exception as exc:  # noqa: BLE001 - one bad log must not stop the evaluation or the scan
        return NotJudged(f"{what} could not be judged: {reason_of(exc)}")


def process_score(policy: Policy | str | None = None) -> Any:
    """An Inspect scorer whose value is procjudge's process score of the sample's trajectory
    (``policy``: a Policy, or a policy file's path; the defaults without)."""
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState

    active = policy if isinstance(policy, Policy) else load_policy(policy) if policy else DEFAULT

    def not_judged(why: str) -> Score:
        return Score(value=0.0, answer="not judged", explanation=f"procjudge: {why}", metadata={"judged": False})

    @scorer(metrics=[mean(), stderr()], name="procjudge")
    def procjudge() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            statement = state.input if isinstance(state.input, str) else ""
            messages, sample = list(state.messages), str(state.sample_id)

            def work() -> Verdict | None:
                return judge_messages(messages, active, sample=sample, statement=statement)

            verdict = await judged_off_the_loop(work, "this sample's log")
            if isinstance(verdict, NotJudged):
                return not_judged(verdict)
            if verdict is None:
                return not_judged("the agent changed no file: nothing to judge")
            return Score(value=verdict.process_score, answer=verdict.tier, explanation=explanation(verdict),
                         metadata=metadata(verdict))
        return score

    return procjudge()
