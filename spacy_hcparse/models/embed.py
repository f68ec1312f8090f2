"""Embedding architectures: spaCy's ``MultiHashEmbed`` with word dropout."""
from typing import List, Sequence, Union

from spacy.ml.models.tok2vec import MultiHashEmbed
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
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
    """``spacy.MultiHashEmbed.v2`` without static vectors, where in training each token's row of
    the tables of ``word_dropout_attrs`` is zeroed with probability ``word_dropout_rate``
    (``layers.word_dropout`` after those tables' ``HashEmbed``; the model is spaCy's otherwise)."""
    unknown = [a for a in word_dropout_attrs if a not in attrs]
    if unknown:
        raise ValueError(f"word_dropout_attrs {unknown} are not among attrs {attrs}")
    model = MultiHashEmbed(width, attrs, rows, include_static_vectors=False)
    columns = {attrs.index(a) for a in word_dropout_attrs}
    # thinc's HashEmbed(column=...) is chain(ints_getitem, hashembed): drop after that whole table
    tables = [node for node in model.walk()
              if any(layer.name == "hashembed" and layer.attrs["column"] in columns for layer in node.layers)]
    for table in tables:
        model.replace_node(table, chain(table, word_dropout(word_dropout_rate)))
    return model
