"""Embedding architectures: spaCy's ``MultiHashEmbed`` with word dropout."""
from typing import List, Sequence, Union

from spacy.ml.featureextractor import FeatureExtractor
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import HashEmbed, Maxout, Model, chain, concatenate, list2ragged, ragged2list, with_array
from thinc.types import Floats2d

from ..layers.word_dropout import word_dropout


@registry.architectures("spacy_hcparse.MultiHashEmbed.v1")
def build_multi_hash_embed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    word_dropout_attrs: Sequence[Union[str, int]] = ("NORM",),
    word_dropout_rate: float = 0.1,
) -> Model[List[Doc], List[Floats2d]]:
    """``spacy.MultiHashEmbed.v2`` without static vectors (the same tables, seeds and Maxout,
    so its weights are laid out alike), where in training each token's row of the tables of
    ``word_dropout_attrs`` is zeroed with probability ``word_dropout_rate`` (``layers.word_dropout``)."""
    if len(rows) != len(attrs):
        raise ValueError(f"Mismatched lengths: {len(rows)} rows for {len(attrs)} attrs")
    unknown = [a for a in word_dropout_attrs if a not in attrs]
    if unknown:
        raise ValueError(f"word_dropout_attrs {unknown} are not among attrs {attrs}")
    tables = []
    for index, (attr, n_rows) in enumerate(zip(attrs, rows)):
        table = HashEmbed(width, n_rows, column=index, seed=8 + index, dropout=0.0)
        tables.append(chain(table, word_dropout(word_dropout_rate)) if attr in word_dropout_attrs else table)
    max_out = with_array(Maxout(width, width * len(tables), nP=3, dropout=0.0, normalize=True))
    return chain(FeatureExtractor(attrs), list2ragged(), with_array(concatenate(*tables)), max_out, ragged2list())
