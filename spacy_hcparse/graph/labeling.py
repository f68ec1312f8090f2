"""Labels of decoded trees: ``Labeler``, the object ``hc_parser`` labels its trees with.

A tree's label scores are (n, L), row ``m - 1`` for word ``m`` on the arc the decoder chose
(``graph.graph_model.tree_label_scores``). The labeler gives the root's child ``ROOT`` and no
other word ``ROOT``, never picks a label training has not seen (``LabelSet.unseen``), with
``valency`` picks the best labels under at most one child per head from each label class
(``graph.valency``, ``decoders.labels``), and with ``keep_doc_labels`` keeps an earlier
parser's label where the decoded head is that parser's. Every tree of a batch is labelled in one
compiled call (``decoders.batch.labels_batch``); one tree is a batch of one.
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..decoders.batch import labels_batch, split_words
from ..names import ROOT_LABEL


class LabelSet(NamedTuple):
    """What a labeler reads of a parser's labels: ``names`` (L,), the id of ``ROOT`` (-1 absent),
    each label's valency class ((L,), -1 unconstrained; None when no classes were learned), which
    labels are never predicted (bool (L,)), and the id of the label whitespace tokens get (-1:
    none)."""

    names: Tuple[str, ...]
    root: int
    classes: Optional[np.ndarray]
    unseen: np.ndarray
    join: int

    @classmethod
    def of(cls, names: Sequence[str], classes: Optional[List[List[str]]], unseen: Sequence[str],
           join_label: str) -> "LabelSet":
        """From a parser's labels, its learned classes (lists of labels), unseen labels and the
        label of whitespace tokens."""
        names = tuple(names)
        index = {name: i for i, name in enumerate(names)}
        class_of = {label: k for k, members in enumerate(classes or ()) for label in members}
        class_ids = np.array([class_of.get(name, -1) for name in names], dtype=np.int64) if classes else None
        hidden = np.zeros(len(names), dtype=bool)
        hidden[[index[name] for name in unseen if name in index]] = True
        return cls(names, index.get(ROOT_LABEL, -1), class_ids, hidden, index.get(join_label, -1))

    def masked(self, trees: Sequence[np.ndarray], rows: Sequence[np.ndarray]) -> np.ndarray:
        """Every tree's label scores (``rows[k]``: tree ``k``'s (n, L)) stacked ((N, L) float64)
        under the labeler's rules: unseen labels ``-inf``, ``ROOT`` on the root's child only (its
        other labels ``-inf``)."""
        if not len(rows):
            return np.zeros((0, len(self.names)))
        stacked = np.concatenate([np.asarray(r, dtype=np.float64) for r in rows]).reshape(-1, len(self.names))
        stacked[:, self.unseen] = -np.inf
        if self.root >= 0:
            is_root = np.concatenate([t[1:] for t in trees]) == 0
            stacked[~is_root, self.root] = -np.inf
            stacked[is_root, :] = -np.inf
            stacked[is_root, self.root] = 0.0
        return stacked


class Labeler:
    """Labels a parser's decoded trees (see the module docstring).

    valency: at most one child per head from each label class (``LabelSet.classes``); False:
        each word's best label on its own.
    keep_doc_labels: where the decoded head is the doc's existing head, keep the doc's label (if
        the parser knows it): for an earlier parser whose labels are the better ones.
    """

    def __init__(self, valency: bool, keep_doc_labels: bool) -> None:
        self.valency = valency
        self.keep_doc_labels = keep_doc_labels

    def label_trees(self, trees: Sequence[np.ndarray], masked: np.ndarray, labels: LabelSet,
                    doc_parses: Optional[Sequence[Optional[Tuple[np.ndarray, np.ndarray]]]] = None,
                    spaces: Optional[Sequence[np.ndarray]] = None, threads: int = 1) -> List[np.ndarray]:
        """Label ids (n,) of every tree ``trees[k]`` ((n+1,), root at 0) of a batch, in one call:
        ``masked`` their stacked label scores (``LabelSet.masked``); ``doc_parses[k]``: the doc's
        own span-local heads and label ids (-1 unknown) where ``keep_doc_labels`` reads them, or
        None; whitespace tokens (``spaces[k]``, bool per word) get ``LabelSet.join`` where the
        parser knows it. ``threads`` > 1 spreads the trees over numba's threads."""
        sizes = np.array([len(t) for t in trees], dtype=np.int64)
        heads = np.concatenate(list(trees)) if len(trees) else np.zeros(0, np.int64)
        classes = labels.classes if self.valency else None
        flat = labels_batch(heads, sizes, masked, classes, threads=threads)
        out = split_words(flat, sizes)  # views of ``flat``
        if self.keep_doc_labels and doc_parses is not None:
            for tree, best, doc_parse in zip(trees, out, doc_parses):
                if doc_parse is not None:
                    doc_heads, doc_labels = doc_parse
                    keep = (doc_heads[1:] == tree[1:]) & (doc_labels >= 0) & ((doc_labels == labels.root) == (tree[1:] == 0))
                    best[keep] = doc_labels[keep]
        if labels.join >= 0 and spaces is not None and len(spaces):
            flat[np.concatenate(list(spaces)).astype(bool)] = labels.join
        return out
