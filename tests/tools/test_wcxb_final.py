"""tools.gold.wcxb_final: the final part of WCXB's held-back pages is fixed by the page ids."""
from tools.gold.wcxb_final import is_final


def test_final_part_is_a_fixed_third_of_the_ids():
    ids = [f"wcxb/{i:04d}" for i in range(3000)]
    final = [i for i in ids if is_final(i)]
    assert final == [i for i in ids if is_final(i)]          # a pure function of the id
    assert 0.3 < len(final) / len(ids) < 0.37
    assert is_final("wcxb/0001") == is_final("wcxb/0001") and not all(map(is_final, ids[:10]))
