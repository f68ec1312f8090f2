"""valency.label_classes: labels no training head has twice, and one class of subjects."""
from spacy_hcparse.graph.valency import label_classes


def tree(*children):
    """One tree: word 0 is the root (heads itself), every other word a child of it."""
    return [0] * (len(children) + 1), ["ROOT", *children]


def test_single_labels_and_one_subject_class():
    trees = [tree("nsubj", "obj", "advmod", "advmod")] * 3 + [tree("nsubj:pass", "aux:pass", "obj")] * 3
    assert label_classes(trees, min_heads=3) == [["nsubj", "nsubj:pass"], ["aux:pass"], ["obj"]]


def test_repeated_and_rare_labels_are_free():
    trees = [tree("obj", "amod", "amod")] * 5 + [tree("iobj")]
    assert label_classes(trees, min_heads=3) == [["obj"]]


def test_subjects_that_share_a_head_stay_apart():
    # nsubj:outer and nsubj under one head: both single, but not one class
    trees = [tree("nsubj:outer", "nsubj")] * 4 + [tree("nsubj")] * 4
    assert label_classes(trees, min_heads=3) == [["nsubj"], ["nsubj:outer"]]


def test_unknown_labels_and_roots_are_skipped():
    # a word heading itself is a root; an empty label is missing gold
    heads, labels = [0, 0, 0, 0], ["ROOT", "obj", "", ""]
    assert label_classes([(heads, labels)] * 4, min_heads=3) == [["obj"]]
    assert label_classes([], min_heads=1) == []
