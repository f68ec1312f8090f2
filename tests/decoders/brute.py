"""Brute-force references for the decoder tests: enumerate every single-root tree of n <= 6 words."""
import itertools
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def all_trees(n: int):
    """All head arrays (heads[0] == -1, one word on the root, no cycles) of n words; for n = 0
    the single empty tree ``[[-1]]``."""
    if n == 0:
        return np.array([[-1]], dtype=np.int64)
    trees = []
    for choice in itertools.product(range(n + 1), repeat=n):
        heads = (-1,) + choice
        if sum(1 for h in choice if h == 0) != 1:
            continue
        if any(heads[m] == m for m in range(1, n + 1)):
            continue
        if all(_reaches_root(heads, m) for m in range(1, n + 1)):
            trees.append(heads)
    return np.array(trees, dtype=np.int64).reshape(-1, n + 1)


def _reaches_root(heads, m):
    seen = set()
    while m != 0:
        if m in seen:
            return False
        seen.add(m)
        m = heads[m]
    return True


def is_projective(heads) -> bool:
    n = len(heads) - 1
    for m in range(1, n + 1):
        h = heads[m]
        lo, hi = min(h, m), max(h, m)
        for k in range(lo + 1, hi):
            a = k
            while a not in (0, h) and a != -1:
                a = heads[a]
            if a != h:
                return False
    return True


def sibling_factors(heads) -> np.ndarray:
    """(F, 3) int64 ``(h, s, m)`` sibling factors of the tree ``heads``: per head, its modifiers
    chained outward on each side (right, then left), nearest first, ``s == h`` for the first."""
    n = len(heads) - 1
    out = []
    for h in range(n + 1):
        right = [m for m in range(1, n + 1) if heads[m] == h and m > h]
        left = sorted((m for m in range(1, n + 1) if heads[m] == h and m < h), reverse=True)
        for side in (right, left):
            chain = [h] + side
            out.extend((h, a, b) for a, b in zip(chain, chain[1:]))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def reference_score(heads, arc, sib=None, grand=None) -> float:
    """A plain-Python loop for tree scores, written independently of the package's kernels."""
    n = len(heads) - 1
    total = sum(arc[heads[m], m] for m in range(1, n + 1))
    if sib is not None:
        for h in range(n + 1):
            right = [m for m in range(1, n + 1) if heads[m] == h and m > h]
            left = sorted((m for m in range(1, n + 1) if heads[m] == h and m < h), reverse=True)
            for side in (right, left):
                chain = [h] + side
                total += sum(sib[h, a, b] for a, b in zip(chain, chain[1:]))
    if grand is not None:
        total += sum(grand[heads[heads[m]], heads[m], m] for m in range(1, n + 1) if heads[m] != 0)
    return float(total)


def best_tree(n, arc, sib=None, grand=None, projective=False):
    """(best score, all heads arrays reaching it) by enumeration."""
    best, argbest = -np.inf, []
    for heads in all_trees(n):
        if projective and not is_projective(heads):
            continue
        s = reference_score(heads, arc, sib, grand)
        if s > best + 1e-9:
            best, argbest = s, [heads]
        elif abs(s - best) <= 1e-9:
            argbest.append(heads)
    return best, argbest


def random_scores(rng, n, sib=False, grand=False, scale=1.0):
    arc = rng.normal(scale=scale, size=(n + 1, n + 1))
    s = rng.normal(scale=scale, size=(n + 1,) * 3) if sib else None
    g = rng.normal(scale=scale, size=(n + 1,) * 3) if grand else None
    return arc, s, g


def tree_distribution(heads, arc, temperature, sib=None):
    """Per word P(heads[m] -> m) and log P(heads) by enumeration: projective trees with ``sib``
    where given and ``heads`` is projective, else every tree with the arc scores alone."""
    n = len(heads) - 1
    projective = sib is not None and is_projective(heads)
    trees = [t for t in all_trees(n) if is_projective(t)] if projective else list(all_trees(n))
    scores = np.array([reference_score(t, arc, sib if projective else None) for t in trees]) / temperature
    log_z = np.logaddexp.reduce(scores)
    probs = np.exp(scores - log_z)
    marginals = [sum(p for t, p in zip(trees, probs) if t[m] == heads[m]) for m in range(1, n + 1)]
    return np.array(marginals), float(scores[[list(t) for t in trees].index(list(heads))] - log_z)
