"""How a turn gets its tools used: the act phase of a run (see loop.py for the answer phase).

- native: the model calls tools itself (tool_choice auto, no response format). A tool the
  domain requires that the model did not call is forced on the next call; if the server ignores
  the forcing too, the runtime runs it with arguments the domain reads from the person's words.
  Text that is already a valid answer ends the turn at once.
- planner (for models that do not call tools on their own, seed 001): one planning call whose
  JSON is enforced by the server (goal, action, arguments, confidence, whether a clarifying
  question is needed, what is unclear). The runtime validates and normalises the plan, adds the
  required tool when the plan lacks it, and runs the tools itself. Small models route such a
  decision well but fill its fields sloppily, so nothing in a plan is trusted as written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sommelier.agent.messages import (
    Message,
    Part,
    assistant,
    is_person,
    runtime,
    system,
    text_of,
    user,
)
from sommelier.agent.model import Completion, OutputFormat, ToolCall
from sommelier.agent.output import ParseResult, extract_json
from sommelier.agent.parsers import StreamParser
from sommelier.agent.profile import Strategy
from sommelier.agent.records import AttemptRecord, Outcome, Purpose
from sommelier.agent.tools import ToolRegistry, tool_calls_in_text
from sommelier.agent.turn import PlannedStep, TurnInput

if TYPE_CHECKING:
    from sommelier.agent.loop import Run

log = logging.getLogger("sommelier.agent")

ANSWER_ACTION = "answer"


@dataclass(frozen=True, slots=True)
class Acted:
    """What the act phase leaves for the answer, which the run applies: a direct answer that
    ends the turn (with the call that wrote it), the plan, what a clarifying question should
    ask about. The tools' results are in the transcript already (`Run.run_tools`)."""

    answer: ParseResult[Any] | None = None
    answered_by: AttemptRecord | None = None
    plan: Plan | None = None
    clarify: tuple[str, ...] | None = None


async def act(run: Run) -> Acted:
    if run.agent.strategy == Strategy.native:
        return await native(run)
    return await planner(run)


# -- native ----------------------------------------------------------------------------------


async def native(run: Run) -> Acted:
    tools, protocol, spec = run.agent.tools, run.agent.protocol, run.agent.spec
    if await answered_from_data(run):
        return Acted()
    forced: str | None = None
    if run.rules.note:
        # A model that answers in a tool round never reads the answer call's instruction:
        # the domain's note (the person's language, above all) comes first, just before the
        # person's message (which stays the last thing the model reads).
        last = max((i for i, m in enumerate(run.messages) if is_person(m)), default=None)
        at = len(run.messages) if last is None else last
        run.messages.insert(at, system(run.rules.note))
    while run.result.tool_rounds < run.limits.max_iterations:
        # Streamed through the answer's parser: when the model answers in a tool round, the
        # person sees it as it is written; a tool call shows nothing.
        parser = protocol.parser(spec, run.answer_context())
        completion, record = await run.call(
            run.messages,
            Purpose.tool_round,
            tools=tools.specs(run.turn),
            tool_choice=forced,
            parser=parser,
        )
        calls = completion.tool_calls or tool_calls_in_text(completion.content, tools)
        if calls:
            run.discard("tool_call")
            run.settle(record, Outcome.tool_calls)
            await run.run_tools(calls, (completion.content or "") if completion.tool_calls else "")
            if run.stood_alone():
                return Acted()  # its answer is the reply (a proposal to add bottles)
            forced = None
            continue
        missing = run.required if run.required not in run.result.tools_used else None
        if missing:
            run.discard("tool_call")
            run.settle(record, Outcome.no_tool_calls)
            if forced == missing:
                # The server ignored the forced call: run the tool from the person's words.
                await run.run_tools([ToolCall("runtime_0", missing, "{}")])
                return Acted()
            forced = missing  # the model answered without the tool it needs: force it
            continue
        return direct_answer(run, completion, record, parser)
    return Acted()


def direct_answer(
    run: Run, completion: Completion, record: AttemptRecord, parser: StreamParser
) -> Acted:
    """Text from a tool round that is already a valid answer ends the turn; anything else is
    left for the answer call (it was written with no format enforced)."""
    parsed = parser.finish(completion.finish_reason, completion.refusal)
    if parsed.ok:
        return Acted(answer=parsed, answered_by=record)
    run.settle(record, Outcome.no_tool_calls)
    return Acted()


# -- planner ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    goal: str = ""
    action: str = ANSWER_ACTION
    arguments: dict[str, Any] = field(default_factory=dict)
    confidence: float = 1.0
    needs_clarification: bool = False
    unclear: tuple[str, ...] = ()
    # The person's message in English, written last: a small model translates better than it
    # classifies, so the domain reads the gist with its English words (TurnPolicy.review). Last,
    # so that the plan's own fields are written from the prefix they always had (written first,
    # it changed the 1.5B model's actions and guesses on unseen12, more often for the worse).
    english: str = ""
    # model | review (the domain changed it) | words | rules (no plan) | screen (its kind)
    source: str = "model"

    @classmethod
    def read(cls, data: Any) -> Plan:
        """A plan from whatever JSON came back; missing or wrong fields take safe defaults."""
        if not isinstance(data, dict):
            return cls()
        confidence = data.get("confidence")
        unclear = data.get("unclear")
        return cls(
            goal=str(data.get("goal") or "")[:200],
            action=str(data.get("action") or ANSWER_ACTION),
            arguments=data["arguments"] if isinstance(data.get("arguments"), dict) else {},
            confidence=float(confidence) if isinstance(confidence, int | float) else 1.0,
            needs_clarification=data.get("needs_clarification") is True,
            unclear=tuple(str(u)[:60] for u in unclear[:3]) if isinstance(unclear, list) else (),
            # The 1.5B model copies the planning request into it ("… (Plan now: the JSON
            # plan only.)"), whose words are not the person's.
            english=str(data.get("english") or "")[:ENGLISH_CHARS].split(PLAN_NOW[:9])[0].strip(),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "action": self.action,
            "arguments": self.arguments,
            "confidence": self.confidence,
            "needs_clarification": self.needs_clarification,
            "unclear": list(self.unclear),
            "source": self.source,
            "english": self.english,
        }


def plan_schema(
    tools: ToolRegistry, replies: Mapping[str, str] | None = None, turn: TurnInput | None = None
) -> dict[str, Any]:
    """The planning step's JSON schema, built from the tools (as this turn allows them) and
    the domain's own replies (actions that run no tool; the server enforces it)."""
    offered = [tool for tool in tools.tools.values() if tool.offered_on(turn)]
    arguments = [tool.planning_schema(turn) for tool in offered]
    properties: dict[str, Any] = {
        "goal": {"type": "string", "maxLength": 40},
        "action": {"enum": [*(t.name for t in offered), *(replies or {}), ANSWER_ACTION]},
        "arguments": arguments[0] if len(arguments) == 1 else {"anyOf": arguments},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "needs_clarification": {"type": "boolean"},
        "unclear": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 2},
        "english": {"type": "string", "maxLength": ENGLISH_CHARS},
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


PLAN_NOW = "(Plan now: the JSON plan only.)"
ENGLISH_CHARS = 120
# Two examples: told only to translate, the 1.5B model wrote "The person's last message
# translated into English:", a refusal, or the message as it was. It copies an example's words
# into its own (a salmon into half the gists), so these name nothing a search could read.
TRANSLATIONS = (
    ("Hur mår du idag?", "How are you today?"),
    ("Ich habe ein neues Auto gekauft.", "I have bought a new car."),
)
TRANSLATED = ", ".join(f'"{said}" is "{english}"' for said, english in TRANSLATIONS)


def plan_section(tools: ToolRegistry, replies: Mapping[str, str] | None = None) -> str:
    """How to plan: static, so it goes in the system prompt's stable prefix. `replies`: the
    domain's actions that run no tool (a message that only thanks, say), by description."""
    # A tool offered only on some turns is named on those turns (`plan_instruction`): the
    # system prompt, and what a small model makes of every other message, stay as they were.
    named = [(t.name, t.description) for t in tools.tools.values() if t.offered is None]
    actions = "; ".join(f"{name} = {about}" for name, about in [*named, *(replies or {}).items()])
    return (
        "When asked to plan, do not answer yet: reply with JSON. goal: what the person wants, "
        f"in a few words; action: {actions}; {ANSWER_ACTION} = no tool is needed; arguments: "
        "for that tool, from the person's words; confidence: 0 to 1, how sure you are what they "
        "want; needs_clarification: true only if you cannot act without asking; unclear: what "
        "they left out; english: the person's last message word for word in English "
        f"({TRANSLATED})."
    )


def planning_messages(messages: list[Message], instruction: str) -> list[Message]:
    """The transcript with the planning request added to the person's last message. Added
    there, not as a message of its own, the prompt shares its whole prefix with the answer
    call that follows, so llama.cpp's prompt cache covers it."""
    last = max((i for i, m in enumerate(messages) if is_person(m)), default=None)
    if last is None:
        return [*messages, runtime(Part.instruction, instruction)]
    merged = runtime(Part.instruction, f"{text_of(messages[last])}\n\n{instruction}")
    return [*messages[:last], merged, *messages[last + 1 :]]


def plan_instruction(tools: ToolRegistry, turn: TurnInput) -> str:
    """The request to plan, naming the actions this turn alone offers."""
    extra = [
        f"{t.name} = {t.description}"
        for t in tools.tools.values()
        if t.offered is not None and t.offered_on(turn)
    ]
    return f"{PLAN_NOW[:-1]} Also possible now: {'; '.join(extra)}.)" if extra else PLAN_NOW


async def answered_from_data(run: Run) -> bool:
    """A required tool that answers from data, settled by the words ("how cold should I serve
    it?"), runs at once: its answer ends the turn, and no model is asked."""
    tool = run.agent.tools.tools.get(run.required or "")
    if tool is None or not tool.answers or not run.rules.settled:
        return False
    await run.run_tools([ToolCall("runtime_0", tool.name, "{}")])
    return run.given_answer() is not None


SCREEN_TOKENS = 16  # {"kind": "…"}: a few tokens


async def screened(run: Run) -> Plan | None:
    """The domain's screen (TurnRules.screen): the model says what kind of message this is,
    read alone, in one short call constrained to the kinds. A kind with a fixed reply ends the
    turn with it, as a plan that chose that reply; any other goes on to the plan."""
    screen = run.rules.screen
    if screen is None:
        return None
    messages = [system(screen.instruction)]
    for said, said_kind in screen.examples:
        messages += [user(said), assistant(json.dumps({"kind": said_kind}))]
    messages.append(user(run.turn.request))
    kinds = {"type": "string", "enum": list(screen.kinds)}
    schema = {
        "type": "object",
        "properties": {"kind": kinds},
        "required": ["kind"],
        "additionalProperties": False,
    }
    output = OutputFormat("screen", schema=schema)
    completion, record = await run.call(
        messages, Purpose.screen, output=output, max_tokens=SCREEN_TOKENS
    )
    data, problem = extract_json(completion.content or "")
    kind = data.get("kind") if isinstance(data, dict) else None
    if problem or kind not in screen.kinds:
        record.error_kind, record.error_message = "invalid_json", problem or f"kind {kind!r}"
        run.settle(record, Outcome.invalid)
        return None  # the plan decides, as without a screen
    reply = screen.replies.get(str(kind))
    record.rules = [f"screen_{kind}"]  # what it said, acted on or not
    run.settle(record, Outcome.planned)
    if reply is None:
        return None
    log.info("turn screened", extra={"event": "turn_screened", "kind": kind, "reply": reply})
    return Plan(goal=run.turn.request[:60], action=reply, source="screen")


async def planner(run: Run) -> Acted:
    rules = run.rules
    if await answered_from_data(run):
        return Acted()
    screened_as = await screened(run)
    if screened_as is not None:
        return Acted(plan=screened_as)
    if rules.settled and run.required is not None:
        # The person's words already name what to search for: a planning call would cost a
        # small model seconds and change nothing (its arguments give way to the words).
        plan = Plan(goal=run.turn.request[:60], action=run.required, source="words")
    elif run.required is None and not rules.tools_allowed and not rules.subject_unclear:
        # Nothing to search and no tool allowed ("hello", "how many calories in a glass of
        # wine?"): a plan could change nothing but cost a call.
        plan = Plan(goal=run.turn.request[:60], source="rules")
    else:
        plan = await make_plan(run)
    tools = run.agent.tools
    steps: list[tuple[str, dict[str, Any]]] = []
    # With the subject unclear the plan decides, as the domain reviewed it: "Was trinkt man zu
    # Maultaschen in Brühe?" is a question the words keep from the tools, and its plan a search.
    offered = plan.action in tools and tools.tools[plan.action].offered_on(run.turn)
    if offered and (rules.tools_allowed or rules.subject_unclear):
        steps.append((plan.action, plan.arguments))
    # The domain's review of the plan may find the message on another subject: its fixed
    # reply then stands in for the tool its rules required from the words alone.
    overruled = plan.source == "review" and plan.action in run.agent.replies
    alone = plan.action in tools and tools.tools[plan.action].stands_alone and bool(steps)
    if run.required and not (overruled or alone) and all(n != run.required for n, _ in steps):
        steps.append((run.required, {}))  # the domain fills it from the person's words
    clarify = (
        plan.unclear
        if plan.needs_clarification
        and plan.confidence < run.limits.clarify_below
        and not run.turn.asked_last
        and rules.may_clarify
        and not alone
        else None
    )
    log.info(
        "turn plan",
        extra={"event": "turn_plan", "plan": plan.to_json(), "steps": [s for s, _ in steps]},
    )
    if steps:
        calls = [
            ToolCall(f"plan_{i}", name, json.dumps(arguments))
            for i, (name, arguments) in enumerate(steps)
        ]
        await run.run_tools(calls)
    return Acted(plan=plan, clarify=clarify)


ARGUMENTS_CHOSE = "plan_arguments_chose"


def chosen_by_arguments(plan: Plan, tools: ToolRegistry, turn: TurnInput) -> str | None:
    """A tool whose answer stands alone, chosen by the arguments the plan wrote for it: the
    grammar lets a plan's arguments be any offered tool's, and the 1.5B model, asked about
    bottles it bought, wrote the first action listed ("search_wines") and then the arguments of
    add_to_cellar (the wine, how many bottles): 10 of 13 such messages (unseen32). Those
    arguments, which no other tool takes, are its choice."""
    given = set(plan.arguments)
    own = tools.tools[plan.action].planning_schema(turn) if plan.action in tools else {}
    if given and given <= set(own.get("properties", {})):
        return None  # they fit the action it named
    for tool in tools.tools.values():
        required = set(tool.planning_schema(turn).get("required", []))
        if tool.stands_alone and tool.offered_on(turn) and required and required <= given:
            return tool.name
    return None


async def make_plan(run: Run) -> Plan:
    tools = run.agent.tools
    messages = planning_messages(run.messages, plan_instruction(tools, run.turn))
    output = OutputFormat("plan", schema=plan_schema(tools, run.agent.replies, run.turn))
    completion, record = await run.call(
        messages, Purpose.plan, output=output, max_tokens=run.limits.plan_tokens
    )
    data, problem = extract_json(completion.content or "")
    if problem:
        # A server that ignored the schema: plan nothing; the required tool still runs.
        record.error_kind, record.error_message = "invalid_json", problem
        run.settle(record, Outcome.invalid)
        return Plan()
    plan = Plan.read(data)
    step = PlannedStep(plan.action, plan.arguments)
    chosen = chosen_by_arguments(plan, tools, run.turn)
    if chosen is not None:
        step = PlannedStep(chosen, plan.arguments, (ARGUMENTS_CHOSE,))
    reviewed = await run.agent.policy.review(run.turn, plan.english, step)
    # recorded on the plan call, like an answer's rules
    record.rules = list(dict.fromkeys([*step.fired, *reviewed.fired]))
    run.settle(record, Outcome.planned)
    if reviewed == PlannedStep(plan.action, plan.arguments):
        return plan
    log.info(
        "plan reviewed",
        extra={"event": "plan_reviewed", "fired": list(reviewed.fired), "english": plan.english},
    )
    arguments = dict(reviewed.arguments)
    return replace(plan, action=reviewed.action, arguments=arguments, source="review")
