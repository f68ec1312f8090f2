"""CoNLL 2018 evaluation: hand-made cases with expected counts, malformed input, and agreement
with reference implementations on perturbed treebanks.

References, each skipped when missing:

* udapi's ``eval.Conll18`` block after ``util.ResegmentGold`` (the ``test`` extra installs udapi).
  It reports Words..BLEX (not Tokens and Sentences). It is a reimplementation, not the official
  script: it aligns words inside each resegmented sentence with ``difflib`` on their forms, so when
  tokens change *and* a form recurs nearby (system ``inTehran in`` against gold ``in Tehran in``) it
  can pair a word with a gold word at other characters, where the official script aligns by
  character span; and ``ResegmentGold`` fails on multiword tokens in a system sentence that joins
  gold sentences. The perturbations compared here avoid those two cases.
* The official ``conll18_ud_eval.py`` (version 1.2, as shipped in the shared task's repository and
  in stanza 1.2.x as ``stanza/utils/conll18_ud_eval.py``): set ``CONLL18_UD_EVAL`` to its path.
  Compared on every perturbation and every hand-made case, all 13 metrics.
"""
import importlib.util
import io
import math
import os
import re
from pathlib import Path

import pytest

from spacy_hcparse.evaluation.conll18 import (
    METRICS,
    ConlluError,
    Score,
    TextMismatchError,
    align_words,
    evaluate,
    evaluate_conllu,
    evaluate_files,
    format_table,
    main,
    parse_treebank,
    universal_feats,
)

from .conll18_systems import perturbed

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets/sample/sample-ud-train.conllu"


def treebank_file(name: str):
    """A shared UD file (``shared/treebanks`` in or beside the checkout, or ``/work/shared``)."""
    for base in (ROOT / "shared/treebanks", ROOT.parent / "shared/treebanks", Path("/work/shared/treebanks")):
        hits = sorted(base.glob(f"*/{name}"))
        if hits:
            return hits[0]
    return None


def conllu(*sentences: str) -> str:
    """CoNLL-U text from sentences written as lines of space-separated columns
    ``ID FORM UPOS HEAD DEPREL [LEMMA] [FEATS] [MISC]`` (other columns ``_``)."""
    blocks = []
    for sentence in sentences:
        rows = []
        for line in sentence.strip().splitlines():
            parts = line.split()
            if "-" in parts[0]:
                rows.append("\t".join([parts[0], parts[1]] + ["_"] * 8))
                continue
            ident, form, upos, head, deprel = parts[:5]
            lemma = parts[5] if len(parts) > 5 else "_"
            feats = parts[6] if len(parts) > 6 else "_"
            misc = parts[7] if len(parts) > 7 else "_"
            rows.append("\t".join([ident, form, lemma, upos, "_", feats, head, deprel, "_", misc]))
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


def counts(score: Score):
    return score.correct, score.gold, score.system, score.aligned


# ----- hand-made cases: (gold, system, {metric: (correct, gold, system, aligned)}) ---------------
NEW_YORK = conllu("""
1 New PROPN 2 compound
2 York PROPN 3 nsubj
3 rocks VERB 0 root
""")
NEWYORK = conllu("""
1 NewYork PROPN 2 nsubj
2 rocks VERB 0 root
""")
DONT_GO_MWT = conllu("""
1-2 don't
1 do AUX 3 aux
2 n't PART 3 advmod
3 go VERB 0 root
""")
DONT_GO_PLAIN = conllu("""
1 do AUX 3 aux
2 n't PART 3 advmod
3 go VERB 0 root
""")
DEL_MWT = conllu("""
1 Vino VERB 0 root
2-3 del
2 de ADP 4 case
3 el DET 4 det
4 mar NOUN 1 obl
""")
DEL_PLAIN = conllu("""
1 Vino VERB 0 root
2 del ADP 3 case
3 mar NOUN 1 obl
""")
TWO_SENTENCES = conllu("""
1 Hi INTJ 0 root
2 . PUNCT 1 punct
""", """
1 Go VERB 0 root
2 now ADV 1 advmod
3 . PUNCT 1 punct
""")
ONE_SENTENCE = conllu("""
1 Hi INTJ 0 root
2 . PUNCT 1 punct
3 Go VERB 1 parataxis
4 now ADV 3 advmod
5 . PUNCT 3 punct
""")

CASES = {
    # a system token merges two gold tokens: only "rocks" matches
    "token_merge": (NEW_YORK, NEWYORK, {
        "Tokens": (1, 3, 2, None), "Words": (1, 3, 2, None), "UPOS": (1, 3, 2, 1),
        "UAS": (1, 3, 2, 1), "LAS": (1, 3, 2, 1), "CLAS": (1, 3, 2, 1), "Sentences": (1, 1, 1, None)}),
    "token_split": (NEWYORK, NEW_YORK, {
        "Tokens": (1, 2, 3, None), "Words": (1, 2, 3, None), "UAS": (1, 2, 3, 1), "CLAS": (1, 2, 3, 1)}),
    # gold multiword token, system plain tokens: the words align by their forms
    "multiword_gold": (DONT_GO_MWT, DONT_GO_PLAIN, {
        "Tokens": (1, 2, 3, None), "Words": (3, 3, 3, None), "UAS": (3, 3, 3, 3), "LAS": (3, 3, 3, 3),
        "CLAS": (2, 2, 2, 2), "MLAS": (2, 2, 2, 2)}),
    "multiword_system": (DONT_GO_PLAIN, DONT_GO_MWT, {
        "Tokens": (1, 3, 2, None), "Words": (3, 3, 3, None), "LAS": (3, 3, 3, 3)}),
    # "del" = "de" + "el": no system word has those forms; MLAS also checks the function words
    "multiword_not_spelled": (DEL_MWT, DEL_PLAIN, {
        "Tokens": (3, 3, 3, None), "Words": (2, 4, 3, None), "UPOS": (2, 4, 3, 2), "UAS": (2, 4, 3, 2),
        "LAS": (2, 4, 3, 2), "CLAS": (2, 2, 2, 2), "MLAS": (1, 2, 2, 2), "BLEX": (2, 2, 2, 2)}),
    # one system sentence for two gold ones: "Go" is no longer a root
    "sentence_merge": (TWO_SENTENCES, ONE_SENTENCE, {
        "Sentences": (0, 2, 1, None), "Tokens": (5, 5, 5, None), "Words": (5, 5, 5, None),
        "UAS": (4, 5, 5, 5), "LAS": (4, 5, 5, 5), "CLAS": (2, 3, 3, 3)}),
    "sentence_split": (ONE_SENTENCE, TWO_SENTENCES, {
        "Sentences": (0, 1, 2, None), "UAS": (4, 5, 5, 5), "CLAS": (2, 3, 3, 3)}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_made_case(name):
    gold, system, expected = CASES[name]
    scores = evaluate_conllu(gold, system)
    for metric, want in expected.items():
        assert counts(scores[metric]) == want, metric


def test_ratios_follow_the_counts():
    scores = evaluate_conllu(NEW_YORK, NEWYORK)
    tokens = scores["Tokens"]
    assert (tokens.precision, tokens.recall, tokens.f1, tokens.aligned_accuracy) == (0.5, 1 / 3, 0.4, None)
    upos = scores["UPOS"]
    assert (upos.precision, upos.recall, upos.f1, upos.aligned_accuracy) == (0.5, 1 / 3, 0.4, 1.0)
    assert "UPOS       |     50.00 |     33.33 |     40.00 |    100.00" in format_table(scores)


def test_identical_files_score_one_everywhere():
    text = SAMPLE.read_text(encoding="utf8")
    scores = evaluate_conllu(text, text)
    assert set(scores) == set(METRICS)
    assert all(s.f1 == 1.0 for s in scores.values())


def test_multiword_alignment_ignores_case():
    gold = conllu("1-2 Don't\n1 Do AUX 3 aux\n2 n't PART 3 advmod\n3 go VERB 0 root")
    system = conllu("1-2 Don't\n1 do AUX 3 aux\n2 N'T PART 3 advmod\n3 go VERB 0 root")
    assert counts(evaluate_conllu(gold, system)["Words"]) == (3, 3, 3, None)


def test_subtypes_are_dropped_but_labels_are_case_sensitive():
    gold = conllu("1 my PRON 2 nmod:poss\n2 dog NOUN 0 root")
    system = conllu("1 my PRON 2 nmod\n2 dog NOUN 0 ROOT")
    scores = evaluate_conllu(gold, system)
    assert counts(scores["UAS"]) == (2, 2, 2, 2)
    assert counts(scores["LAS"]) == (1, 2, 2, 2)  # spaCy's "ROOT" is not UD's "root"


def test_universal_features_and_unknown_gold_lemmas():
    assert universal_feats("Number=Sing|Foo=Bar|Case=Nom") == "Case=Nom|Number=Sing"
    gold = conllu("1 dogs NOUN 0 root _ Number=Plur|Foo=Bar")
    system = conllu("1 dogs NOUN 0 root dog Number=Plur")
    scores = evaluate_conllu(gold, system)
    assert counts(scores["UFeats"]) == (1, 1, 1, 1)
    assert counts(scores["Lemmas"]) == (1, 1, 1, 1)  # gold lemma "_": any system lemma is right
    wrong = evaluate_conllu(conllu("1 dogs NOUN 0 root dog"), conllu("1 dogs NOUN 0 root dogs"))
    assert counts(wrong["Lemmas"]) == (0, 1, 1, 1) and counts(wrong["BLEX"]) == (0, 1, 1, 1)


def test_spaces_inside_a_form_are_not_text():
    gold = "1\t10\u00a0000\t_\tNUM\t_\t_\t0\troot\t_\t_\n\n"
    system = conllu("1 10 NUM 0 root\n2 000 NUM 1 flat")
    scores = evaluate_conllu(gold, system)
    assert counts(scores["Tokens"]) == (0, 1, 2, None)


def test_empty_files_score_zero_and_an_empty_system_is_a_mismatch():
    scores = evaluate_conllu("", "")
    assert all((s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0) for s in scores.values())
    assert scores["UPOS"].aligned_accuracy == 0.0 and scores["Words"].aligned_accuracy is None
    with pytest.raises(TextMismatchError, match=r"<gold>:1 has 'Hi\.Gonow\.', <system> \(no tokens\)"):
        evaluate_conllu(TWO_SENTENCES, "")


def test_text_mismatch_names_both_lines():
    system = TWO_SENTENCES.replace("now", "new")
    with pytest.raises(TextMismatchError, match=r"character 6: <gold>:5 has 'ow\.', <system>:5 has 'ew\.'"):
        evaluate_conllu(TWO_SENTENCES, system)


ROW = "{}\tw\t_\t_\t_\t_\t{}\tdep\t_\t_"


@pytest.mark.parametrize(
    "lines, message",
    [
        ([ROW.format(1, 0), "2\tw\t_"], "x.conllu:2: expected 10 tab-separated columns, got 3"),
        ([ROW.format(1, 0), ROW.format(3, 1)], "x.conllu:2: word id '3' out of sequence"),
        ([ROW.format(1, 0), ROW.format(2, "x")], "x.conllu:2: HEAD 'x' is not an integer"),
        ([ROW.format(1, 0), ROW.format(2, 5)], "x.conllu:2: HEAD 5 out of range 0..2"),
        ([ROW.format(1, 0), ROW.format(2, -1)], "x.conllu:2: HEAD -1 out of range"),
        ([ROW.format(1, 0), "3-4\tab\t_\t_\t_\t_\t_\t_\t_\t_"], "x.conllu:2: multiword token '3-4' out of place"),
        (["1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_", ROW.format(1, 0)], "x.conllu:1: a multiword token reaches word 2"),
        ([ROW.format(1, 0), ROW.format("2.1", "_")], "x.conllu:2: empty node '2.1' out of place"),
        (["1\t\t_\t_\t_\t_\t0\troot\t_\t_"], "x.conllu:1: empty FORM"),
        (["1\t\u00a0\t_\t_\t_\t_\t0\troot\t_\t_"], "x.conllu:1: FORM '\\xa0' has only spaces"),
        ([ROW.format(1, 0), ROW.format(2, 0)], "x.conllu:1: sentence has 2 words attached to the root"),
        ([ROW.format(1, 0), ROW.format(2, 3), ROW.format(3, 2)], "x.conllu:2: word 2 is on a cycle"),
    ],
)
def test_malformed_input_names_file_and_line(lines, message):
    with pytest.raises(ConlluError, match=re.escape(message)):
        parse_treebank(lines, "x.conllu")


def test_heads_need_not_be_trees_when_asked():
    lines = [ROW.format(1, 0), ROW.format(2, 0), ROW.format(3, 2), "", ROW.format(1, 2), ROW.format(2, 1)]
    bank = parse_treebank(lines, "x.conllu", require_trees=False)
    assert [w.head for w in bank.words] == [-1, -1, 1, 4, 3]


def test_reader_accepts_comments_blank_lines_and_empty_nodes():
    text = "# newdoc\n# text = a b\n1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n1.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n" \
           "2\tb\t_\t_\t_\t_\t1\tdep\t_\tSpaceAfter=No\n\n\n\n# trailing comment\n"
    bank = parse_treebank(text.split("\n"), "x")
    assert bank.chars == "ab" and bank.sentences == [(0, 2)] and bank.space_after == [True, False]
    assert bank.sentence_comments == [["# newdoc", "# text = a b"]]


def test_files_and_command_line(tmp_path, capsys):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(DEL_MWT, encoding="utf8")
    system.write_text(DEL_PLAIN, encoding="utf8")
    assert counts(evaluate_files(gold, system)["Words"]) == (2, 4, 3, None)
    main([str(gold), str(system)])
    assert "Words      |     66.67 |     50.00 |     57.14 |" in capsys.readouterr().out
    system.write_text("1\tx\n", encoding="utf8")
    with pytest.raises(SystemExit, match=rf"{system}:1: expected 10"):
        main([str(gold), str(system)])


def test_alignment_skips_a_plain_word_that_starts_before_a_multiword_token():
    # gold: "ab" then multiword "cd" = c + d; system: "abc" (crosses into the token) then "d"
    gold = parse_treebank(conllu("1 ab X 0 root\n2-3 cd\n2 c X 1 dep\n3 d X 1 dep").split("\n"))
    system = parse_treebank(conllu("1 abc X 0 root\n2 d X 1 dep").split("\n"))
    assert align_words(gold.words, system.words) == [-2, 2]


# ----- agreement with the references -------------------------------------------------------------
# perturbation lists (applied in order, seed = position) on which udapi's block agrees exactly
UDAPI_AGREES = [
    [], ["merge_tokens"], ["split_tokens"], ["multiword_changes"], ["change_annotation"],
    ["split_sentences"], ["merge_sentences"], ["spacy_tokens"],
    ["spacy_tokens", "change_annotation", "split_sentences", "merge_sentences"],
    ["split_sentences", "multiword_changes", "change_annotation"],
]
EVERYTHING = ["merge_tokens", "split_tokens", "multiword_changes", "change_annotation",
              "split_sentences", "merge_sentences"]
OFFICIAL_SYSTEMS = UDAPI_AGREES + [EVERYTHING, ["spacy_tokens"] + EVERYTHING]
UDAPI_METRICS = ("Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS", "MLAS", "BLEX")


def official_module():
    path = os.environ.get("CONLL18_UD_EVAL")
    if not path:
        pytest.skip("set CONLL18_UD_EVAL to the official conll18_ud_eval.py to compare with it")
    spec = importlib.util.spec_from_file_location("conll18_ud_eval_official", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def official_scores(module, gold: str, system: str):
    return module.evaluate(module.load_conllu(io.StringIO(gold)), module.load_conllu(io.StringIO(system)))


def udapi_scores(gold_path: Path, system_path: Path):
    """{metric: (precision, recall, f1, aligned accuracy)} from udapi's eval.Conll18."""
    pytest.importorskip("udapi")
    from udapi.block.eval.conll18 import Conll18, prec_rec_f1
    from udapi.block.read.conllu import Conllu
    from udapi.block.util.resegmentgold import ResegmentGold
    from udapi.core.document import Document

    document = Document()
    Conllu(files=str(gold_path), zone="gold").apply_on_document(document)
    Conllu(files=str(system_path), zone="pred", ignore_sent_id=True).apply_on_document(document)
    ResegmentGold().apply_on_document(document)
    block = Conll18(print_results=False)
    block.apply_on_document(document)
    total = block.total_count
    out = {}
    for metric in UDAPI_METRICS:
        suffix = "_cont" if metric in ("CLAS", "MLAS", "BLEX") else ""
        aligned = total["alig_cont"] if suffix else total["Words"]
        out[metric] = prec_rec_f1(total[metric], total["pred" + suffix], total["gold" + suffix], aligned)
    return out


def assert_close(name, ours: Score, theirs, aligned=True):
    values = (ours.precision, ours.recall, ours.f1) + ((ours.aligned_accuracy,) if aligned else ())
    assert len(values) == len(theirs)
    for a, b in zip(values, theirs):
        assert (a is None and b is None) or math.isclose(a, b, rel_tol=0, abs_tol=1e-9), (name, values, theirs)


def compare_with_official(module, gold: str, system: str, label: str):
    ours = evaluate_conllu(gold, system)
    theirs = official_scores(module, gold, system)
    for metric in METRICS:
        t = theirs[metric]
        assert_close(f"{label} {metric}", ours[metric], (t.precision, t.recall, t.f1, t.aligned_accuracy))


def compare_with_udapi(tmp_path: Path, gold_path: Path, system: str, label: str):
    system_path = tmp_path / "system.conllu"
    system_path.write_text(system, encoding="utf8")
    ours = evaluate_files(gold_path, system_path)
    for metric, theirs in udapi_scores(gold_path, system_path).items():
        words = metric == "Words"  # no aligned accuracy for Words
        assert_close(f"{label} {metric}", ours[metric], theirs[:3] if words else theirs, aligned=not words)


def test_hand_made_cases_match_the_official_script():
    module = official_module()
    for name, (gold, system, _) in CASES.items():
        compare_with_official(module, gold, system, name)


@pytest.mark.parametrize("seed, names", list(enumerate(UDAPI_AGREES)))
def test_sample_perturbations_match_udapi(tmp_path, seed, names):
    pytest.importorskip("udapi")
    gold = SAMPLE.read_text(encoding="utf8")
    compare_with_udapi(tmp_path, SAMPLE, perturbed(gold, names, seed), "+".join(names))


@pytest.mark.parametrize("seed, names", list(enumerate(OFFICIAL_SYSTEMS)))
def test_sample_perturbations_match_the_official_script(seed, names):
    module = official_module()
    gold = SAMPLE.read_text(encoding="utf8")
    compare_with_official(module, gold, perturbed(gold, names, seed), "+".join(names))


@pytest.mark.slow
@pytest.mark.parametrize("seed, names", list(enumerate(UDAPI_AGREES)))
def test_ewt_dev_perturbations_match_udapi(tmp_path, seed, names):
    pytest.importorskip("udapi")
    gold_path = treebank_file("en_ewt-ud-dev.conllu")
    if gold_path is None:
        pytest.skip("no EWT dev file")
    compare_with_udapi(tmp_path, gold_path, perturbed(gold_path.read_text(encoding="utf8"), names, seed),
                       "+".join(names))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["en_ewt-ud-dev.conllu", "pt_bosque-ud-dev.conllu", "tr_imst-ud-dev.conllu"])
def test_treebank_perturbations_match_the_official_script(name):
    module = official_module()
    gold_path = treebank_file(name)
    if gold_path is None:
        pytest.skip(f"no {name}")
    gold = gold_path.read_text(encoding="utf8")
    for seed, names in enumerate(OFFICIAL_SYSTEMS):
        compare_with_official(module, gold, perturbed(gold, names, seed), f"{name} {'+'.join(names)}")


def test_first_sentences_is_a_prefix_that_evaluates():
    bank = parse_treebank(TWO_SENTENCES.split("\n"), "gold")
    first = bank.first_sentences(1)
    assert first.chars == "Hi." and len(first.words) == 2 and first.sentences == [(0, 3)]
    system = parse_treebank(conllu("1 Hi INTJ 0 root\n2 . PUNCT 1 punct").split("\n"), "system")
    assert evaluate(first, system)["LAS"].f1 == 1.0
    assert bank.first_sentences(5) is bank
