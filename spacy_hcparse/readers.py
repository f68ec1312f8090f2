"""Training corpus readers.

``spacy_hcparse.GoldTokenDocs.v1`` reads a ``.spacy`` file as spaCy's ``Corpus`` does with
``gold_preproc = false`` (whole docs, e.g. the 10 sentences of ``spacy convert -n 10``), but
gives the predicted doc the reference's own words and spaces instead of the tokenizer's: the
parser learns from every gold word (no token fails to align) and, since a doc holds several
sentences without boundaries, learns where sentences begin. (``gold_preproc = true`` gives gold
words too, but one doc per sentence: nothing to learn boundaries from.)
"""
from pathlib import Path
from typing import Callable, Iterator, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.util import registry


@registry.readers("spacy_hcparse.GoldTokenDocs.v1")
def gold_token_docs(path: Optional[Union[str, Path]], max_length: int = 0, limit: int = 0,
                    shuffle: bool = False) -> Callable[[Language], Iterator[Example]]:
    """Whole docs of ``path`` with the reference's words as the predicted tokens (see the module
    docstring); ``max_length``, ``limit`` and ``shuffle`` as in ``spacy.Corpus.v1``."""
    corpus = Corpus(path, max_length=max_length, gold_preproc=False, limit=limit, shuffle=shuffle)

    def read(nlp: Language) -> Iterator[Example]:
        for example in corpus(nlp):
            reference = example.reference
            words = [token.text for token in reference]
            spaces = [bool(token.whitespace_) for token in reference]
            yield Example(Doc(nlp.vocab, words=words, spaces=spaces), reference)

    return read
