"""A treebank without XPOS: spaCy's CoNLL-U converter copies UPOS into ``tag_``; hc_parser then
learns no XPOS and writes none (CoNLL-U ``_``), rather than a second guess at UPOS that may
contradict it. A treebank with XPOS keeps its XPOS objective."""
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.training.converters import conllu_to_docs

from spacy_hcparse.conllu import parsed_conllu
from tests.components.test_graph_parser import TINY_MODEL

CONLLU = """# text = Dogs bark loudly.
1\tDogs\t_\tNOUN\t{0}\t_\t2\tnsubj\t_\t_
2\tbark\t_\tVERB\t{1}\t_\t0\troot\t_\t_
3\tloudly\t_\tADV\t{2}\t_\t2\tadvmod\t_\tSpaceAfter=No
4\t.\t_\tPUNCT\t{3}\t_\t2\tpunct\t_\t_

"""


def trained(xpos):
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_parser", config={"model": {**TINY_MODEL, "tags": {"attrs": ["POS", "TAG"]}}})
    references = [Doc(nlp.vocab).from_bytes(doc.to_bytes())
                  for doc in conllu_to_docs(CONLLU.format(*xpos) * 3, n_sents=1, no_print=True)]
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref) for ref in references]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    return nlp


def test_no_xpos_in_the_treebank_none_written():
    nlp = trained(["_"] * 4)
    parser = nlp.get_pipe("hc_parser")
    assert parser.cfg["tags"]["TAG"] == [] and parser.cfg["tags"]["POS"]
    doc = nlp(Doc(nlp.vocab, words=["Dogs", "bark", "loudly", "."]))
    assert [t.tag_ for t in doc] == [""] * 4 and all(t.pos_ for t in doc)
    rows = [line.split("\t") for line in parsed_conllu(doc).splitlines() if line[:1].isdigit()]
    assert [row[4] for row in rows] == ["_"] * 4 and all(row[3] != "_" for row in rows)


def test_xpos_in_the_treebank_is_learnt():
    nlp = trained(["NNS", "VBP", "RB", "."])
    assert nlp.get_pipe("hc_parser").cfg["tags"]["TAG"] == [".", "NNS", "RB", "VBP"]
