"""procjudge as an Inspect Scout scanner: the process score of every transcript a scan reads.

    from inspect_scout import scan, transcripts_from
    from procjudge.scout import process_scanner

    scan(scanners=[process_scanner()], transcripts=transcripts_from("./logs"))

or, from the shell, ``scout scan procjudge/scout.py -T ./logs`` with this module's path (``python -c
"import procjudge.scout as s; print(s.__file__)"`` prints it). Like Scout's grep scanner it calls no
model: the transcript's messages are read as the Inspect scorer reads a sample's
(:mod:`procjudge.inspect`: every tool call with the output that answered it, an iteration an edit
of the code and the checks run on it), so a scan of finished logs gives what the scorer would have
given while they ran.

A result's value is the process score; its answer the tier; its explanation the verdict in a few
lines; its metadata the items with their evidence; its references the messages of the tool calls
of every iteration an accusing finding names (``[M7]``: the edit and the checks run on it). A
transcript whose agent changed no file has nothing to judge: its value is None and
``metadata.judged`` is false. A transcript that cannot be judged (a bad log) is the same, with the
reason, and the scan goes on.

Inspect Scout is an optional extra (``pip install 'procjudge[scout]'``); nothing else of procjudge
imports this module.
"""

from __future__ import annotations

from typing import Any

from inspect_scout import Reference, Result, Scanner, Transcript, scanner

from procjudge.importers.base import NothingLogged, explicit
from procjudge.importers.inspect_calls import run_document
from procjudge.inspect import NotJudged, explanation, judged_off_the_loop, metadata
from procjudge.model import RunFile
from procjudge.policy import DEFAULT, Policy, load_policy
from procjudge.verdict import Verdict

__all__ = ["evidence_references", "judge_transcript", "process_scanner"]


def judge_transcript(messages: list[Any], policy: Policy = DEFAULT, sample: str = "transcript",
                     statement: str = "") -> tuple[Verdict, list[Reference]] | None:
    """The verdict on a transcript's messages and the references of its accusing findings
    (:func:`evidence_references`), or None when the agent changed no file."""
    from procjudge.judge import judge
    from procjudge.records import load_record

    origins: list[int] = []
    try:
        document = run_document(messages, sample=sample, statement=statement, origins=origins)
    except NothingLogged:
        return None
    verdict = judge(load_record(explicit(document), f"<scout transcript {sample}>"), policy)
    return verdict, evidence_references(messages, verdict, document, origins)


def evidence_references(messages: list[Any], verdict: Verdict, document: RunFile,
                        origins: list[int]) -> list[Reference]:
    """The messages whose tool calls are the evidence of the accusing findings: every step of each
    iteration such a finding names (its edits and the checks run on them), cited as ``[M<n>]`` (n
    counts the messages from 1). An iteration's steps are the next ``tool_calls_total`` of the
    transcript's steps, in order; ``origins`` gives each step's message."""
    accused = {n for item in verdict.items if item.points < 0 for n in item.iterations}
    cited: dict[int, None] = {}
    first = 0
    for position, entry in enumerate(document.iterations):
        telemetry = entry.iteration_telemetry
        count = (telemetry.actions.tool_calls_total if telemetry.actions is not None else None) or 0
        # as the verdict numbers it (facts.iteration_number)
        number = telemetry.iteration_number if telemetry.iteration_number is not None else position
        if number in accused:
            cited.update(dict.fromkeys(origins[first:first + count]))
        first += count
    return [Reference(type="message", cite=f"[M{index + 1}]", id=str(messages[index].id))
            for index in sorted(cited) if 0 <= index < len(messages)]


def _not_judged(why: str) -> Result:
    return Result(value=None, answer="not judged", explanation=f"procjudge: {why}", metadata={"judged": False})


@scanner(messages="all")
def process_scanner(policy: Policy | str | None = None) -> Scanner[Transcript]:
    """A Scout scanner whose value is procjudge's process score of each transcript (``policy``: a
    Policy, or a policy file's path; the defaults without)."""
    active = policy if isinstance(policy, Policy) else load_policy(policy) if policy else DEFAULT

    async def scan(transcript: Transcript) -> Result:
        messages = list(transcript.messages)
        sample = str(transcript.task_id or transcript.transcript_id)

        def work() -> tuple[Verdict, list[Reference]] | None:
            return judge_transcript(messages, active, sample=sample)

        judged = await judged_off_the_loop(work, "this transcript")
        if isinstance(judged, NotJudged):
            return _not_judged(judged)
        if judged is None:
            return _not_judged("the agent changed no file: nothing to judge")
        verdict, references = judged
        return Result(value=verdict.process_score, answer=verdict.tier, explanation=explanation(verdict),
                      metadata=metadata(verdict), references=references)

    return scan
