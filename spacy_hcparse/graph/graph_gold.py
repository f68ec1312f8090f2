"""The graph parser's gold of a training batch: spans, span-local trees and label ids, sentence
starts and tags, with a report of the gold that cannot be learned.

``batch_gold`` reads each example's reference aligned to its predicted doc (``learning.gold``):
per doc its spans (the reference's sentences, chunked to ``max_length``); per span its
``SpanGold`` (heads (n+1,), root at 0, and label ids (n,), ``-1`` unknown) or None where the
known arcs cannot be part of one tree; per doc the gold sentence starts and the tag ids of the
model's tag objectives. Partial gold (heads or labels missing in the reference) keeps its known
arcs: ``GraphLoss`` leaves the unknown ones out.

Pseudo-projective gold (``projectivize``, a projective decoder's fair training): a fully annotated
reference is projectivized as spaCy's parser does (``nonproj.projectivize``: non-projective arcs
lifted, their labels decorated ``dep||head``); a decorated label the parser does not know falls
back to its plain label.
"""
import logging
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.pipeline._parser_internals import nonproj
from spacy.training import Example

from ..learning.gold import (aligned_gold, aligned_tags, lifted_labels, partial_problem, partial_span_tree,
                             reference_spans)
from ..names import ROOT_LABEL, Span
from .graph_loss import GraphGold, SpanGold


class Unusable(NamedTuple):
    """A span whose gold is skipped: the example's predicted doc, the span, the aligned heads
    (absolute, None unknown), whether the span is a whole sentence, and the reason with its
    logging level where known (None: ``learning.gold.gold_problem`` says)."""

    doc: object
    start: int
    end: int
    heads: list
    whole_sentence: bool
    problem: Optional[Tuple[str, int]]


class GoldBatch(NamedTuple):
    """``spans``: per doc its spans; ``gold``: the ``GraphGold`` of the batch; ``labels``: the
    gold labels seen (a parser's unseen labels become seen); ``unusable``: what was skipped."""

    spans: List[List[Span]]
    gold: GraphGold
    labels: List[str]
    unusable: List[Unusable]


def batch_gold(examples: Sequence[Example], labels: Sequence[str], tags: Dict[str, Sequence[str]],
               max_length: int, projectivize: bool = False) -> GoldBatch:
    """The gold of ``examples`` for a parser with ``labels`` and, per tag attribute of its model's
    tag objectives, its ``tags``; spans chunked to ``max_length``; ``projectivize``: pseudo-projective
    trees (module docstring)."""
    label_ids = {label: i for i, label in enumerate(labels)}
    tag_ids = {attr: {tag: i for i, tag in enumerate(names)} for attr, names in tags.items()}
    spans, span_golds, starts, tag_golds = [], [], [], {attr: [] for attr in tag_ids}
    seen, unusable = set(), []
    for eg in examples:
        heads, deps, _ = aligned_gold(eg, projectivize=projectivize and fully_annotated(eg))
        seen.update(d for d in deps if d)
        if projectivize:
            deps = [d if not d or d in label_ids else d.split(nonproj.DELIMITER)[0] for d in deps]
        absolute = known_heads(heads, deps)
        doc_spans, doc_starts = reference_spans(eg, max_length, absolute)
        for (start, end), chunk in zip(doc_spans, chunks(doc_spans, doc_starts)):
            gold = span_gold(absolute, deps, start, end, label_ids, chunk)
            if gold is None:
                problem = partial_gold_problem(absolute, start, end) if (absolute[start:end] < 0).any() else None
                unusable.append(Unusable(eg.predicted, start, end, heads, not chunk, problem))
            span_golds.append(gold)
        spans.append(doc_spans)
        starts.append(doc_starts)
        for attr, ids in tag_ids.items():
            tag_golds[attr].append(np.array([ids.get(t, -1) for t in aligned_tags(eg, attr)], dtype=np.int64))
    return GoldBatch(spans, GraphGold(span_golds, starts, tag_golds), sorted(seen), unusable)


def gold_labels(get_examples: Callable[[], Iterable[Example]], projectivize: bool, cutoff: int) -> List[str]:
    """The labels the parser learns from the examples' references, ``ROOT`` among them: with
    ``projectivize`` the pseudo-projective ones (``learning.gold.lifted_labels``: decorated labels
    seen at least ``cutoff`` times), else the references' own."""
    if projectivize:
        return sorted(set(lifted_labels(get_examples(), cutoff)) | {ROOT_LABEL})
    return sorted({tok.dep_ for eg in get_examples() for tok in eg.reference if tok.dep_} | {ROOT_LABEL})


def tag_sets(get_examples: Callable[[], Iterable[Example]], attrs: Sequence[str]) -> Dict[str, List[str]]:
    """Per tag objective of the model (``attrs``: ``POS``, ``TAG``, ``DEP``) the tags the
    references hold. None for ``TAG`` (XPOS) where it equals ``POS`` on every token that has one:
    spaCy's CoNLL-U converter fills a treebank's missing XPOS with its UPOS, and a model should
    then write ``_`` there, not a second guess at UPOS."""
    tags = {attr: sorted({tag for eg in get_examples() for tag in aligned_tags(eg, attr) if tag}) for attr in attrs}
    if tags.get("TAG") and all(tag == pos for eg in get_examples()
                               for tag, pos in zip(aligned_tags(eg, "TAG"), aligned_tags(eg, "POS")) if tag):
        tags["TAG"] = []
    return tags


def fully_annotated(eg: Example) -> bool:
    """Whether the reference has every head (a partial one is not projectivized: spaCy's
    transform would read each missing head as one more root)."""
    return eg.reference.has_annotation("DEP", require_complete=True)


def chunks(spans: List[Span], starts: np.ndarray) -> List[bool]:
    """Per span, whether it is a chunk of a longer sentence rather than a whole one (``starts``:
    the gold sentence starts, 1 where one begins)."""
    begins = starts == 1
    return [not (begins[start] or start == 0) or (end < len(begins) and not begins[end]) for start, end in spans]


def known_heads(heads: List[Optional[int]], deps: List[Optional[str]]) -> np.ndarray:
    """Absolute gold heads (n,) from ``aligned_gold``'s, ``-1`` where unknown: a token that does
    not align (None), or one whose head the reference leaves missing (spaCy stores a missing
    head as the token heading itself with no label, ``Token.has_head()`` False)."""
    return np.array([-1 if h is None or (h == i and not d) else h for i, (h, d) in enumerate(zip(heads, deps))],
                    dtype=np.int64)


def partial_gold_problem(heads: np.ndarray, start: int, end: int) -> Tuple[str, int]:
    """Why the known arcs of ``heads[start:end]`` (absolute, ``-1`` unknown) are not part of one
    tree, and the logging level (a defect of the gold: a warning)."""
    local = np.full(end - start + 1, -1, dtype=np.int64)
    span = heads[start:end]
    inside = (span >= start) & (span < end)
    local[1:][inside] = span[inside] - start + 1
    local[1:][span == np.arange(start, end)] = 0
    outside = np.flatnonzero(~inside & (span >= 0))
    if len(outside):
        return f"the gold head of token {start + outside[0]} is outside its sentence", logging.WARNING
    return f"gold heads are not one tree: {partial_problem(local)}", logging.WARNING


def span_gold(heads: np.ndarray, deps, start: int, end: int, label_ids: Dict[str, int],
              chunk: bool) -> Optional[SpanGold]:
    """Span-local gold (heads (n+1,), label ids (n,)) from absolute ``heads`` (``-1`` unknown;
    heads outside a chunk become unknown), or None if the known arcs cannot be one tree."""
    local = partial_span_tree(heads, start, end, chunk)
    if local is None:
        return None
    labels = np.array([label_ids.get(d, -1) for d in deps[start:end]], dtype=np.int64)
    labels[local[1:] < 0] = -1
    return local, labels
