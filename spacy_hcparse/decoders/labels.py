"""Labels of a given tree with valency constraints: at most one child per class under each head;
the compiled part of ``batch.labels_batch`` (a single tree is a batch of one).

Conventions: ``scores`` (N, L), one row per word (``-inf``: that label is ruled out for that
word); ``label_class`` (L,) the class of each label, ``-1`` for labels any number of siblings may
share. Labels of one class exclude each other among siblings: a class ``{nsubj, nsubj:pass,
csubj}`` gives every head at most one subject. Per head whose children's best labels clash, the
best labelling under the constraints is a maximum-weight bipartite matching of classes to
children (Hungarian algorithm), exact; where nothing else is allowed (a word whose every finite
label belongs to a class a sibling takes), the word keeps its best label and the constraint yields.
"""
import numpy as np

from ..compiling import njit

# Gains are clipped to this so that a child whose only allowed labels are constrained (every
# unconstrained score ``-inf``) wins its class over any finite trade-off, with finite arithmetic.
_BIG = 1e12


@njit(cache=True)
def _assign_groups(kids, starts, scores, label_class, n_classes, best, out):
    """``_assign`` for each group ``kids[starts[g]:starts[g + 1]]`` of one head's children (rows
    of ``scores``, ``best`` and ``out``): the batched labels' heads where classes clash."""
    for g in range(starts.shape[0] - 1):
        _assign(kids[starts[g]: starts[g + 1]], scores, label_class, n_classes, best, out)


@njit(cache=True)
def _assign(kids, scores, label_class, n_classes, best, out):
    """Labels of one head's children ``kids``: each takes its best unconstrained label, plus at
    most one child per class takes that class's best label where it gains (a matching)."""
    n_kids = len(kids)
    free_score = np.full(n_kids, -np.inf)
    free_label = np.full(n_kids, -1, np.int64)
    class_score = np.full((n_classes, n_kids), -np.inf)
    class_label = np.full((n_classes, n_kids), -1, np.int64)
    for j in range(n_kids):
        row = scores[kids[j]]
        for label in range(len(row)):
            k = label_class[label]
            if k < 0:
                if row[label] > free_score[j]:
                    free_score[j], free_label[j] = row[label], label
            elif row[label] > class_score[k, j]:
                class_score[k, j], class_label[k, j] = row[label], label
    # Rows: classes; columns: children, then one "nobody" column per class (cost 0).
    cost = np.zeros((n_classes, n_kids + n_classes))
    for k in range(n_classes):
        for j in range(n_kids):
            if class_score[k, j] > -np.inf:
                gain = min(class_score[k, j] - free_score[j], _BIG)
                if gain > 0:
                    cost[k, j] = -gain
    match = _hungarian(cost)
    for j in range(n_kids):
        out[kids[j]] = free_label[j] if free_score[j] > -np.inf else best[kids[j]]
    for k in range(n_classes):
        j = match[k]
        if j < n_kids and cost[k, j] < 0:
            out[kids[j]] = class_label[k, j]


@njit(cache=True)
def _hungarian(cost):
    """Minimum-cost assignment of every row of ``cost`` (r, c), r <= c, to its own column:
    the column of each row (shortest augmenting paths with potentials, O(r^2 c))."""
    n_rows, n_cols = cost.shape
    u = np.zeros(n_rows + 1)
    v = np.zeros(n_cols + 1)
    owner = np.zeros(n_cols + 1, np.int64)  # 1-based row matched to each column; 0: none
    way = np.zeros(n_cols + 1, np.int64)
    for i in range(1, n_rows + 1):
        owner[0] = i
        j0 = 0
        min_reduced = np.full(n_cols + 1, np.inf)
        used = np.zeros(n_cols + 1, np.bool_)
        while True:
            used[j0] = True
            i0 = owner[j0]
            delta = np.inf
            j1 = 0
            for j in range(1, n_cols + 1):
                if not used[j]:
                    reduced = cost[i0 - 1, j - 1] - u[i0] - v[j]
                    if reduced < min_reduced[j]:
                        min_reduced[j] = reduced
                        way[j] = j0
                    if min_reduced[j] < delta:
                        delta = min_reduced[j]
                        j1 = j
            for j in range(n_cols + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    min_reduced[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0 != 0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    column = np.full(n_rows, -1, np.int64)
    for j in range(1, n_cols + 1):
        if owner[j] > 0:
            column[owner[j] - 1] = j - 1
    return column
