"""``python -m spacy_hcparse parse|evaluate`` on the sample treebank with a tiny trained model."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_hcparse.cli import build_parser, main
from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.evaluation import input_doc
from tests.ud_valid import ud_problems, ud_validator, validator_report

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"
TINY_MODEL = {
    "tok2vec": {"width": 32, "depth": 2, "embed_size": 500},
    "arc_scorer": {"width": 32},
    "label_scorer": {"width": 16},
    "sibling_scorer": {"rank": 8},
    "grand_scorer": {"rank": 8},
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """hc_parser trained for a few epochs on the sample train split (heads, labels, UPOS), saved."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": TINY_MODEL, "decoder": {"@misc": "spacy_hcparse.HillClimb.v1", "max_restarts": 5}})
    examples = [Example(input_doc(nlp, s), tagged_gold(nlp, s)) for s in read_conllu(SAMPLE / "sample-ud-train.conllu")]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(15):
        for start in range(0, len(examples), 8):
            nlp.update(examples[start : start + 8], sgd=optimizer, drop=0.0)
    path = tmp_path_factory.mktemp("cli") / "model"
    nlp.to_disk(path)
    return path


def tagged_gold(nlp, sentence) -> Doc:
    """The reference Doc of one gold sentence with its UPOS (``root`` becomes ``ROOT``)."""
    words = [w.form for w in sentence.words]
    heads = [w.head - 1 if w.head > 0 else i for i, w in enumerate(sentence.words)]
    deps = ["ROOT" if w.head == 0 else w.deprel for w in sentence.words]
    return Doc(nlp.vocab, words=words, heads=heads, deps=deps, pos=[w.upos for w in sentence.words])


def test_parse_conllu_then_evaluate(model_dir, tmp_path, capsys):
    gold = SAMPLE / "sample-ud-train.conllu"
    out = tmp_path / "parsed.conllu"
    assert main(["parse", str(model_dir), str(gold), "--output", str(out)]) == 0
    parsed, reference = list(read_conllu(out)), list(read_conllu(gold))  # every sentence a tree
    assert [[w.form for w in s.words] for s in parsed] == [[w.form for w in s.words] for s in reference]
    assert parsed[0].comments == reference[0].comments  # sent_id and text kept
    capsys.readouterr()
    scores_json = tmp_path / "scores.json"
    assert main(["evaluate", str(gold), str(out), "--json", str(scores_json), "--per-label"]) == 0
    printed = capsys.readouterr().out
    assert "ud_las" in printed and "non-projective arcs" in printed and "LAS        |" in printed
    scores = json.loads(scores_json.read_text())
    assert scores["conll18"]["LAS"]["f1"] == scores["ud_las"] or scores["conll18"]["Words"]["f1"] == 1.0
    assert scores["sentences"] == 40 and scores["words"] == sum(len(s.words) for s in reference)
    assert scores["ud_uas"] > 0.5  # the training sentences themselves, after a few epochs
    assert scores["conll18"]["UPOS"]["f1"] > 0.5  # the model's tags (its training sentences)


def test_round_trip_keeps_predicted_tags_and_multiword_tokens(model_dir, tmp_path, capsys):
    """The output holds the pipeline's UPOS/XPOS (the gold ones only with --keep-columns) and the
    input's multiword-token lines, so the CoNLL 2018 evaluation aligns every token."""
    gold = SAMPLE / "sample-ud-test.conllu"
    reference = list(read_conllu(gold))
    nlp = spacy.load(model_dir)
    expected = [[(t.pos_ or "_", t.tag_ or "_") for t in nlp(input_doc(nlp, s))] for s in reference]
    assert any(tags != [(w.upos, w.xpos) for w in s.words] for tags, s in zip(expected, reference))
    out = tmp_path / "parsed.conllu"
    assert main(["parse", str(model_dir), str(gold), "--output", str(out)]) == 0
    parsed = list(read_conllu(out))
    assert [[(w.upos, w.xpos) for w in s.words] for s in parsed] == expected
    assert [s.multiword for s in parsed] == [s.multiword for s in reference]
    assert "2-3\tcan't\t" in out.read_text()
    assert all(w.lemma == "_" and w.feats == "_" for s in parsed for w in s.words)  # nothing here sets them
    capsys.readouterr()
    assert main(["evaluate", str(gold), str(out)]) == 0
    table = capsys.readouterr().out
    assert "Tokens     |    100.00" in table and "UPOS       |    100.00" not in table
    kept = tmp_path / "kept.conllu"
    assert main(["parse", str(model_dir), str(gold), "--output", str(kept), "--keep-columns"]) == 0
    columns = [[(w.lemma, w.upos, w.xpos, w.feats) for w in s.words] for s in read_conllu(kept)]
    assert columns == [[(w.lemma, w.upos, w.xpos, w.feats) for w in s.words] for s in reference]


def test_progress_summary_and_empty_input_on_stderr(model_dir, tmp_path, capsys):
    text = tmp_path / "in.txt"
    text.write_text("The old farmer sold three goats.\n")
    assert main(["parse", str(model_dir), str(text)]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("# sent_id = in-1\n# text = The old farmer")
    assert printed.err.strip().splitlines()[-1].startswith(f"done: {text} -> <stdout>: 7 words in ")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    out = tmp_path / "empty.conllu"
    assert main(["parse", str(model_dir), str(empty), "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {empty} holds no words to parse" in err and out.read_text() == ""
    assert main(["parse", str(model_dir), str(tmp_path / "missing.txt")]) == 1
    assert capsys.readouterr().err.startswith("error: ")


def test_every_argument_has_help_and_the_help_is_plain_text():
    parser = build_parser()
    top = parser.format_help()
    assert "``" not in top and ":mod:" not in top
    (sub,) = [a for a in parser._actions if a.choices and "parse" in a.choices]
    for name, command in sub.choices.items():
        for action in command._actions:
            assert action.help, f"{name} {action.dest} has no help text"
        assert "``" not in command.format_help()


def test_parse_text_to_conllu_and_json(model_dir, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("The old farmer sold three goats.\n\nMy sister paints small boats in winter.\n")
    out = tmp_path / "out.conllu"
    assert main(["parse", str(model_dir), str(text), "--output", str(out)]) == 0
    sentences = list(read_conllu(out))  # raises unless every sentence is one tree
    assert sum(len(s.words) for s in sentences) == 15
    assert sentences[0].comments == ["# sent_id = in-1", "# text = The old farmer sold three goats."]
    out_json = tmp_path / "out.json"
    assert main(["parse", str(model_dir), str(text), "--format", "json", "--output", str(out_json)]) == 0
    records = json.loads(out_json.read_text())
    assert len(records) == 2
    words = [w for sent in records[1]["sentences"] for w in sent]
    assert [w["form"] for w in words][:3] == ["My", "sister", "paints"]
    assert sum(w["head"] == 0 for w in records[1]["sentences"][0]) == 1


def test_parse_output_keeps_ud_rules_from_text_and_conllu(model_dir, tmp_path):
    """Text (spaces doubled, no space before punctuation) and CoNLL-U input, with and without
    comments: the output keeps UD's level-2 rules (``tests.ud_valid``)."""
    text = tmp_path / "in.txt"
    text.write_text("The old  farmer sold three goats, then left.\n\nMy sister paints (small) boats.\n")
    out = tmp_path / "from_text.conllu"
    assert main(["parse", str(model_dir), str(text), "--output", str(out)]) == 0
    assert ud_problems(out) == []
    assert "SpaceAfter=No" in out.read_text() and "# text = The old farmer sold" in out.read_text()
    bare = tmp_path / "bare.conllu"
    bare.write_text("".join(line + "\n" for line in (SAMPLE / "sample-ud-test.conllu").read_text().splitlines()
                            if not line.startswith("#")))
    for source in (SAMPLE / "sample-ud-test.conllu", bare):
        out = tmp_path / f"from_{source.stem}.conllu"
        assert main(["parse", str(model_dir), str(source), "--output", str(out)]) == 0
        assert ud_problems(out) == [], source
    assert out.read_text().startswith("# sent_id = bare-1\n# text = ")


MULTIWORD_CONLLU = """# sent_id = mwt-1
# text = Vamos ao rio.
1\tVamos\t_\tVERB\t_\t_\t0\troot\t_\t_
2-3\tao\t_\t_\t_\t_\t_\t_\t_\t_
2\ta\t_\tADP\t_\t_\t4\tcase\t_\t_
3\to\t_\tDET\t_\t_\t4\tdet\t_\t_
4\trio\t_\tNOUN\t_\t_\t1\tobl\t_\tSpaceAfter=No
4.1\tvai\t_\tVERB\t_\t_\t_\t_\t0:root\t_
5\t.\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


@pytest.mark.slow
def test_parse_output_passes_uds_validator(model_dir, tmp_path):
    """UD's own validate.py (level 2) accepts ``parse`` output from text (doubled spaces, tabs,
    no-break spaces, emoji, a long unpunctuated line) and from CoNLL-U (with and without comments,
    a multiword token and an empty node)."""
    validator = ud_validator()
    if validator is None:
        pytest.skip("UD's validate.py is not available: set HCPARSE_UD_TOOLS to a checkout of "
                    "UniversalDependencies/tools (no network to clone it)")
    text = tmp_path / "in.txt"
    text.write_text("The old  farmer sold three goats, then left.\n\nMy sister\tpaints (small) boats.\n"
                    "Caf\u00e9\u00a0prices rose 10% \U0001F600 today!!!\n" + " ".join(["word"] * 300) + "\n",
                    encoding="utf8")
    bare = tmp_path / "bare.conllu"
    bare.write_text("".join(line + "\n" for line in (SAMPLE / "sample-ud-test.conllu").read_text().splitlines()
                            if not line.startswith("#")))
    multiword = tmp_path / "multiword.conllu"
    multiword.write_text(MULTIWORD_CONLLU, encoding="utf8")
    for source in (text, SAMPLE / "sample-ud-test.conllu", bare, multiword):
        out = tmp_path / f"from_{source.name}.conllu"
        assert main(["parse", str(model_dir), str(source), "--output", str(out)]) == 0
        report = validator_report(validator, out, lang="en")
        assert report.endswith("*** PASSED ***"), f"{source.name}:\n{report}"
    assert "2-3\tao\t" in out.read_text()  # the range line kept (empty nodes are dropped: no enhanced graph)


def test_ud_rules_are_checked():
    """The checker itself: a second root, a wrong text and a repeated sent_id are found."""
    bad = "# sent_id = a\n# text = Hi there\n1\tHi\t_\t_\t_\t_\t0\troot\t_\t_\n2\tthere\t_\t_\t_\t_\t0\tdep\t_\t_\n\n"
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bad.conllu"
        path.write_text(bad + bad.replace("Hi there", "Hi  there"))
        problems = "\n".join(ud_problems(path))
    assert "2 words on the root" in problems and "with label dep" in problems
    assert "used before" in problems and "but the forms give" in problems


def test_directory_mode_warns_about_each_empty_file_and_help_lists_exit_statuses(model_dir, tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text("Dogs bark.\n")
    (folder / "empty.txt").write_text("\n")
    capsys.readouterr()
    assert main(["parse", str(model_dir), str(folder), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {folder / 'empty.txt'} holds no words to parse" in err and "a.txt holds" not in err
    (sub,) = [a for a in build_parser()._actions if a.choices and "parse" in a.choices]
    help_text = sub.choices["parse"].format_help()
    assert "exit status:" in help_text and "3  done, but some files failed" in help_text


def test_malformed_conllu_names_file_and_line(model_dir, tmp_path, capsys):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\n\n")
    assert main(["parse", str(model_dir), str(bad)]) == 1
    assert f"{bad}:2: expected 10 tab-separated columns" in capsys.readouterr().err
    assert main(["evaluate", str(SAMPLE / "sample-ud-dev.conllu"), str(SAMPLE / "sample-ud-test.conllu")]) == 1
    assert "gold and system text differ" in capsys.readouterr().err


def test_module_entry_point(tmp_path):
    gold = SAMPLE / "sample-ud-dev.conllu"
    result = subprocess.run([sys.executable, "-m", "spacy_hcparse", "evaluate", str(gold), str(gold)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "ud_las     100.00" in result.stdout


def test_corrupt_or_incomplete_model_is_named(model_dir, tmp_path, capsys):
    import shutil

    text = tmp_path / "in.txt"
    text.write_text("The farmer sold goats.\n")
    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    (broken / "hc_parser" / "model").write_bytes(b"garbage")
    assert main(["parse", str(broken), str(text)]) == 1
    assert f"could not load the weights in {broken / 'hc_parser' / 'model'}" in capsys.readouterr().err
    (broken / "hc_parser" / "cfg").unlink()
    assert main(["parse", str(broken), str(text)]) == 1
    assert f"missing file {broken / 'hc_parser' / 'cfg'}" in capsys.readouterr().err


def test_bad_conllu_inputs_name_file_and_line(model_dir, tmp_path, capsys):
    gold = tmp_path / "gold.conllu"
    gold.write_text("# sent_id = c1\n1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\t_\t3\tdep\t_\t_\n"
                    "3\tc\t_\t_\t_\t_\t2\tdep\t_\t_\n\n")
    assert main(["evaluate", str(gold), str(gold)]) == 1
    assert f"{gold}:3: word 2 is on a cycle of heads" in capsys.readouterr().err
    latin = tmp_path / "latin.conllu"
    latin.write_bytes("1\tcaf\xe9\t_\t_\t_\t_\t0\troot\t_\t_\n\n".encode("latin-1"))
    assert main(["parse", str(model_dir), str(latin)]) == 1
    assert f"{latin}:1: not valid UTF-8" in capsys.readouterr().err
    far = tmp_path / "far.conllu"
    far.write_text("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\t_\t5\tdep\t_\t_\n\n")
    assert main(["parse", str(model_dir), str(far)]) == 1
    assert f"{far}:2: head 5 of word 2 is out of range" in capsys.readouterr().err


def test_parse_tokenized_conllu_without_heads(model_dir, tmp_path):
    """Input for a parser: words only, HEAD and DEPREL `_`; the output is a tree per sentence."""
    gold = list(read_conllu(SAMPLE / "sample-ud-train.conllu"))[:3]
    lines = []
    for sent in gold:
        lines += [f"{w.id}\t{w.form}\t_\t_\t_\t_\t_\t_\t_\t_" for w in sent.words] + [""]
    tokenized = tmp_path / "tokenized.conllu"
    tokenized.write_text("\n".join(lines) + "\n")
    out = tmp_path / "parsed.conllu"
    assert main(["parse", str(model_dir), str(tokenized), "--output", str(out)]) == 0
    parsed = list(read_conllu(out))  # read_conllu checks every sentence is one tree
    assert [[w.form for w in s.words] for s in parsed] == [[w.form for w in s.words] for s in gold]
