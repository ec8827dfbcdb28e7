"""The inner split that chooses the sieve's training options: folds by site, every tuning page
scored once, by the benchmark's metric."""
import numpy as np
import pytest

from conftest import shared_data
from tools import train_sieve
from tools.measure import sieve_inner_split
from warclake.tasks.evaluation.gold import read_gold
from warclake.tasks.evaluation.metrics import word_prf


def test_pages_of_one_site_share_a_fold():
    a = sieve_inner_split.site("https://www.example.org/a/1", "x/1")
    b = sieve_inner_split.site("http://example.org/b?q=2", "x/2")
    assert a == b == "example.org"
    assert sieve_inner_split.site("", "x/3") == "x/3"   # no URL: the page is its own site
    folds = {sieve_inner_split.fold_of(sieve_inner_split.site(f"https://site{i}.com/p", ""), 2)
             for i in range(40)}
    assert folds == {0, 1}


@pytest.mark.shared_data("gold", "wcxb_dev")
def test_every_tuning_page_is_scored_once_and_keeping_all_scores_as_the_whole_page():
    spec = "wcxb:" + shared_data("gold", "wcxb_dev")
    args = sieve_inner_split.parser().parse_args(
        ["--gold", spec, "--cutoff-gold", spec, "--pages-per-set", "40", "--trees", "4", "--depth", "2",
         "--cutoffs=-1,0.5"])
    result = sieve_inner_split.inner_split(args)
    assert len(result["chosen_cutoffs"]) == 2
    assert all(c in train_sieve.CUTOFF_GRID for c in result["chosen_cutoffs"])
    rows = result["rows"]
    assert list(rows) == ["chosen", "at -1", "at 0.5"]
    # below every probability each paragraph is kept: the extractor's whole page, scored apart
    pages = train_sieve.first_pages(read_gold(spec, "tuning"), 40)
    listed: list = []
    train_sieve.build_dataset([spec], None, per_set=40, page_list=listed)
    assert sorted(p.id for p, _, _ in listed) == sorted(p.id for p in pages)
    whole = np.mean([word_prf(p.gold, "\n".join(texts))[2] for p, _, texts in listed])
    assert rows["at -1"]["wcxb all"] == pytest.approx(whole, abs=1e-4)
    # the model drops boilerplate: above the keep-everything baseline
    assert rows["chosen"]["wcxb all"] > whole


@pytest.mark.shared_data("gold", "wcxb_dev")
def test_page_kind_trees_give_listing_like_pages_their_own_cutoff():
    import io
    import json

    spec = "wcxb:" + shared_data("gold", "wcxb_dev")
    args = sieve_inner_split.parser().parse_args(
        ["--gold", spec, "--cutoff-gold", spec, "--pages-per-set", "120", "--trees", "4", "--depth", "2",
         "--page-kind-types", "collection,listing,documentation,service", "--page-kind-trees", "60",
         "--page-kind-depth", "3", "--listing-cutoff", "0.05", "--cutoffs=0.5", "--min-hess", "0.2"])
    out = io.StringIO()
    sieve_inner_split.inner_split(args, pages_out=out)
    pages = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = {"collection", "listing", "documentation", "service"}
    listed = [p["listing"] for p in pages if p["type"] in kinds]
    others = [p["listing"] for p in pages if p["type"] not in kinds]
    assert listed and others
    # out of fold, the trees rate pages of the listed types as more listing-like
    assert sum(listed) / len(listed) > sum(others) / len(others) + 0.05
    assert all((p["cutoff"] == 0.05) == (p["listing"] > 0.5) for p in pages)
