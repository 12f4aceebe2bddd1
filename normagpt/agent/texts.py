"""A run's texts for people — its events, its error, its steps' summaries — in the viewer's
language.

The runner stores them in English, the API's and the logs' language, each in one of the
forms below (an English message id with its parameters: `the model request failed:
%(error)s`), the model server's failures (normagpt.client) included. A page shows them
through the locale (`text_shown`): the form is matched, its message id translated and
each parameter shown the same way (an error inside an error). A text of no known form (a
run stored before, a model's own words) is shown as stored.
"""

from __future__ import annotations

import re

from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy, gettext_noop, pgettext_lazy

NODES: dict[str, Promise] = {
    "planner": pgettext_lazy("node", "planner"),
    "executor": pgettext_lazy("node", "executor"),
    "judge": pgettext_lazy("node", "judge"),
    "finalizer": pgettext_lazy("node", "finalizer"),
    "user": pgettext_lazy("node", "user"),
}
DECISIONS: dict[str, Promise] = {
    "CONTINUE": gettext_lazy("continue"),
    "REPLAN": gettext_lazy("replan"),
    "FINALIZE": gettext_lazy("finalize"),
    "HUMAN_REVIEW": gettext_lazy("to a person's review"),
    "ASK": gettext_lazy("ask the asker"),
}

# Each form is its message id; its parameters match as GROUPS says (anything, by default).
# The first form a text matches is its form: a longer form comes before its prefix.
MESSAGES = (
    # the runner's events (normagpt.agent.runner, normagpt.services)
    gettext_noop(
        "the advancer %(holder)s did not renew its lease of %(lease)s s (stopped or "
        "crashed); %(owner)s took the run over and goes on from the node %(node)s"
    ),
    gettext_noop(
        "the advancer %(holder)s stopped (its process no longer runs); %(owner)s took the "
        "run over and goes on from the node %(node)s"
    ),
    gettext_noop(
        "the advancer %(holder)s did not renew its lease of %(lease)s s (stopped or "
        "crashed); queued again, the run goes on from the node %(node)s"
    ),
    gettext_noop(
        "the advancer %(holder)s stopped (its process no longer runs); queued again, the run "
        "goes on from the node %(node)s"
    ),
    gettext_noop("%(cap)s: answered with what was found"),
    gettext_noop("%(cap)s: the run stopped"),
    gettext_noop("the model request failed: %(error)s"),
    gettext_noop("the cap of %(n)s s of work was reached"),
    gettext_noop("the cap of %(n)s executed steps was reached"),
    gettext_noop("the cap of %(n)s replans was reached"),
    gettext_noop("the cap of %(n)s LLM calls was reached"),
    gettext_noop("the cap of %(n)s tokens was reached"),
    gettext_noop("the LLM budget of the run (calls or tokens) is spent"),
    gettext_noop("no reply to the run's questions within %(n)s s"),
    gettext_noop("unexpected error: %(name)s"),
    gettext_noop(
        "waiting its turn: %(n)s runs of the same user are in progress or queued before it "
        "(at most %(share)s at once)"
    ),
    gettext_noop("the %(node)s's output was invalid twice: %(error)s"),
    # the steps' summaries (normagpt.agent.nodes)
    gettext_noop("question: %(question)s"),
    gettext_noop("step %(n)s: %(action)s [%(what)s]"),
    gettext_noop("calculation %(name)s"),
    gettext_noop("steps done: %(n)s, left: %(left)s"),
    gettext_noop("findings: %(n)s"),
    gettext_noop("cap: %(reason)s"),
    # the model server's failures (normagpt.client)
    gettext_noop("the model server failed for the %(node)s: %(error)s (%(note)s)"),
    gettext_noop("the model server failed for the %(node)s: %(error)s"),
    gettext_noop("the model server was not asked for the %(node)s: %(note)s"),
    gettext_noop(
        "the model server answered the %(node)s with something that is not a chat "
        "completion (%(detail)s)"
    ),
    gettext_noop("after %(n)s attempts, %(stop)s"),
    gettext_noop("after %(n)s attempts"),
    gettext_noop("the run's LLM budget is spent"),
    gettext_noop("the node's budget of %(n)s s was spent"),
    gettext_noop("the request timed out after %(n)s s"),
    gettext_noop("the request timed out"),
    gettext_noop("could not connect to the model server (%(detail)s)"),
    gettext_noop("could not connect to the model server"),
    gettext_noop("the model server dropped the connection (%(detail)s)"),
    gettext_noop("ConnectError: [Errno %(n)s] Connection refused"),  # a server not started
    gettext_noop(
        "the language model is not configured: set OPENAI_BASE_URL (vLLM, Ollama, …) or "
        "OPENAI_API_KEY (the OpenAI API)"
    ),
)
GROUPS = {
    "node": r"\w+",
    "n": r"[\d.]+",
    "left": r"\d+",
    "lease": r"[\d.]+",
    "holder": r"\S+",
    "owner": r"\S+",
    "note": r"(?:after \d+ attempts|the run's LLM budget|the node's budget)[^()]*",
    "name": r"\S+",
}
PARAMETER = re.compile(r"%\((\w+)\)s")


def _pattern(message: str) -> re.Pattern[str]:
    """The regular expression of a form: its text literal, each parameter a named group."""
    parts, last = [], 0
    for found in PARAMETER.finditer(message):
        name = found.group(1)
        parts += [re.escape(message[last : found.start()]), f"(?P<{name}>{GROUPS.get(name, '.+')})"]
        last = found.end()
    parts.append(re.escape(message[last:]))
    return re.compile("".join(parts), re.DOTALL)


FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple((_pattern(m), m) for m in MESSAGES)
# What a parameter holds that is said, not quoted (a question, an action stays as it is).
SAID = {"cap", "error", "note", "stop", "what", "reason", "detail"}


def text_shown(text: str) -> str:
    """`text` in the active language: the first form it matches, translated, its spoken
    parameters and node names shown the same way; as stored when no form matches."""
    for pattern, message in FORMS:
        found = pattern.fullmatch(text)
        if found is None:
            continue
        params = {
            name: node_shown(value)
            if name == "node"
            else (text_shown(value) if name in SAID else value)
            for name, value in found.groupdict().items()
        }
        return gettext(message) % params
    return text


def reasons_shown(reasons: str) -> str:
    """A run's reasons joined by «; » (an incomplete run's: unconfirmed claims, a cap),
    each shown in the active language (`text_shown`)."""
    return "; ".join(text_shown(reason) for reason in reasons.split("; "))


def node_shown(node: str) -> str:
    """A node's name for people (`planner` → «планировщик»); an unknown name as it is."""
    return str(NODES.get(node, node))


def decision_shown(decision: str) -> str:
    return str(DECISIONS.get(decision, decision))
