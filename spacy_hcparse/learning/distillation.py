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
    """

    def __init__(self, paths: Sequence[str], component: str = "hc_parser", noisy: bool = False):
        if not paths:
            raise ValueError("Teachers: give at least one trained pipeline's path")
        self.paths = [str(path) for path in paths]
        self.component = component
        self.noisy = noisy
        self._loaded: Optional[List[Tuple[object, List[str], Dict[str, List[str]]]]] = None

    def _teachers(self) -> List[Tuple[object, List[str], Dict[str, List[str]]]]:
        """Per teacher (model, labels, tags per tag attribute), loaded once."""
        if self._loaded is None:
            import spacy  # here, not at import: only training with teachers needs a pipeline

            self._loaded = []
            for path in self.paths:
                pipe = spacy.load(path).get_pipe(self.component)
                self._loaded.append((pipe.model, list(pipe.labels), dict(pipe.cfg.get("tags", {}))))
        return self._loaded

    def targets(self, docs: list, spans: list, heads: List[Optional[np.ndarray]], labels: Sequence[str],
                tags: Dict[str, List[str]]) -> Targets:
        """The teachers' mean distributions on the student's batch.

        ``spans``: per doc its spans as the student scores them; ``heads``: per span the gold
        heads (n+1,) or None; ``labels``/``tags``: the student's label and tag inventories
        (a teacher's labels are matched by name; a tag attribute is distilled only where every
        teacher has the student's tags, in the same order).
        """
        whole = [h if h is not None and (h[1:] >= 0).all() else None for h in heads]
        attrs = tuple(attr for attr, names in tags.items()
                      if names and all(list(t.get(attr, [])) == list(names) for _, _, t in self._teachers()))
        head_sums: List[Optional[np.ndarray]] = [None] * len(whole)
        label_sums: List[Optional[np.ndarray]] = [None] * len(whole)
        tag_sums: Dict[str, list] = {attr: [None] * len(docs) for attr in attrs}
        teachers = self._teachers()
        for model, teacher_labels, _ in teachers:
            scores, _ = model(GraphInput(docs, spans, whole, frozenset(), tags=attrs), is_train=self.noisy)
            scores = scores.to_numpy(model.ops)
            ids = [i for i, tree in enumerate(whole) if tree is not None]
            rows = scores.tree_labels([whole[i] for i in ids], ids) if ids else []
            columns = _label_columns(teacher_labels, labels)
            for i, row in zip(ids, rows):
                head_sums[i] = _add(head_sums[i], _softmax(head_logits(scores.arc(i)), axis=0))
                probs = np.zeros((len(row), len(labels)))
                probs[:, columns >= 0] = _softmax(row, axis=1)[:, columns[columns >= 0]]
                label_sums[i] = _add(label_sums[i], probs)
            for attr in attrs:
                for d, logits in enumerate(scores.tags[attr]):
                    tag_sums[attr][d] = _add(tag_sums[attr][d], _softmax(np.asarray(logits, np.float64), axis=1))
        n = len(teachers)
        spans_out = [None if h is None else SpanTargets(_log(h / n), _log(lab / n))
                     for h, lab in zip(head_sums, label_sums)]
        return Targets(spans_out, {attr: [_log(t / n) for t in values] for attr, values in tag_sums.items()})


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
def make_teachers(paths: List[str], component: str = "hc_parser", noisy: bool = False) -> Teachers:
    """Trained pipelines whose ``hc_parser`` a student distils (``GraphLoss.v1``'s ``teachers``);
    loaded when training first needs them."""
    return Teachers(paths, component, noisy)
