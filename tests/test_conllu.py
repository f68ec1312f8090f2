"""CoNLL-U reading: well-formed input, documented skips, and errors naming file and line."""
import pytest

from pathlib import Path

from spacy_hcparse.conllu import ConlluError, parse_conllu, parsed_conllu, read_conllu

GOOD = """# sent_id = s1
# text = I can't go
1\tI\tI\tPRON\t_\t_\t3\tnsubj\t_\t_
2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_
2\tca\tcan\tAUX\t_\t_\t3\taux\t_\t_
3\tn't\tnot\tPART\t_\t_\t0\troot\t_\t_
3.1\tgo\tgo\tVERB\t_\t_\t_\t_\t_\t_

"""


def row(i, head, label="dep"):
    return f"{i}\tw{i}\t_\t_\t_\t_\t{head}\t{label}\t_\t_"


def test_reads_words_keeps_multiword_tokens_and_drops_empty_nodes():
    (sent,) = parse_conllu(GOOD.splitlines(True), "good.conllu")
    assert [w.form for w in sent.words] == ["I", "ca", "n't"]
    assert list(sent.heads) == [-1, 3, 3, 0]
    assert sent.sent_id == "s1"
    assert sent.multiword == {2: "2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_"}


def test_parsed_conllu_writes_the_pipelines_tags_and_the_multiword_tokens():
    import spacy
    from spacy.tokens import Doc

    (sent,) = parse_conllu(GOOD.splitlines(True), "good.conllu")
    doc = Doc(spacy.blank("en").vocab, words=["I", "ca", "n't"], heads=[2, 2, 2], deps=["nsubj", "aux", "ROOT"],
              pos=["PRON", "VERB", "PART"], tags=["PRP", "MD", "RB"])
    text = parsed_conllu(doc, sent)
    lines = text.splitlines()
    assert lines[:3] == ["# sent_id = s1", "# text = I can't go", "1\tI\t_\tPRON\tPRP\t_\t3\tnsubj\t_\t_"]
    assert lines[3].startswith("2-3\tcan't\t") and lines[4].startswith("2\tca\t_\tVERB\tMD\t")
    assert lines[5] == "3\tn't\t_\tPART\tRB\t_\t0\troot\t_\t_" and text.endswith("\n\n")
    (again,) = parse_conllu(text.splitlines(True), "out.conllu")
    assert again.multiword == sent.multiword and [w.head for w in again.words] == [3, 3, 0]
    (kept,) = parse_conllu(parsed_conllu(doc, sent, keep_columns=True).splitlines(True))
    assert [(w.lemma, w.upos) for w in kept.words] == [("I", "PRON"), ("can", "AUX"), ("not", "PART")]
    plain = parsed_conllu(doc, sent_id="x-1")  # no source: sent_id and text added, SpaceAfter=No from the text
    assert plain.splitlines()[:3] == ["# sent_id = x-1", "# text = I ca n't", "1\tI\t_\tPRON\tPRP\t_\t3\tnsubj\t_\t_"]
    with pytest.raises(ValueError, match="source of 2 words"):
        parsed_conllu(doc, parse_conllu([row(1, 0) + "\n", row(2, 1) + "\n"]).__next__())


@pytest.mark.parametrize(
    "lines, message",
    [
        ([row(1, 0), "2\tw2\t_\t_"], "good.conllu:2: expected 10"),
        ([row(1, 0), row(2, "x")], "good.conllu:2: head 'x' is not an integer"),
        ([row(1, 0), row(3, 1)], "good.conllu:2: word id 3 out of sequence"),
        ([row(1, 0), row(2, 7)], "good.conllu:2: head 7 of word 2 is out of range 0..2"),
        ([row(1, 2), row(2, 1)], "good.conllu:1: .*not a tree"),
        ([row(1, 0), row(2, 0)], "good.conllu:1: .*exactly one word attached to the root"),
    ],
)
def test_errors_name_file_and_line(lines, message):
    with pytest.raises(ConlluError, match=message):
        list(parse_conllu([line + "\n" for line in lines] + ["\n"], "good.conllu"))


def test_skip_invalid_reports_the_sentence():
    lines = [row(1, 2) + "\n", row(2, 1) + "\n", "\n", row(1, 0) + "\n", "\n"]
    skipped = []
    sents = list(parse_conllu(lines, "x.conllu", skip_invalid=True, skipped=skipped))
    assert len(sents) == 1 and len(skipped) == 1 and "x.conllu:1" in skipped[0]


def test_system_output_need_not_be_a_tree():
    lines = [row(1, 2) + "\n", row(2, 1) + "\n", "\n"]
    (sent,) = parse_conllu(lines, "sys.conllu", check_trees=False)
    assert list(sent.heads) == [-1, 2, 1]


@pytest.mark.parametrize(
    "lines, message",
    [
        ([row(1, 0), row(2, -1)], "bad.conllu:2: negative head -1"),
        ([row(1, 0), "2\t\t_\t_\t_\t_\t1\tdep\t_\t_"], "bad.conllu:2: empty FORM"),
        (["x\tw\t_\t_\t_\t_\t0\troot\t_\t_"], "bad.conllu:1: word id 'x' is not an integer"),
        (["1 w _ _ _ _ 0 root _ _"], "bad.conllu:1: expected 10 tab-separated columns, got 1"),
        ([row(1, 0) + "\textra"], "bad.conllu:1: expected 10 tab-separated columns, got 11"),
        (["1-x\tab\t_\t_\t_\t_\t_\t_\t_\t_", row(1, 0)], "bad.conllu:1: malformed word id '1-x'"),
        (["2-3\tab\t_\t_\t_\t_\t_\t_\t_\t_", row(1, 0)], "bad.conllu:1: multiword token '2-3' must span"),
        (["1-1\tab\t_\t_\t_\t_\t_\t_\t_\t_", row(1, 0)], "bad.conllu:1: multiword token '1-1' must span"),
        ([row(1, 0), "2-4\tab\t_\t_\t_\t_\t_\t_\t_\t_", row(2, 1)], "bad.conllu:2: multiword token reaches word 4"),
        (["3.1\tgo\t_\t_\t_\t_\t_\t_\t_\t_", row(1, 0)], "bad.conllu:1: empty node '3.1' out of place"),
        (["# sent_id = only-comments"], "bad.conllu:2: sentence starting at line 1 has no words"),
        ([row(1, 0), row(2, 0), row(3, 1)], "bad.conllu:1: sentence  ?is not a tree: expected exactly one"),
    ],
)
def test_more_malformed_inputs(lines, message):
    with pytest.raises(ConlluError, match=message):
        list(parse_conllu([line + "\n" for line in lines] + ["\n"], "bad.conllu"))


def test_out_of_range_head_is_an_error_even_for_system_output():
    with pytest.raises(ConlluError, match="sys.conllu:2: head 9"):
        list(parse_conllu([row(1, 0) + "\n", row(2, 9) + "\n", "\n"], "sys.conllu", check_trees=False))


def test_skipped_sentences_name_their_sent_id():
    lines = ["# sent_id = cyc-1\n", row(1, 0) + "\n", row(2, 3) + "\n", row(3, 2) + "\n", "\n",
             "# sent_id = two-roots\n", row(1, 0) + "\n", row(2, 0) + "\n", "\n",
             row(1, 0) + "\n", "\n"]
    skipped = []
    sents = list(parse_conllu(lines, "x.conllu", skip_invalid=True, skipped=skipped))
    assert len(sents) == 1
    assert "x.conllu:1: sentence cyc-1 is not a tree: cycle" in skipped[0]
    assert "x.conllu:6: sentence two-roots is not a tree: expected exactly one word attached to the root, got 2" in skipped[1]


def test_read_conllu_names_the_line_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.conllu"
    path.write_bytes((row(1, 0) + "\n\n" + "1\tcaf\xe9\t_\t_\t_\t_\t0\troot\t_\t_\n\n").encode("latin-1"))
    with pytest.raises(ConlluError, match=rf"{path}:3: not valid UTF-8"):
        list(read_conllu(path))


def test_read_conllu_accepts_byte_order_mark_and_crlf(tmp_path):
    path = tmp_path / "bom.conllu"
    path.write_bytes(("\ufeff# sent_id = a\r\n" + row(1, 0) + "\r\n\r\n").encode("utf8"))
    (sent,) = read_conllu(path)
    assert sent.sent_id == "a" and [w.form for w in sent.words] == ["w1"]


def test_every_shared_treebank_reads_or_fails_with_a_line(tmp_path):
    """The real UD files: every sentence reads (a skip is reported, never silent)."""
    import glob

    files = sorted(glob.glob("/work/shared/treebanks/*/*.conllu")) or sorted(
        glob.glob(str(Path(__file__).resolve().parents[1] / "assets/sample/*.conllu")))
    for path in files[:1]:  # one file in the default suite; all of them with --slow below
        skipped = []
        n = sum(1 for _ in read_conllu(path, skip_invalid=True, skipped=skipped))
        assert n > 0 and all(path in m for m in skipped)


@pytest.mark.slow
def test_all_shared_treebanks_read():
    import glob

    for path in sorted(glob.glob("/work/shared/treebanks/*/*.conllu")):
        skipped = []
        n = sum(1 for _ in read_conllu(path, skip_invalid=True, skipped=skipped))
        assert n > 0, path
