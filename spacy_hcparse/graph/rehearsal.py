"""Rehearsal: the graph parser kept close to an earlier copy of itself (the teacher) on text
without gold, so that fine-tuning on new data forgets less (spaCy's ``nlp.resume_training()``
then ``nlp.rehearse(examples)``).

The targets are the teacher's distributions, soft, as spaCy's tagger rehearses: per word its
head distribution (softmax over the word's arc scores, as training's head cross-entropy), its label
distribution on the arc to the teacher's most likely head (over the labels the teacher knew), and
for models with a sentence-start scorer each token's start probability. The loss is the student's
cross-entropy against them, summed over words like the training loss; the value reported is the
cross-entropy less the teacher's own entropy (the KL divergence, 0 where the student agrees),
whose gradient is the same. Sibling and grandparent scores are not rehearsed: they are no
distributions, and their triples follow each model's own pruning.
"""
from typing import List, Sequence, Tuple

import numpy as np

from .scores import GraphScores, TrainingScores


def teacher_heads(teacher: GraphScores) -> List[np.ndarray]:
    """Per span the teacher's most likely head of each word, (n+1,) with ``heads[0] == -1``."""
    out = []
    for i in range(len(teacher)):
        heads = np.full(len(teacher.masks[i]), -1, dtype=np.int64)
        heads[1:] = _head_logits(teacher.arc(i)).argmax(axis=0)
        out.append(heads)
    return out


def rehearsal_loss(student: TrainingScores, teacher: GraphScores, heads: Sequence[np.ndarray],
                   teacher_labels: Sequence[np.ndarray], labels: np.ndarray) -> Tuple[float, TrainingScores]:
    """Loss and gradients (laid out as ``student``) of the student's scores against the teacher's.

    Both numpy and of the same spans; ``heads``: ``teacher_heads(teacher)``, the arcs whose label
    rows the student scored (one row per word, in word order: ``GraphInput.keep`` in training);
    ``teacher_labels``: per span the teacher's (n, L) label scores on those arcs (the teacher
    model's ``tree_label_scores``); ``labels``: ids of the labels the teacher knew.
    """
    total = 0.0
    d_arcs, d_labels = [], []
    for i in range(len(heads)):
        arc = student.arc(i)
        loss, d = soft_xent(_head_logits(arc), _head_logits(teacher.arc(i)), axis=0)
        d_arc = np.zeros(arc.shape)
        d_arc[:, 1:] = d
        rows = teacher_labels[i]
        label_loss, d = soft_xent(np.asarray(student.labels[i], dtype=np.float64)[:, labels], rows[:, labels], axis=1)
        d_label = np.zeros(np.shape(student.labels[i]))
        d_label[:, labels] = d
        total += loss + label_loss
        d_arcs.append(d_arc.astype("f"))
        d_labels.append(d_label.astype("f"))
    d_starts = []
    for logits, target in zip(student.starts, teacher.starts):
        loss, d = soft_binary_xent(np.asarray(logits, dtype=np.float64), np.asarray(target, dtype=np.float64))
        total += loss
        d_starts.append(d.astype("f"))
    zeros = lambda values: [np.zeros(np.shape(v), dtype="f") for v in values]  # noqa: E731
    d_scores = student.like(d_arcs, zeros(student.sib), zeros(student.grand), d_labels, d_starts,
                            {attr: zeros(values) for attr, values in student.tags.items()})
    return total, d_scores


def soft_xent(logits: np.ndarray, target: np.ndarray, axis: int) -> Tuple[float, np.ndarray]:
    """KL divergence of softmax(``logits``) from softmax(``target``) along ``axis`` (summed), and
    the gradient of the cross-entropy with respect to ``logits``; ``-inf`` entries are absent
    in both."""
    log_p, log_q = _log_softmax(logits, axis), _log_softmax(target, axis)
    q = np.exp(log_q)
    present = q > 0
    loss = (q[present] * (log_q[present] - log_p[present])).sum()
    return float(loss), np.exp(log_p) - q


def soft_binary_xent(logits: np.ndarray, target: np.ndarray) -> Tuple[float, np.ndarray]:
    """The same for independent sigmoids (``logits``, ``target``: (n,))."""
    q = 0.5 * (1.0 + np.tanh(0.5 * target))
    log_p, log_not_p = -np.logaddexp(0.0, -logits), -np.logaddexp(0.0, logits)
    log_q, log_not_q = -np.logaddexp(0.0, -target), -np.logaddexp(0.0, target)
    loss = (q * (log_q - log_p) + (1.0 - q) * (log_not_q - log_not_p)).sum()
    return float(loss), 0.5 * (1.0 + np.tanh(0.5 * logits)) - q


def _head_logits(arc: np.ndarray) -> np.ndarray:
    """(n+1, n) each word's head logits: its column of ``arc``, itself excluded (``-inf``)."""
    logits = np.array(arc[:, 1:], dtype=np.float64)
    logits[1:][np.diag_indices(len(logits) - 1)] = -np.inf
    return logits


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    top = x.max(axis=axis, keepdims=True)
    shifted = x - np.where(np.isfinite(top), top, 0.0)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
