"""Distillation: the graph parser trained toward an ensemble of trained parsers (the teachers) as
well as the gold (Hinton et al. 2015; Kuncoro et al. 2016 for dependency parsers), so that one
model learns what several learned apart.

The teachers are trained pipelines (``spacy.load``-able directories) with an ``hc_parser`` of the
same labels. On each training batch they score the student's own spans (no dropout); their
targets are the mean of their distributions: per word the head distribution (softmax over the
word's arc scores, as ``losses.head_xent``), the label distribution on the gold arc, and the
distributions of the tag objectives both sides have with the same tags. The student's loss adds
``weight`` times its cross-entropy against those targets (reported as the KL divergence, whose
gradient is the same) to the gold losses. Sibling and grandparent scores are not distilled: they
are no distributions, and their triples follow each model's own pruning.
"""
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.util import registry

from ..graph_scores import GraphInput, GraphScores
from .rehearsal import head_logits, soft_xent


class SpanTargets(NamedTuple):
    """The teachers' mean distributions of one span, as log-probabilities (``-inf``: none):
    ``heads`` (n+1, n), column ``m - 1`` word ``m``'s head distribution; ``labels`` (n, L) on the
    gold arcs, in the student's label order."""

    heads: np.ndarray
    labels: np.ndarray


class Targets(NamedTuple):
    """A batch's targets: per span (docs in order) its ``SpanTargets`` or None (no whole gold
    tree: nothing distilled); per tag attribute, per doc (n_tokens, T) log-probabilities."""

    spans: List[Optional[SpanTargets]]
    tags: Dict[str, List[np.ndarray]]


class Teachers:
    """Trained ``hc_parser`` models whose mean distributions a student learns.

    paths: pipeline directories, loaded on first use (so that a student's config, which names
        them, loads without them); ``component``: the parser's name in those pipelines.
    held_out: per teacher, the ``.spacy`` file it was trained on (or none): a teacher then labels
        only the docs it did not see there (cross-fitting: a teacher is right on nearly every
        word it trained on, so its targets there are the gold again); a doc that every teacher
        saw gets no targets.
    """

    def __init__(self, paths: Sequence[str], component: str = "hc_parser", noisy: bool = False,
                 held_out: Optional[Sequence[str]] = None):
        if not paths:
            raise ValueError("Teachers: give at least one trained pipeline's path")
        if held_out is not None and len(held_out) != len(paths):
            raise ValueError(f"Teachers: held_out names {len(held_out)} training files for {len(paths)} teachers")
        self.paths = [str(path) for path in paths]
        self.component = component
        self.noisy = noisy
        self.held_out = None if held_out is None else [str(path) for path in held_out]
        self._loaded: Optional[List[Tuple[object, List[str], Dict[str, List[str]]]]] = None
        self._seen: Optional[List[frozenset]] = None

    def _teachers(self) -> List[Tuple[object, List[str], Dict[str, List[str]]]]:
        """Per teacher (model, labels, tags per tag attribute), loaded once."""
        if self._loaded is None:
            import spacy  # here, not at import: only training with teachers needs a pipeline

            self._loaded = []
            for path in self.paths:
                pipe = spacy.load(path).get_pipe(self.component)
                self._loaded.append((pipe.model, list(pipe.labels), dict(pipe.cfg.get("tags", {}))))
        return self._loaded

    def _seen_texts(self) -> List[frozenset]:
        """Per teacher, the texts of the docs it trained on (empty: it labels every doc)."""
        if self._seen is None:
            self._seen = [frozenset() for _ in self.paths]
            if self.held_out is not None:
                from spacy.tokens import DocBin
                from spacy.vocab import Vocab

                self._seen = [frozenset(doc.text for doc in DocBin().from_disk(path).get_docs(Vocab()))
                              for path in self.held_out]
        return self._seen

    def targets(self, docs: list, spans: list, heads: List[Optional[np.ndarray]], labels: Sequence[str],
                tags: Dict[str, List[str]]) -> Targets:
        """The teachers' mean distributions on the student's batch.

        ``spans``: per doc its spans as the student scores them; ``heads``: per span (the docs'
        spans in order) the gold heads (n+1,) or None; ``labels``/``tags``: the student's label
        and tag inventories (a teacher's labels are matched by name; a tag attribute is distilled
        only where every teacher has the student's tags, in the same order). Each doc's targets
        are the mean over the teachers that may label it (``held_out``).
        """
        whole = [h if h is not None and (h[1:] >= 0).all() else None for h in heads]
        span_doc = [d for d, doc_spans in enumerate(spans) for _ in doc_spans]
        teachers = self._teachers()
        attrs = tuple(attr for attr, names in tags.items()
                      if names and all(list(t.get(attr, [])) == list(names) for _, _, t in teachers))
        head_sums: List[Optional[np.ndarray]] = [None] * len(whole)
        label_sums: List[Optional[np.ndarray]] = [None] * len(whole)
        tag_sums: Dict[str, list] = {attr: [None] * len(docs) for attr in attrs}
        counts = np.zeros(len(docs))
        for (model, teacher_labels, _), seen in zip(teachers, self._seen_texts()):
            doc_ids = [d for d, doc in enumerate(docs) if doc.text not in seen]
            if not doc_ids:
                continue
            counts[doc_ids] += 1
            chosen = set(doc_ids)
            span_ids = [i for i, d in enumerate(span_doc) if d in chosen]
            sub_whole = [whole[i] for i in span_ids]
            scores, _ = model(GraphInput([docs[d] for d in doc_ids], [spans[d] for d in doc_ids], sub_whole,
                                         frozenset(), tags=attrs), is_train=self.noisy)
            scores = scores.to_numpy(model.ops)
            local = [j for j, tree in enumerate(sub_whole) if tree is not None]
            rows = scores.tree_labels([sub_whole[j] for j in local], local) if local else []
            columns = _label_columns(teacher_labels, labels)
            for j, row in zip(local, rows):
                i = span_ids[j]
                head_sums[i] = _add(head_sums[i], _softmax(head_logits(scores.arc(j)), axis=0))
                probs = np.zeros((len(row), len(labels)))
                probs[:, columns >= 0] = _softmax(row, axis=1)[:, columns[columns >= 0]]
                label_sums[i] = _add(label_sums[i], probs)
            for attr in attrs:
                for d, logits in zip(doc_ids, scores.tags[attr]):
                    tag_sums[attr][d] = _add(tag_sums[attr][d], _softmax(np.asarray(logits, np.float64), axis=1))
        spans_out = [None if h is None else SpanTargets(_log(h / counts[span_doc[i]]),
                                                        _log(label_sums[i] / counts[span_doc[i]]))
                     for i, h in enumerate(head_sums)]
        tags_out = {attr: [None if t is None else _log(t / counts[d]) for d, t in enumerate(values)]
                    for attr, values in tag_sums.items()}
        return Targets(spans_out, tags_out)


def distillation_loss(scores: GraphScores, targets: Targets, weight: float) -> Tuple[float, GraphScores]:
    """``weight`` times the student's KL divergence from the targets, and its gradients laid out
    as ``scores`` (numpy; label rows on the gold arcs, word by word, as in training)."""
    total = 0.0
    d_arcs, d_labels = [], []
    for i, target in enumerate(targets.spans):
        d_arc = np.zeros(np.shape(scores.arcs[i]))
        d_label = np.zeros(np.shape(scores.labels[i]))
        if target is not None and len(target.labels) == len(scores.labels[i]):
            loss, d = soft_xent(head_logits(scores.arc(i)), target.heads, axis=0)
            d_arc[:, 1:] = d
            label_loss, d_label = soft_xent(np.asarray(scores.labels[i], dtype=np.float64), target.labels, axis=1)
            total += loss + label_loss
        d_arcs.append((weight * d_arc).astype("f"))
        d_labels.append((weight * d_label).astype("f"))
    d_tags = {}
    for attr, logits in scores.tags.items():
        grads = []
        for d, values in enumerate(logits):
            values = np.asarray(values, dtype=np.float64)
            target = targets.tags.get(attr, [None] * len(logits))[d]
            if target is None or not len(values):
                grads.append(np.zeros(values.shape, dtype="f"))
                continue
            loss, grad = soft_xent(values, target, axis=1)
            total += loss
            grads.append((weight * grad).astype("f"))
        d_tags[attr] = grads
    zeros = lambda values: [np.zeros(np.shape(v), dtype="f") for v in values]  # noqa: E731
    return weight * total, scores.like(d_arcs, zeros(scores.sib), zeros(scores.grand), d_labels,
                                       zeros(scores.starts), d_tags)


def _softmax(logits: np.ndarray, axis: int) -> np.ndarray:
    top = logits.max(axis=axis, keepdims=True)
    exp = np.exp(logits - np.where(np.isfinite(top), top, 0.0))
    return exp / exp.sum(axis=axis, keepdims=True)


def _log(probs: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(probs)


def _add(total: Optional[np.ndarray], value: np.ndarray) -> np.ndarray:
    return value if total is None else total + value


def _label_columns(teacher_labels: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Per student label, its column in the teacher's scores (-1: the teacher lacks it)."""
    index = {label: i for i, label in enumerate(teacher_labels)}
    return np.array([index.get(label, -1) for label in labels], dtype=np.int64)


@registry.misc("spacy_hcparse.Teachers.v1")
def make_teachers(paths: List[str], component: str = "hc_parser", noisy: bool = False,
                  held_out: Optional[List[str]] = None) -> Teachers:
    """Trained pipelines whose ``hc_parser`` a student distils (``GraphLoss.v1``'s ``teachers``);
    loaded when training first needs them. ``held_out``: per teacher its training file, whose
    docs it does not label (``Teachers``)."""
    return Teachers(paths, component, noisy, held_out)
