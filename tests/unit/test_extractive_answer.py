"""The offline extractive answer: which sentences it quotes, and how."""

from ragstream.query.stages.answer import EXTRACTIVE_HEADER, NO_CONTEXT_ANSWER, extractive_answer
from ragstream.query.types import ContextChunk


def chunk(text: str, ref: str) -> ContextChunk:
    return ContextChunk(f"c{ref}", f"d{ref}", "", text, 0.0, 0, ref)


def test_quotes_the_sentences_sharing_most_query_terms_with_their_references() -> None:
    chunks = [
        chunk("Bergen is rainy. The Tern S3 recall cost four million.", "1"),
        chunk("Seals for the Tern S3 came from Aberdeen.", "2"),
    ]
    answer = extractive_answer("Where did the Tern S3 seals come from?", chunks, 1)
    assert answer.splitlines() == [
        EXTRACTIVE_HEADER,
        "- Seals for the Tern S3 came from Aberdeen. [2]",
    ]


def test_a_sentence_opening_with_a_pronoun_is_quoted_with_the_one_before() -> None:
    text = "Kestrel Polymers was founded in 2009. It has supplied seals for Skua drones."
    answer = extractive_answer("Who supplied the seals?", [chunk(text, "1")], 1)
    assert "- Kestrel Polymers was founded in 2009. It has supplied seals" in answer


def test_no_shared_term_means_no_answer() -> None:
    assert extractive_answer("Who?", [chunk("Nothing relevant here.", "1")]) == NO_CONTEXT_ANSWER


def test_rare_question_terms_outweigh_common_ones() -> None:
    company = " ".join(f"Halvorsen Aquatics opened office {n}." for n in range(6))
    chunks = [
        chunk(f"{company} Rafael Quintero leads the software team at Halvorsen Aquatics.", "1"),
        chunk("Mira Okafor, who leads the Tern sensor team, joined in 2019.", "2"),
    ]
    answer = extractive_answer("Who leads the Tern sensor team at Halvorsen Aquatics?", chunks, 1)
    assert answer.splitlines()[1:] == [
        "- Mira Okafor, who leads the Tern sensor team, joined in 2019. [2]"
    ]


def test_good_matches_are_quoted_in_the_order_retrieval_ranked_their_chunks() -> None:
    filler = " ".join(f"Bergen harbour note {n}." for n in range(6))
    chunks = [
        chunk(f"{filler} The Tern sensor team is led by Mira Okafor.", "1"),
        chunk("Mira Okafor leads the Tern sensor team.", "2"),
    ]
    answer = extractive_answer("Who leads the Tern sensor team?", chunks, 2)
    assert answer.splitlines()[1:] == [
        "- The Tern sensor team is led by Mira Okafor. [1]",
        "- Mira Okafor leads the Tern sensor team. [2]",
    ]
