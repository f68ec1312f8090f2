"""Labels of decoded trees: ``Labeler``, the object ``hc_parser`` labels its trees with.

A tree's label scores are (n, L), row ``m - 1`` for word ``m`` on the arc the decoder chose
(``models.graph_parser.tree_label_scores``). The labeler gives the root's child ``ROOT`` and no
other word ``ROOT``, never picks a label training has not seen (``LabelSet.unseen``), with
``valency`` picks the best labels under at most one child per head from each label class
(``graph.valency``, ``decoders.constrained_labels``), and with ``keep_doc_labels`` keeps an earlier
parser's label where the decoded head is that parser's.
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..decoders import constrained_labels
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

    def __call__(self, heads: np.ndarray, scores: np.ndarray, labels: LabelSet,
                 doc_parse: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> np.ndarray:
        """Label ids (n,) of the tree ``heads`` ((n+1,), root at 0) from ``scores`` ((n, L));
        ``doc_parse``: the doc's own span-local heads and label ids (-1 unknown), or None."""
        scores = np.array(scores, dtype=np.float64)
        scores[:, labels.unseen] = -np.inf
        root = labels.root
        if root >= 0:
            is_root = heads[1:] == 0
            scores[~is_root, root] = -np.inf
            scores[is_root, :] = -np.inf
            scores[is_root, root] = 0.0
        use_classes = self.valency and labels.classes is not None
        best = constrained_labels(heads, scores, labels.classes) if use_classes else scores.argmax(axis=1)
        if doc_parse is not None and self.keep_doc_labels:
            doc_heads, doc_labels = doc_parse
            keep = (doc_heads[1:] == heads[1:]) & (doc_labels >= 0) & ((doc_labels == root) == (heads[1:] == 0))
            best[keep] = doc_labels[keep]
        return best

    def label_trees(self, trees: Sequence[np.ndarray], scores: Sequence[np.ndarray], labels: LabelSet,
                    doc_parses: Sequence[Optional[Tuple[np.ndarray, np.ndarray]]],
                    spaces: Sequence[np.ndarray]) -> List[np.ndarray]:
        """Label ids of every tree of a batch (``scores[k]``: tree ``k``'s (n, L)), whitespace
        tokens (``spaces[k]``, bool per word) given ``LabelSet.join`` where the parser knows it."""
        out = []
        for heads, rows, doc_parse, space in zip(trees, scores, doc_parses, spaces):
            best = self(heads, rows, labels, doc_parse)
            if space.any() and labels.join >= 0:
                best[space] = labels.join
            out.append(best)
        return out
