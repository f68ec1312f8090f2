"""CoNLL-U reading: well-formed input, documented skips, and errors naming file and line."""
import pytest

from spacy_hcparse.conllu import ConlluError, format_conllu, parse_conllu

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


def test_reads_words_and_skips_multiword_tokens_and_empty_nodes():
    (sent,) = parse_conllu(GOOD.splitlines(True), "good.conllu")
    assert [w.form for w in sent.words] == ["I", "ca", "n't"]
    assert list(sent.heads) == [-1, 3, 3, 0]
    assert sent.sent_id == "s1"


@pytest.mark.parametrize(
    "lines, message",
    [
        ([row(1, 0), "2\tw2\t_\t_"], "good.conllu:2: expected 10"),
        ([row(1, 0), row(2, "x")], "good.conllu:2: head 'x' is not an integer"),
        ([row(1, 0), row(3, 1)], "good.conllu:2: word id 3 out of sequence"),
        ([row(1, 0), row(2, 7)], "good.conllu:1: .*out of range"),
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


def test_format_round_trip():
    text = format_conllu([(["a", "b"], [2, 0], ["det", "root"])])
    (sent,) = parse_conllu(text.splitlines(True))
    assert [w.form for w in sent.words] == ["a", "b"] and list(sent.heads) == [-1, 2, 0]
