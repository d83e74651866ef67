from sommelier.chat.history import cut_for_storage


def test_short_text_is_untouched() -> None:
    assert cut_for_storage("Short. Reply.", 100) == "Short. Reply."


def test_cut_at_last_paragraph_break_within_limit() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n\nThird paragraph that is long."
    assert cut_for_storage(text, 40) == "First paragraph.\n\nSecond paragraph."


def test_cut_at_last_sentence_end_without_paragraphs() -> None:
    text = "One sentence here. Another one! A third sentence that runs past the limit."
    assert cut_for_storage(text, 45) == "One sentence here. Another one!"


def test_hard_cut_when_no_boundary() -> None:
    text = "x" * 50
    assert cut_for_storage(text, 20) == "x" * 20


def test_exact_limit_is_kept() -> None:
    assert cut_for_storage("a" * 20, 20) == "a" * 20
