"""The evaluation's judge: its own eyes (no code of the runtime's validation or reading), the
dialog sets as data files, and what it finds in a reply."""

import ast
from pathlib import Path

import pytest

from sommelier.evaluation import judge
from sommelier.evaluation.report import guard_figures, judge_records, rows
from sommelier.evaluation.sets import Answer, Expect, SetError, Turn, available, load

ROOT = Path(__file__).resolve().parents[2]
WINES = judge.catalog()
RUNTIME_CHECKS = ("sommelier.chat", "sommelier.catalog", "sommelier.i18n", "sommelier.agent")


@pytest.mark.parametrize("module", ["judge", "sets", "report"])
def test_the_judge_shares_no_code_with_the_runtimes_checks(module: str) -> None:
    tree = ast.parse((ROOT / "backend/sommelier/evaluation" / f"{module}.py").read_text())
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
    assert not [m for m in imported if m.startswith(RUNTIME_CHECKS)]


def test_every_set_in_the_checkout_loads_and_says_whether_it_was_tuned_on() -> None:
    names = available() + [
        f"legacy/{p.stem}" for p in (ROOT / "tests/eval/sets/legacy").glob("*.yaml")
    ]
    assert "dev" in names and "smoke" in names
    for name in names:
        loaded = load(name)
        assert loaded.dialogs and loaded.written
        assert isinstance(loaded.tuned_on, bool)


def test_a_malformed_set_names_its_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: x\nwritten: today\ndialogs:\n  - id: a\n    turns:\n      - say: hi\n        kind: chatter\n"
    )
    with pytest.raises(SetError, match=r"bad.yaml: dialogs.0.turns.0.kind"):
        load(str(bad))


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Szukam czerwonego wina do pieczonej jagnięciny, najwyżej trzydzieści", "pl"),
        ("Порадьте, будь ласка, десертне вино до сиру", "uk"),
        ("Посоветуйте недорогое красное вино к шашлыку", "ru"),
        ("寿司に合う白ワインを探しています", "ja"),
        ("我想买一瓶适合配北京烤鸭的红酒", "zh"),
        ("와인 초보인데요, 피자랑 같이 마실 레드 와인", "ko"),
        ("Θέλω ένα ροζέ κρασί για καλοκαιρινό τραπέζι", "el"),
        ("मुझे बिरयानी के साथ पीने के लिए एक वाइन चाहिए", "hi"),
        ("Hej! Jag letar efter ett torrt vitt vin till räkor", "sv"),
        ("Препоръчвам ви това червено вино към шопската салата, то е свежо и плодово.", "bg"),
        ("Denne rødvinen passer godt til pinnekjøtt, og den er ikke så dyr heller.", "nb"),
        ("Ok", None),
    ],
)
def test_the_judge_tells_languages_by_script_and_by_its_own_detector(
    text: str, language: str | None
) -> None:
    assert judge.language_of(text) == language


def test_a_notice_false_of_the_catalog_and_a_wish_nobody_stated_are_caught() -> None:
    stated = Expect(types=("rosé",), countries=("spain",), max_price=15, impossible=True)
    # Spain has wines: "No wines from Spain" is false, whatever the search gave up.
    assert judge.notice_problems("No wines from Spain in the catalog.", "en", stated, WINES)
    exact = "Nothing in the catalog is rosé, from Spain, and at €15.00 or less."
    assert judge.notice_problems(exact, "en", stated, WINES) == []
    # A food question named no grape: the catalog has Pinot Noir, and nobody asked for it.
    found = judge.notice_problems("No Pinot Noir in the catalog.", "en", Expect(), WINES)
    assert any(p.startswith("false notice") for p in found)
    assert "invented wish: pinot noir" in found


def test_the_right_wine_of_those_shown_must_be_named() -> None:
    before = [WINES["sm-004"], WINES["sm-026"]]  # a light Pinot Noir, a full Barolo
    lightest = Expect(answer=Answer(pick="lightest"))
    assert (
        judge.fact_problem(lightest, "The Louis Jadot Bourgogne Pinot Noir is lighter.", [], before)
        == ""
    )
    assert judge.fact_problem(lightest, "Pio Cesare Barolo is the lightest.", [], before)
    lamb = Expect(answer=Answer(pick="food:lamb"))
    assert judge.fact_problem(
        lamb,
        "With lamb: Pio Cesare Barolo.",
        [],
        [WINES["sm-004"], WINES["sm-033"], WINES["sm-026"]],
    )


def test_the_driest_or_sweetest_of_those_shown_is_judged_by_the_rows() -> None:
    before = [WINES["sm-044"], WINES["sm-045"]]  # a Kabinett (off-dry), a Trocken (dry)
    driest = Expect(answer=Answer(pick="driest"))
    assert judge.fact_problem(driest, "Dönnhoff Riesling Trocken is the driest.", [], before) == ""
    assert judge.fact_problem(driest, "Dr. Loosen Blue Slate Riesling Kabinett.", [], before)
    sweetest = Expect(answer=Answer(pick="sweetest"))
    said = "The sweetest is Dr. Loosen Blue Slate Riesling Kabinett."
    assert judge.fact_problem(sweetest, said, [], before) == ""


def test_a_dish_asked_for_needs_one_card_that_pairs_with_it_in_the_catalog() -> None:
    crab = Expect(foods=("shellfish", "fish"))
    barolo, whispering_angel = WINES["sm-026"], WINES["sm-017"]
    assert "shellfish" not in " ".join(barolo.foods)
    assert judge.card_problems(crab, [barolo], []) == ["none pairs with shellfish, fish"]
    assert judge.card_problems(crab, [barolo, whispering_angel], []) == []


def test_a_number_in_range_answers_a_temperature() -> None:
    asked = Expect(wines=False, answer=Answer(numbers=(14, 20)))
    assert judge.fact_problem(asked, "Serve it at 16–18 °C.", [], []) == ""
    assert judge.fact_problem(asked, "Serve it chilled.", [], []) == "no number from 14 to 20"


def test_a_why_naming_another_country_or_colour_is_a_false_fact() -> None:
    rose = WINES["sm-017"]  # Whispering Angel, a Provence rosé
    found = judge.false_facts([(rose, "A classic red from Spain.")], "en", WINES)
    assert found and "spain" in found[0] and "red" in found[0]
    assert judge.false_facts([(rose, "A pale rosé from France.")], "en", WINES) == []


def test_a_record_is_judged_in_its_dialog_and_counted_per_language_group() -> None:
    dev = load("dev")
    dialog = next(d for d in dev.dialogs if d.id == "en-spanish-rose")
    record = {
        "set": "dev", "dialog": dialog.id, "turn": 0, "language": "en", "kind": "request",
        "say": dialog.turns[0].say, "status": "ok", "searched": True, "returned": ["sm-064"],
        "text": "No wines from Spain in the catalog. Here are the closest matches.\n\nA fresh rosé.",
        "notice": "No wines from Spain in the catalog. Here are the closest matches.",
        "intro": "A fresh rosé.", "closing": "", "cards": [{"id": "sm-064", "name": "x", "why": ""}],
    }  # fmt: skip
    judged = judge_records([record], [dev])
    assert not judged[0].verdict.good
    assert any("false notice" in p for p in judged[0].verdict.problems())
    english = rows(judged)[0]
    assert english.name == "English" and english.false_notices == 1 and english.searched == 1
    # The prompt's cached share counts only runs that recorded it.
    cached = {**record, "prompt_tokens": 1000, "cached_tokens": 700}
    unknown = {**record, "prompt_tokens": 900}  # a run stored before stop 54
    assert rows(judge_records([cached, unknown], [dev]))[0].cells()[-1] == "70 %"


def test_attempts_detected_and_innocent_messages_taken_for_attempts_are_counted() -> None:
    guard = load("guard1")
    dialog = next(d for d in guard.dialogs if d.id == "en-a")  # attempt, request, attempt

    def record(turn: int, label: str | None) -> dict:  # type: ignore[type-arg]
        said = dialog.turns[turn]
        return {
            "set": "guard1", "dialog": dialog.id, "turn": turn, "language": "en",
            "kind": said.kind, "say": said.say, "status": "ok", "text": "No.", "cards": [],
            "guard": label,
        }  # fmt: skip

    judged = judge_records(
        [record(0, "prompt_injection"), record(1, "prompt_injection"), record(2, None)], [guard]
    )
    assert guard_figures(judged) == (1, 2, 1, 1)


def test_turn_kinds_are_the_ones_the_judge_knows() -> None:
    assert Turn(say="hi", kind="courtesy").expect == Expect()


def test_bottles_offered_for_the_cellar_are_judged_against_what_was_said() -> None:
    from sommelier.evaluation.sets import Adds

    catena = Expect(adds=Adds(wine="sm-059", bottles=6, vintage=2019))
    offered = {"bottles": 6, "vintage": 2019, "wine": "Catena Malbec", "sure": True}
    record = {"adding": offered, "cards": [{"id": "sm-059"}]}
    assert judge.adding_problems(catena, record) == []
    assert judge.adding_problems(catena, {**record, "adding": {**offered, "bottles": 1}}) == [
        "1 bottles offered, not 6"
    ]
    assert judge.adding_problems(catena, {**record, "cards": [{"id": "sm-058"}]}) == [
        "sm-059 is not among the wines offered"
    ]
    assert judge.adding_problems(catena, {"cards": []}) == ["no offer to add the bottles"]
    unknown = Expect(adds=Adds(wine=None, bottles=3))
    assert judge.adding_problems(unknown, record | {"adding": {**offered, "bottles": 3}}) == [
        "catalog wines offered for a wine it lacks"
    ]
    # A request mistaken for bottles they have.
    assert judge.adding_problems(Expect(), record) == ["offered to add bottles to the cellar"]
