"""Names written with look-alike letters of another script ("BЕRT" with a Cyrillic "Е", fullwidth
"ＣＬＩＰ") are read as the Latin name, with a note; text of one script only is never changed, and
no character of the 20 development drafts is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mustcite.extract.homoglyphs import describe, fold, mixed_words
from mustcite.labels.papers import LabelledPaper
from mustcite.recommend.audit import homoglyph_notes
from mustcite.recommend.findings import Sentence
from mustcite.recommend.name_index import NameIndex
from mustcite.recommend.neighbours import year_array

SPLIT = Path(__file__).resolve().parents[1] / "benchmarks" / "splits" / "drafts_split.json"


def test_fold_reads_mixed_words_as_latin_and_leaves_one_script_alone():
    assert fold("We use BЕRT and ＣＬＩＰ here.") == "We use BERT and CLIP here."
    assert fold("РyTorch-2") == "PyTorch-2"                                  # Cyrillic "Р" in a Latin word
    for text in ("Москва и Санкт-Петербург", "the αβγ-divergence", "β-VAE", "naïve Bayes", "plain ascii"):
        assert fold(text) == text
    text = "A BЕRT model, ＣＬＩＰ and Москва"
    assert len(fold(text)) == len(text)                                        # offsets stay valid
    assert mixed_words(text) == [("BЕRT", "BERT"), ("ＣＬＩＰ", "CLIP")]
    assert describe("BЕRT") == "U+0415 CYRILLIC CAPITAL LETTER IE"


def test_a_name_with_look_alike_letters_is_found_and_noted():
    pool = [{"paper_id": "lora", "title": "LoRA: Low-Rank Adaptation of Large Language Models", "year": 2021}]
    idx = NameIndex(pool, [LabelledPaper("l0", "labelled", year=2022)], year_array([2022]))
    years = year_array([2021])
    assert set(idx.named("we fine-tune with LoRA", 2023, years)) == {"lora"}
    assert set(idx.named("we fine-tune with LоRA", 2023, years)) == {"lora"}           # Cyrillic "о"
    assert set(idx.named("we fine-tune with ＬｏＲＡ", 2023, years)) == {"lora"}         # fullwidth
    (start, end, surface, _), = list(idx.occurrences("with LоRA.", 2023, years))
    assert (start, end, surface) == (5, 9, "LoRA")
    notes = homoglyph_notes([Sentence("We fine-tune with LоRA.", "Method", 0, [])])
    assert notes == ["'LоRA' is written with letters of another script that look Latin (U+043E CYRILLIC SMALL "
                     "LETTER O); names are read as 'LoRA'"]


@pytest.mark.data("drafts/projects")
def test_no_character_of_the_development_drafts_changes(data_dir):
    """The fold is the identity on the 20 development projects' .tex, .bib and .bbl files, so the
    audit of each reads the same names as before."""
    dev = json.loads(SPLIT.read_text(encoding="utf-8"))["dev"]
    files = [f for p in dev for f in sorted((data_dir / "drafts" / "projects" / p).rglob("*"))
             if f.suffix in (".tex", ".bib", ".bbl") and f.is_file()]
    assert len(files) > 100
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        assert fold(text) == text and mixed_words(text) == [], f
