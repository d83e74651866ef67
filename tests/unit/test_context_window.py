"""fit_messages as a pure function, with a counter that counts characters exactly."""

from collections.abc import Sequence

from sommelier.agent.context import MARKER, EstimatingCounter, fit_messages, is_marker
from sommelier.agent.messages import Message, assistant, system, tool_result, user


class CharCounter:
    """One token per character of content, plus one per message: easy to reason about."""

    def count(self, messages: Sequence[Message]) -> int:
        return sum(len(m.get("content") or "") + 1 for m in messages)


COUNT = CharCounter()


def conversation(turns: int) -> list[Message]:
    messages = [system("S" * 10), user("first request")]
    messages.append(assistant("first answer"))
    for i in range(turns):
        messages += [user(f"question {i:03}"), assistant(f"answer {i:03}")]
    messages.append(user("latest"))
    return messages


def contents(messages: Sequence[Message]) -> list[str]:
    return [m["content"] for m in messages]


def test_no_truncation_needed() -> None:
    messages = conversation(2)
    assert fit_messages(messages, 10_000, COUNT) == messages


def test_only_system_messages() -> None:
    messages = [system("a"), system("b")]
    assert fit_messages(messages, 1_000, COUNT) == messages


def test_one_message() -> None:
    assert fit_messages([user("hello")], 1_000, COUNT) == [user("hello")]


def test_system_messages_are_grouped_at_the_front() -> None:
    messages = [user("hi"), system("late rule"), assistant("hello"), user("bye")]
    fitted = fit_messages(messages, 1_000, COUNT)
    assert [m["role"] for m in fitted] == ["system", "user", "assistant", "user"]


def test_truncation_keeps_pinned_and_most_recent_with_one_marker() -> None:
    messages = conversation(20)
    budget = 150
    fitted = fit_messages(messages, budget, COUNT)
    assert COUNT.count(fitted) <= budget
    assert fitted[0] == messages[0]  # the system prompt
    assert fitted[1]["content"] == "first request"
    assert fitted[2]["content"] == MARKER
    assert fitted[-1]["content"] == "latest"
    assert sum(map(is_marker, fitted)) == 1
    # The kept turns are the newest ones, contiguous, starting with a user message.
    kept = contents(fitted[3:-1])
    assert kept[0].startswith("question") and kept[-1] == "answer 019"
    assert kept == contents(messages)[-1 - len(kept) : -1]


def test_marker_already_present_is_not_duplicated() -> None:
    once = fit_messages(conversation(20), 150, COUNT)
    twice = fit_messages([*once, assistant("reply"), user("another")], 150, COUNT)
    assert sum(map(is_marker, twice)) == 1
    assert twice[2]["content"] == MARKER
    # History that fits and already carries the marker is left as it is.
    assert fit_messages(once, 10_000, COUNT) == once


def test_budget_smaller_than_pinned_messages_shortens_the_longest_user_text() -> None:
    messages = [system("S" * 20), user("F" * 200), assistant("a"), user("L" * 50)]
    fitted = fit_messages(messages, 200, COUNT)
    assert COUNT.count(fitted) == 200  # shortened just enough
    first = next(m for m in fitted if m["content"].startswith("F"))
    assert first["content"].endswith("…") and len(first["content"]) < 200
    assert fitted[0]["content"] == "S" * 20 and fitted[-1]["content"] == "L" * 50
    assert messages[1]["content"] == "F" * 200  # the input is not modified
    # Tighter still: the first message gives way entirely, the latest never does.
    tiny = fit_messages(messages, 100, COUNT)
    assert tiny[-1]["content"] == "L" * 50
    assert next(m for m in tiny if m["role"] == "user")["content"] == "…"


def test_the_latest_message_is_never_cut_below_its_first_200_characters() -> None:
    long_latest = "word " * 200  # 1,000 characters
    messages = [system("S" * 20), user("F" * 200), assistant("a"), user(long_latest)]
    fitted = fit_messages(messages, 60, COUNT)
    assert fitted[-1]["content"].startswith(long_latest[:200].rstrip())
    assert fitted[-1]["content"].endswith("…")


def test_tool_call_and_results_are_kept_or_dropped_together() -> None:
    call = assistant(
        "", [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]
    )
    messages = [
        system("S"),
        user("first"),
        assistant("x" * 100),
        user("second"),
        call,
        tool_result("c1", "R" * 40),
        tool_result("c1", "Q" * 40),
        assistant("y" * 10),
        user("latest"),
    ]
    # Room for the latest turns but not the whole tool group.
    fitted = fit_messages(messages, 80, COUNT)
    roles = [m["role"] for m in fitted]
    assert "tool" not in roles and not any(m.get("tool_calls") for m in fitted)
    # With room for the group, it comes whole, and never starts with an orphan result.
    fitted = fit_messages(messages, 170, COUNT)
    assert [m["role"] for m in fitted] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
    ]
    assert fitted[2]["content"] == MARKER and fitted[3]["content"] == "second"


def test_latest_tool_group_is_pinned() -> None:
    call = assistant(
        "", [{"id": "c9", "type": "function", "function": {"name": "search", "arguments": "{}"}}]
    )
    messages = [
        system("S"),
        user("first"),
        *([user("u" * 20), assistant("a" * 20)] * 5),
        user("now"),
        call,
        tool_result("c9", "result"),
    ]
    fitted = fit_messages(messages, 40, COUNT)
    assert fitted[-2].get("tool_calls") and fitted[-1]["role"] == "tool"


def test_orphan_tool_result_is_dropped() -> None:
    messages = [system("S"), user("first"), tool_result("zz", "orphan" * 20), user("latest")]
    fitted = fit_messages(messages, 50, COUNT)
    assert all(m["role"] != "tool" for m in fitted)


def test_estimator_calibrates_toward_the_server_count() -> None:
    counter = EstimatingCounter()
    messages = [user("word " * 400)]
    first = counter.count(messages)
    for _ in range(6):
        counter.calibrate(messages, 404)  # the server says 400 tokens of content
    calibrated = counter.count(messages)
    assert calibrated < first
    assert 404 <= calibrated <= 404 * 1.15  # converged, still on the safe side


async def test_a_2048_token_window_keeps_the_whole_latest_message(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    from tests.support.chat import ANA, planner
    from tests.support.scripted import ScriptedModel, from_results

    text = "I am cooking a slow-roasted lamb shoulder with rosemary and garlic " * 6  # ~400 chars
    model = ScriptedModel([from_results()])  # lamb: searched at once, no planning call
    result = await planner(sqlite_app, model, llm_context_tokens=2048).turn(ANA, text)
    assert result.ok
    sent = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert text in sent  # never cut to "…"


def test_a_window_too_small_for_any_message_is_refused_at_start_up(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from sommelier.config import ConfigError
    from tests.support.scripted import ScriptedModel

    settings = sqlite_app.settings
    sqlite_app.settings = settings.model_validate(
        {**settings.model_dump(), "llm_context_tokens": 500}
    )
    with pytest.raises(ConfigError, match="SOMMELIER_LLM_CONTEXT_TOKENS=500") as refused:
        sqlite_app.chat_service(ScriptedModel([]))
    assert "\n" not in str(refused.value)


def test_a_tight_window_shrinks_the_answer_budget_instead(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    from tests.support.scripted import ScriptedModel

    settings = sqlite_app.settings
    sqlite_app.settings = settings.model_validate(
        {**settings.model_dump(), "llm_context_tokens": 1200}
    )
    agent = sqlite_app.chat_service(ScriptedModel([])).agent
    assert 256 <= agent.limits.max_output_tokens < 512
    assert "answers get" in caplog.text
