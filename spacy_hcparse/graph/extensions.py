"""Custom attributes ``hc_parser`` writes on Docs, Spans (its sentences) and Tokens.

- ``doc._.hc_parse_score``: the sum of its sentences' tree scores;
- ``span._.hc_score``, ``span._.hc_certified`` (the tree is proven optimal),
  ``span._.hc_upper_bound`` (None when the decoder gives none) and ``span._.hc_gap``
  (``upper_bound - score``, 0 when certified): what the decoder knows about the sentence's tree;
  ``span._.hc_parse_prob``: the tree's probability under the model the decoder maximizes (arcs,
  and siblings for a projective decoder that reads them; calibrated: ``spacy_hcparse.graph.calibration``),
  at most the lowest of its words' ``hc_head_prob``;
- ``token._.hc_head_margin``: first-order score gap between the chosen head and the best other;
  ``token._.hc_head_prob``: the calibrated probability that the chosen head is right
  (``P(head -> token)``); ``token._.hc_dep_prob``: the probability of the written label given
  the written head (a softmax over that arc's label scores; see ``docs/confidence.md``).

All are plain value extensions, so ``doc.to_json(underscore=[...])`` and ``DocBin`` carry them.
Token values are written straight into ``doc.user_data`` under the keys spaCy's ``Underscore``
reads (a ``token._`` assignment per token cost several microseconds, a tenth of a word's parse).

And on request, ``GraphParser.kbest(span, k)`` (``kbest_parses``): the k best trees of a sentence
``hc_parser`` parsed, each ``(heads, labels, score)``: ``heads`` Doc token indices (the root
heading itself, as in spaCy), ``labels`` label strings, scores non-increasing. Nothing is stored
for it: the call scores the doc again with the component, so it works on Docs from
``nlp.pipe(n_process=...)`` and from ``to_disk``/``DocBin``, and costs one forward pass of the doc.
``span._.hc_kbest(k)`` is the same call for a Doc parsed in this process (``remember_parser``: a
weak map from each parsed Doc to its component, which no serialization keeps). The trees and scores
by decoder (``graph.decoding.Decoder.kbest``): ``Eisner.v1`` the k best projective trees by arc
and sibling score (k-best Eisner), ``MST.v1`` the k best spanning trees by arc score, ``MBR.v1``
the k best trees by expected correct heads; with these the first tree is the written parse (the
reparsing settings ``init_from_doc``/``doc_arc_bonus`` aside). The searches (hill climbing, dual decomposition,
certified) read grandparent factors no k-best algorithm here handles: their k best are the first-
order spanning trees, whose first need not be the written parse.
"""
import weakref
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
from spacy.attrs import IDX, LENGTH
from spacy.tokens import Doc, Span, Token

from ..decoders.batch import split_squares
from ..segment import sentence_spans
from .graph_batch import span_arcs
from .graph_model import tree_label_scores

DOC_ATTRS = ("hc_parse_score",)
SPAN_ATTRS = ("hc_score", "hc_certified", "hc_upper_bound", "hc_gap", "hc_parse_prob")
TOKEN_ATTRS = ("hc_head_margin", "hc_head_prob", "hc_dep_prob")


# The component that parsed each live Doc, for ``span._.hc_kbest`` (weak keys: an entry goes with
# its Doc, and nothing reaches serialization; ``doc.user_hooks`` would, and spaCy warns (W109) on
# every ``to_bytes`` of a Doc with hooks, which ``nlp.pipe(n_process=...)`` calls for each Doc).
_PARSED_BY: "weakref.WeakKeyDictionary[Doc, Any]" = weakref.WeakKeyDictionary()


def register_extensions() -> None:
    """Register the extensions above and the method ``span._.hc_kbest(k)`` (idempotent)."""
    for cls, names in ((Doc, DOC_ATTRS), (Span, SPAN_ATTRS), (Token, TOKEN_ATTRS)):
        for name in names:
            if not cls.has_extension(name):
                cls.set_extension(name, default=None)
    if not Span.has_extension("hc_kbest"):
        Span.set_extension("hc_kbest", method=span_kbest)


def remember_parser(doc: Doc, pipe) -> None:
    """Record that ``pipe`` (an ``hc_parser``) parsed ``doc``, for ``span._.hc_kbest``."""
    _PARSED_BY[doc] = pipe


def span_kbest(span: Span, k: int) -> List[Tuple[List[int], List[str], float]]:
    """``span._.hc_kbest(k)``: ``kbest_parses`` with the component that parsed ``span.doc`` in
    this process; a Doc it did not parse here (from ``DocBin``, ``to_bytes``, pickling or
    ``nlp.pipe(n_process=...)``) is refused with what to call instead."""
    pipe = _PARSED_BY.get(span.doc)
    if pipe is None:
        raise ValueError("span._.hc_kbest: this Doc was not parsed by an hc_parser in this process (Docs from "
                         "DocBin, to_bytes, pickling or nlp.pipe(n_process=...) keep no link to it); call "
                         "nlp.get_pipe('hc_parser').kbest(span, k) instead")
    return kbest_parses(pipe, span, k)


def kbest_parses(pipe, span: Span, k: int) -> List[Tuple[List[int], List[str], float]]:
    """``pipe.kbest(span, k)``: the k best trees of ``span`` under ``pipe``'s scores and decoder
    (``pipe``: an ``hc_parser``), labelled by its labeler: ``(heads, labels, score)`` with Doc
    token indices (the root heading itself); see the module docstring."""
    doc = span.doc
    spans = sentence_spans(doc, pipe.max_length)
    if (span.start, span.end) not in spans:
        raise ValueError(f"kbest: doc[{span.start}:{span.end}] is not a sentence hc_parser parsed as one tree "
                         f"(the doc's sentences of at most max_length={pipe.max_length} tokens)")
    i = spans.index((span.start, span.end))
    factors = pipe.decoder.factors
    scores = pipe.score_spans([doc], [spans], factors=factors)
    space = scores.spaces[i]
    arc = split_squares(*span_arcs(scores, [None] * len(spans), 0.0))[i]  # as predict's decoder reads it
    trees, values = pipe.decoder.kbest(arc, scores.cubes(i, factors)[0], k)
    rows = tree_label_scores(pipe.model, scores, list(trees), [i] * len(trees))
    labels, _ = pipe.label_trees(list(trees), rows, [space] * len(trees))
    names = pipe.labels
    words = np.arange(len(space))
    out = []
    for tree, ids, value in zip(trees, labels, values):
        heads = np.where(tree[1:] > 0, tree[1:] - 1, words) + span.start
        out.append((heads.tolist(), [names[j] for j in ids], float(value)))
    return out


def write_values(doc: Doc, spans: Sequence[Tuple[int, int]],
                 values: Sequence[Tuple[Dict[str, Any], Dict[str, Sequence[Any]]]]) -> None:
    """For each span ``(start, end)`` of ``doc`` and its ``(span_items, token_items)``:
    ``doc[start:end]._.<name> = value`` for its span items and ``doc[start + i]._.<name> =
    values[i]`` for its token items, written straight into ``user_data`` under the keys spaCy's
    ``Underscore`` reads (character offsets: ``(start_char, end_char)`` of a span, ``(idx, None)``
    of a token)."""
    if not spans:
        return
    chars = doc.to_array([IDX, LENGTH]).tolist()
    user_data = doc.user_data
    for (start, end), (span_items, token_items) in zip(spans, values):
        span_key = (chars[start][0], chars[end - 1][0] + chars[end - 1][1])
        for name, value in span_items.items():
            user_data[("._.", name, *span_key)] = value
        for name, token_values in token_items.items():
            for (offset, _), value in zip(chars[start:end], token_values):
                user_data[("._.", name, offset, None)] = value
