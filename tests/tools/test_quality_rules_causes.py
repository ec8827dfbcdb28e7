"""``tools.measure.quality_rules --causes``: why the rules drop a clean gold page, page by page."""
import random

from tools.measure.quality_rules import as_lake_text, drop_causes
from warclake.tasks.extract.paragraph import PARA_SEP

_WORDS = ("river town bridge council water morning road drivers route winter harvest market school "
          "teacher children garden library museum painter festival orchestra village doctor nurse "
          "hospital train station farmer weather storm harbour fishermen boat island lighthouse").split()
_rng = random.Random(5)
SENTENCES = [" ".join(_rng.choice(_WORDS) + " " + _rng.choice(("the", "and", "of", "with", "to"))
                      for _ in range(8)).capitalize() + " town." for _ in range(40)]
GOLD = "\n".join(SENTENCES)
MENU = ["Home", "World News", "Sports", "Weather", "Contact us"]
INDEX = [f"Topic {i}" for i in range(300)]      # a site index: short lines without punctuation


def _page(page_id: str, lines: list[str], good: int) -> dict:
    """A lake document of ``lines`` (a paragraph each), the first ``good`` labelled good."""
    text = as_lake_text(lines)
    labels = ["good"] * good + ["bad"] * (len(lines) - good)
    assert len(text.split(PARA_SEP)) == len(lines)
    return {"id": page_id, "text": text, "paragraph_labels": labels, "lang": "en", "gold": GOLD}


def test_each_dropped_page_is_listed_with_its_cause_and_the_rules_values():
    pages = [
        _page("clean", SENTENCES + MENU, len(SENTENCES)),                 # the menu labelled bad
        _page("index kept", SENTENCES + INDEX, len(SENTENCES) + 300),     # lines the gold lacks kept
        _page("text lost", SENTENCES[:2] + MENU, 2),                      # most of the text left out
    ]
    dropped = []
    causes = drop_causes(pages, dropped=dropped)
    by_id = {page_id: (cause, fired) for page_id, cause, fired in dropped}
    assert set(by_id) == {"index kept", "text lost"}
    assert by_id["index kept"][0] == "extra" and by_id["text lost"][0] == "missing"
    for cause, fired in by_id.values():
        for name, value, threshold in fired:
            assert value != threshold and isinstance(name, str)
    assert causes["any rule"] == {"extra": 1, "missing": 1}
