"""A character CNN: each token's vector from a convolution over its characters, max-pooled.

Token ``t`` with text ``w`` is read as the characters ``\\x02 w \\x03`` (begin and end marks, so
the filters see where prefixes and suffixes are); a word longer than ``max_chars`` keeps its first
and last ``max_chars // 2`` characters. Each character's code point is hashed into an embedding
table (thinc's ``HashEmbed``), each character's window of ``2 * window + 1`` embeddings (within its
token) goes through a ``Maxout``, and the token's vector is the maximum over its characters
(Ma & Hovy 2016; the character models of UDPipe 2 and Stanza are LSTMs instead). Input: a batch
of Docs; output: a ``Ragged`` of shape (n_tokens, width) whose lengths are the docs' lengths, as
spaCy's ``FeatureExtractor`` + ``list2ragged`` give, so that it concatenates with them.
"""
from functools import lru_cache
from typing import Callable, List, Tuple

import numpy
from spacy.tokens import Doc
from thinc.api import HashEmbed, Maxout, Model
from thinc.types import Ragged

BEGIN, END = 2, 3  # code points of the marks around each word


def char_cnn(width: int, char_width: int, rows: int, window: int = 1, max_chars: int = 20,
             seed: int = 23) -> Model[List[Doc], Ragged]:
    """Token vectors of ``width`` from characters embedded in ``char_width`` (``rows`` rows)."""
    if window < 1 or max_chars < 2:
        raise ValueError(f"char_cnn needs window >= 1 and max_chars >= 2, got {window}, {max_chars}")
    embed = HashEmbed(char_width, rows, seed=seed, dropout=0.0)
    mix = Maxout(width, char_width * (2 * window + 1), nP=3, dropout=0.0, normalize=True)
    return Model("char_cnn", forward, init=init, layers=[embed, mix], dims={"nO": width},
                 attrs={"window": window, "max_chars": max_chars})


def init(model: Model, X=None, Y=None) -> None:
    """Every dimension is known from the arguments: allocate the sublayers' weights."""
    for layer in model.layers:
        layer.initialize()


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Ragged, Callable]:
    embed, mix = model.layers
    ops = model.ops
    window = model.attrs["window"]
    doc_lengths = ops.asarray1i([len(doc) for doc in docs])
    codes, char_lengths = _char_codes(docs, model.attrs["max_chars"])
    if not len(char_lengths):
        return Ragged(ops.alloc2f(0, model.get_dim("nO")), doc_lengths), lambda dY: []
    char_lengths = ops.asarray1i(char_lengths)
    vectors, bp_embed = embed(ops.asarray(codes, dtype="uint64"), is_train)
    windows = ops.seq2col(vectors, window, lengths=char_lengths)
    hidden, bp_mix = mix(windows, is_train)
    pooled, which = ops.reduce_max(hidden, char_lengths)

    def backprop(dY: Ragged) -> List[Doc]:
        d_hidden = ops.backprop_reduce_max(dY.dataXd, which, char_lengths)
        d_windows = bp_mix(d_hidden)
        bp_embed(ops.backprop_seq2col(d_windows, window, lengths=char_lengths))
        return []

    return Ragged(pooled, doc_lengths), backprop


def _char_codes(docs: List[Doc], max_chars: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """All tokens' character codes, flat, and the number of codes of each token."""
    per_token = [_word_codes(token.text, max_chars) for doc in docs for token in doc]
    if not per_token:
        return numpy.zeros((0,), dtype="uint64"), numpy.zeros((0,), dtype="int32")
    lengths = numpy.fromiter((len(c) for c in per_token), dtype="int32", count=len(per_token))
    return numpy.concatenate(per_token), lengths


@lru_cache(maxsize=200_000)
def _word_codes(text: str, max_chars: int) -> numpy.ndarray:
    if len(text) > max_chars:
        half = max_chars // 2
        text = text[:half] + text[-half:]
    return numpy.array([BEGIN, *map(ord, text), END], dtype="uint64")
