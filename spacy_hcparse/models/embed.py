"""Embedding architectures: spaCy's ``MultiHashEmbed`` with word dropout, and with the
pipeline's static vectors (``[initialize] vectors``) where asked."""
from typing import List, Sequence, Union

from spacy.ml.models.tok2vec import MultiHashEmbed
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain, with_array
from thinc.types import Floats2d, Ints2d

from ..layers.mlp import FixedDropout
from ..layers.rows import device_arrays
from ..layers.word_dropout import word_dropout


@registry.architectures("spacy_hcparse.MultiHashEmbed.v1")
def build_multi_hash_embed(
    width: int,
    attrs: List[Union[str, int]],
    rows: List[int],
    word_dropout_attrs: Sequence[Union[str, int]] = ("NORM",),
    word_dropout_rate: float = 0.1,
    include_static_vectors: bool = False,
    vectors_dropout_rate: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """``spacy.MultiHashEmbed.v2`` where in training each token's row of the tables of
    ``word_dropout_attrs`` is zeroed with probability ``word_dropout_rate`` (``layers.word_dropout``
    after those tables' ``HashEmbed``; the model is spaCy's otherwise).

    include_static_vectors: also read the vocab's vectors (``spacy.StaticVectors.v2``: each
        token's vector projected to ``width``, beside the hash tables, mixed by the same Maxout),
        as spaCy's ``MultiHashEmbed`` does; the pipeline then needs ``[initialize] vectors``.
    vectors_dropout_rate: in training, zero each token's projected vector with this probability
        (word dropout on the vectors), so the encoder does not lean on them alone.
    """
    unknown = [a for a in word_dropout_attrs if a not in attrs]
    if unknown:
        raise ValueError(f"word_dropout_attrs {unknown} are not among attrs {attrs}")
    if vectors_dropout_rate and not include_static_vectors:
        raise ValueError("vectors_dropout_rate needs include_static_vectors = true")
    model = MultiHashEmbed(width, attrs, rows, include_static_vectors=include_static_vectors)
    extractor = next(node for node in model.walk() if node.name == "extract_features")
    model.replace_node(extractor, feature_extractor(extractor.attrs["columns"]))
    columns = {attrs.index(a) for a in word_dropout_attrs}
    # thinc's HashEmbed(column=...) is chain(ints_getitem, hashembed): drop after that whole table
    tables = [node for node in model.walk()
              if any(layer.name == "hashembed" and layer.attrs["column"] in columns for layer in node.layers)]
    for table in tables:
        model.replace_node(table, chain(table, word_dropout(word_dropout_rate)))
    if vectors_dropout_rate:
        vectors = next(node for node in model.walk() if node.name == "static_vectors")
        model.replace_node(vectors, chain(vectors, with_array(word_dropout(vectors_dropout_rate))))
    return model


def feature_extractor(columns: List[Union[str, int]]) -> Model[List[Doc], List[Ints2d]]:
    """spaCy's ``FeatureExtractor`` (each doc's, or span's, ``to_array(columns)`` as a (n,
    len(columns)) uint64 array on ``model.ops``) with one host-to-device copy per batch instead of
    one per doc (``layers.rows.device_arrays``); the same node name and attrs, so pipelines saved
    with spaCy's load into it."""
    return Model("extract_features", _extract_forward, attrs={"columns": columns})


def _extract_forward(model: Model, docs: List[Doc], is_train: bool):
    columns = model.attrs["columns"]
    host = [doc.to_array(columns) if hasattr(doc, "to_array") else doc.doc.to_array(columns)[doc.start: doc.end]
            for doc in docs]
    host = [values.reshape((values.shape[0], 1)) if values.ndim == 1 else values for values in host]
    return device_arrays(model.ops, host, dtype="uint64"), lambda d_features: []


@registry.architectures("spacy_hcparse.ConcatTok2Vec.v1")
def build_concat_tok2vec(
    tok2vec: Model[List[Doc], List[Floats2d]],
    features: Model[List[Doc], List[Floats2d]],
    features_dropout: float = 0.0,
    features_word_dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """Each token's ``tok2vec`` row followed by its ``features`` row (e.g. a
    ``spacy-transformers.TransformerListener.v1``): output width = the sum of theirs. The way to
    give an encoder pretrained contextual features beside its own embeddings (UDPipe 2's recipe
    with a frozen transformer). Gradients go back to both.

    features_dropout: in training, dropout on the features' units at this rate (its own rate,
        not the training's ``dropout``); features_word_dropout: zero a token's whole features row
        with this probability, so the encoder keeps learning from its own embeddings. A frozen
        transformer's rows are the same every epoch: without either the model can memorize them.
    """
    if features_dropout or features_word_dropout:
        features = chain(features, with_array(chain(FixedDropout(features_dropout),
                                                    word_dropout(features_word_dropout))))
    return Model("concat_tok2vec", _concat_forward, init=_concat_init, layers=[tok2vec, features],
                 dims={"nO": None})


def _concat_init(model: Model, X=None, Y=None) -> None:
    for layer in model.layers:
        layer.initialize(X=X)
    model.set_dim("nO", sum(layer.get_dim("nO") for layer in model.layers))


def _concat_forward(model: Model, docs: List[Doc], is_train: bool):
    (first, bp_first), (second, bp_second) = (layer(docs, is_train) for layer in model.layers)
    split = model.layers[0].get_dim("nO")
    output = [model.ops.xp.hstack((a, model.ops.asarray2f(b))) for a, b in zip(first, second)]

    def backprop(d_output: List[Floats2d]) -> List[Doc]:
        bp_second([model.ops.xp.ascontiguousarray(d[:, split:]) for d in d_output])
        return bp_first([model.ops.xp.ascontiguousarray(d[:, :split]) for d in d_output])

    return output, backprop
