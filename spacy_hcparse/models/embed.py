"""Embedding architectures: spaCy's ``MultiHashEmbed`` with word dropout, and with characters."""
from typing import Callable, List, Sequence, Tuple, Union

from spacy.ml.featureextractor import FeatureExtractor
from spacy.ml.models.tok2vec import MultiHashEmbed
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import HashEmbed, Maxout, Model, chain, concatenate, list2ragged, ragged2list, with_array
from thinc.types import Floats2d, Ragged

from ..layers.char_cnn import char_cnn
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


@registry.architectures("spacy_hcparse.CharMultiHashEmbed.v1")
def build_char_multi_hash_embed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    char_width: int = 32,
    char_rows: int = 2000,
    char_window: int = 1,
    max_chars: int = 20,
    word_dropout_attrs: Sequence[Union[str, int]] = ("NORM",),
    word_dropout_rate: float = 0.1,
) -> Model[List[Doc], List[Floats2d]]:
    """``spacy_hcparse.MultiHashEmbed.v1`` whose mixing ``Maxout`` also reads a character CNN's
    vector (``layers.char_cnn``: characters embedded in ``char_width`` from ``char_rows`` hashed
    rows, windows of ``2 * char_window + 1`` characters, max-pooled to ``width``), the word
    representation of parsers without pretrained vectors for words the tables know badly."""
    if len(rows) != len(attrs):
        raise ValueError(f"Mismatched lengths: {len(rows)} rows for {len(attrs)} attrs")
    unknown = [a for a in word_dropout_attrs if a not in attrs]
    if unknown:
        raise ValueError(f"word_dropout_attrs {unknown} are not among attrs {attrs}")
    tables = []
    for i, (attr, n_rows) in enumerate(zip(attrs, rows)):
        table = HashEmbed(width, n_rows, column=i, seed=8 + i, dropout=0.0)
        tables.append(chain(table, word_dropout(word_dropout_rate)) if attr in word_dropout_attrs else table)
    words = chain(FeatureExtractor(attrs), list2ragged(), with_array(concatenate(*tables)))
    chars = char_cnn(width, char_width, char_rows, char_window, max_chars)
    mix = with_array(Maxout(width, width * (len(attrs) + 1), nP=3, dropout=0.0, normalize=True))
    return chain(_hstack(words, chars), mix, ragged2list())


def _hstack(first: Model[List[Doc], Ragged], second: Model[List[Doc], Ragged]) -> Model[List[Doc], Ragged]:
    """thinc's ``concatenate`` for two ``Ragged`` outputs, that also stacks empty ones (thinc's
    reads ``Ragged.data``, which is (0, 0) for zero rows)."""
    return Model("hstack", _hstack_forward, init=_hstack_init, layers=[first, second])


def _hstack_init(model: Model, X=None, Y=None) -> None:
    for layer in model.layers:
        layer.initialize(X=X)


def _hstack_forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Ragged, Callable]:
    (Y1, bp1), (Y2, bp2) = (layer(docs, is_train) for layer in model.layers)
    split = Y1.dataXd.shape[1]

    def backprop(dY: Ragged) -> List[Doc]:
        bp1(Ragged(model.ops.as_contig(dY.dataXd[:, :split]), dY.lengths))
        bp2(Ragged(model.ops.as_contig(dY.dataXd[:, split:]), dY.lengths))
        return []

    return Ragged(model.ops.xp.hstack((Y1.dataXd, Y2.dataXd)), Y1.lengths), backprop
