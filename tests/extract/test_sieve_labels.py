"""The sieve's label step: the page's cutoff, and a page that would keep nothing."""
from warclake.tasks.extract.boilerplate.model import FALLBACK_FLOOR, FALLBACK_SHARE, labels
from warclake.tasks.extract.paragraph import Paragraph


def _paragraphs(n):
    return [Paragraph(path="body>main>p", text=f"paragraph {i}") for i in range(n)]


def test_paragraphs_above_the_cutoff_are_good_and_the_rest_bad():
    assert labels([0.9, 0.3, 0.41, 0.05], 0.4, _paragraphs(4)) == ["good", "bad", "good", "bad"]


def test_a_page_with_nothing_above_the_cutoff_keeps_the_paragraphs_near_its_best():
    best = 0.3
    probabilities = [0.02, best, best * FALLBACK_SHARE + 0.01, best * FALLBACK_SHARE - 0.01, 0.1]
    assert best >= FALLBACK_FLOOR
    assert labels(probabilities, 0.4, _paragraphs(5)) == ["bad", "good", "good", "bad", "bad"]


def test_a_page_whose_best_paragraph_is_unlikely_stays_empty():
    """Error and login pages, whose gold is empty, score all their paragraphs low."""
    probabilities = [FALLBACK_FLOOR - 0.01, 0.05, 0.001]
    assert labels(probabilities, 0.4, _paragraphs(3)) == ["bad"] * 3
    assert labels([], 0.4, []) == []
