"""UD-style metrics against hand-computed values; non-projective arcs on hand-made trees."""
import pytest

from spacy_hcparse.conllu import ConlluError
from spacy_hcparse.evaluation import nonprojective_arcs, read_system, score_conllu, ud_label

GOLD = """# sent_id = a
1\tMy\t_\t_\t_\t_\t2\tnmod:poss\t_\t_
2\tdog\t_\t_\t_\t_\t3\tnsubj\t_\t_
3\tbarks\t_\t_\t_\t_\t0\troot\t_\t_
4\t.\t_\t_\t_\t_\t3\tpunct\t_\t_

# sent_id = b
1\tWho\t_\t_\t_\t_\t5\tnsubj\t_\t_
2\tdo\t_\t_\t_\t_\t4\taux\t_\t_
3\tyou\t_\t_\t_\t_\t4\tnsubj\t_\t_
4\tthink\t_\t_\t_\t_\t0\troot\t_\t_
5\twins\t_\t_\t_\t_\t4\tccomp\t_\t_
6\t?\t_\t_\t_\t_\t4\tpunct\t_\t_

"""

# Sentence a: "My" gets nmod (subtype dropped: right), "." wrong head (punct counts: one head
# error). Sentence b: "Who" wrong head (attached to think: projective), "you" right head wrong
# label, the rest right; the root written as spaCy's ROOT.
SYSTEM = """1\tMy\t_\t_\t_\t_\t2\tnmod\t_\t_
2\tdog\t_\t_\t_\t_\t3\tnsubj\t_\t_
3\tbarks\t_\t_\t_\t_\t0\tROOT\t_\t_
4\t.\t_\t_\t_\t_\t2\tpunct\t_\t_

1\tWho\t_\t_\t_\t_\t4\tnsubj\t_\t_
2\tdo\t_\t_\t_\t_\t4\taux\t_\t_
3\tyou\t_\t_\t_\t_\t4\tobj\t_\t_
4\tthink\t_\t_\t_\t_\t0\tROOT\t_\t_
5\twins\t_\t_\t_\t_\t4\tccomp\t_\t_
6\t?\t_\t_\t_\t_\t4\tpunct\t_\t_

"""


@pytest.fixture
def files(tmp_path):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(GOLD)
    system.write_text(SYSTEM)
    return gold, system


def test_hand_computed_scores(files):
    s = score_conllu(*files)
    assert s["words"] == 10 and s["sentences"] == 2
    # heads right: a 3 of 4 (punct counted), b 5 of 6 -> 8/10; labels: minus "you" -> 7/10
    assert s["ud_uas"] == pytest.approx(0.8)
    assert s["ud_las"] == pytest.approx(0.7)
    assert s["exact_uas"] == 0.0 and s["exact_las"] == 0.0
    labels = s["ud_las_per_label"]
    assert labels["nmod"] == {"gold": 1, "system": 1, "correct": 1, "p": 1.0, "r": 1.0, "f": 1.0}
    assert labels["root"]["correct"] == 2  # ROOT == root
    assert labels["nsubj"]["gold"] == 3 and labels["nsubj"]["system"] == 2 and labels["nsubj"]["correct"] == 1
    assert labels["obj"] == {"gold": 0, "system": 1, "correct": 0, "p": 0.0, "r": None, "f": 0.0}
    assert labels["punct"]["correct"] == 1


def test_non_projective_precision_recall(files):
    s = score_conllu(*files)["nonprojective"]
    # gold: wins -> Who crosses "do", "you" and "think" (not under wins): one non-projective arc;
    # the system attaches Who to think (projective) -> recall 0. The system's dog -> "." crosses
    # the root "barks": one system non-projective arc, with a wrong head -> precision 0.
    assert s == {"gold_arcs": 1, "system_arcs": 1, "precision": 0.0, "recall": 0.0}


def test_exact_match_when_identical(tmp_path):
    gold = tmp_path / "g.conllu"
    gold.write_text(GOLD)
    s = score_conllu(gold, gold)
    assert s["ud_uas"] == s["ud_las"] == s["exact_las"] == 1.0
    assert s["nonprojective"] == {"gold_arcs": 1, "system_arcs": 1, "precision": 1.0, "recall": 1.0}


@pytest.mark.parametrize(
    "heads,expected",
    [
        ([2, 0, 2], set()),                      # a b c, b the root
        ([4, 4, 4, 0], set()),                   # everything under the last word
        ([5, 4, 4, 0, 4, 4], {1}),               # Who ... wins: crosses do/you under think
        ([2, 4, 4, 0, 7, 7, 2, 4, 4], {7}),      # hearing -> issue crosses "is scheduled"
        ([3, 4, 0, 3], {2}),                     # 4 -> 2 crosses the root word 3; 3 -> 1 does not
        ([2, 3, 1], set()),                      # a cycle without crossings: no crash
    ],
)
def test_nonprojective_arcs(heads, expected):
    assert nonprojective_arcs(heads) == expected


def test_labels_drop_subtypes():
    assert ud_label("nmod:poss") == "nmod"
    assert ud_label("ROOT") == "root"
    assert ud_label("acl:relcl") == "acl"


def test_misaligned_files_name_both(tmp_path, files):
    gold, _ = files
    other = tmp_path / "other.conllu"
    other.write_text(SYSTEM.replace("\tbarks\t", "\tbark\t"))
    with pytest.raises(ValueError, match=r"other.conllu:1: words differ from .*gold.conllu:1"):
        score_conllu(gold, other)
    short = tmp_path / "short.conllu"
    short.write_text(SYSTEM.split("\n\n")[0] + "\n\n")
    with pytest.raises(ValueError, match="2 sentences but .* has 1"):
        score_conllu(gold, short)


def test_system_reader_accepts_non_trees_but_names_bad_lines(tmp_path):
    loose = tmp_path / "loose.conllu"
    loose.write_text("1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    assert [w.head for w in read_system(loose)[0].words] == [0, 0]
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\t_\tx\troot\t_\t_\n\n")
    with pytest.raises(ConlluError, match=r"bad.conllu:2: head 'x'"):
        read_system(bad)
