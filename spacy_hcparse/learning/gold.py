"""Gold of a training example, aligned to its predicted doc: what both parsers learn from.

Heads are absolute token indices of the predicted doc (a root heads itself, as in spaCy; ``-1``
or None unknown) until they become span-local, ``[-1, h_1 .. h_n]`` with the root's child at 0
(``partial_span_tree``). ``reference_spans`` gives the sentences training learns from, whatever
the predicted doc carries; ``aligned_gold`` and ``aligned_tags`` the reference's heads, labels and
tags per predicted token; ``gold_problem`` and ``partial_problem`` say why some gold cannot be
learned (the component logs it and skips the sentence); ``lifted_labels`` the labels of the
pseudo-projective transform (spaCy's: non-projective arcs lifted, their labels decorated
``head||dep``) that a parser learns.
"""
import logging
from collections import Counter
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD, ORTH, POS, SENT_START, TAG
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example

from ..decoders import tree_problem
from ..names import ROOT_LABEL, Span
from ..segment import chunked


DECORATION = nonproj.DELIMITER  # "||"


def lifted_labels(examples: Iterable[Example], cutoff: int) -> List[str]:
    """The labels of the examples' projectivized trees: every plain label and the decorated ones
    seen at least ``cutoff`` times, sorted, without the root's."""
    counts: Counter = Counter()
    for eg in examples:
        _, deps = eg.get_aligned_parse(projectivize=not partially_annotated(eg))
        counts.update(d for d in deps if d)
    plain = {d.split(DECORATION)[0] for d in counts}
    decorated = {d for d, c in counts.items() if DECORATION in d and c >= cutoff}
    return sorted((plain | decorated) - {ROOT_LABEL, "root", ""})


def gold_problem(
    heads: Sequence[Optional[int]], start: int, end: int, whole_sentence: bool = True
) -> Tuple[str, int]:
    """Why the gold heads (absolute, spaCy style: a root heads itself) of tokens ``start..end-1``
    are not one tree, and the logging level that deserves (``whole_sentence``: the span is a
    sentence of the doc, not a chunk of a longer one)."""
    n = end - start
    local = [-1]
    for m in range(n):
        h = heads[start + m]
        if h is None:
            return f"token {start + m} has no aligned gold head", logging.INFO
        if not (start <= h < end):
            if whole_sentence:
                return (f"the gold head of token {start + m} is outside its sentence (several roots "
                        f"or a cycle in the treebank)", logging.WARNING)
            return f"the gold head of token {start + m} is outside this chunk of a long sentence", logging.INFO
        local.append(0 if h == start + m else h - start + 1)
    problem = tree_problem(np.array(local, dtype=np.int64))
    if problem:
        return f"gold heads are not one tree: {problem}", logging.WARNING
    return "gold labels unknown to the component", logging.INFO


def reference_spans(eg: Example, max_length: int, heads: Optional[np.ndarray] = None) -> Tuple[List[Span], np.ndarray]:
    """The reference's sentences as spans of the predicted doc (chunked to ``max_length``), and
    the gold sentence starts of the predicted tokens (1 starts a sentence, 0 does not, -1
    unknown: no aligned token or no sentence annotation). Training learns from the reference's
    sentences whatever sentences the predicted doc carries (an annotating senter's, say).

    ``heads``: the aligned gold heads (absolute, a root heads itself, -1 unknown). Where some are
    known and some not (partial annotation), the sentences come from the known arcs instead
    (``partial_sentences``): spaCy derives a parsed doc's sentences from its heads, and with
    heads missing it cuts inside sentences and across known arcs."""
    pred, ref = eg.predicted, eg.reference
    if len(pred) == 0:
        return [], np.zeros(0, dtype=np.int64)
    if not (ref.has_annotation("SENT_START") or ref.has_annotation("DEP")):
        return chunked(pred, [(0, len(pred))], max_length), np.full(len(pred), -1, dtype=np.int64)
    if _same_words(pred, ref):
        gold = (ref.to_array(SENT_START).astype(np.int64) == 1).astype(np.int64)
    else:
        gold = np.array([-1 if s is None else int(bool(s)) for s in eg.get_aligned_sent_starts()], dtype=np.int64)
    begins = np.flatnonzero(gold == 1).tolist()
    if heads is not None and (heads < 0).any() and (heads >= 0).any():
        begins, gold = partial_sentences(heads, gold)
    cuts = sorted({0, *begins}) + [len(pred)]
    return chunked(pred, list(zip(cuts[:-1], cuts[1:])), max_length), gold


def partial_sentences(heads: np.ndarray, starts: np.ndarray) -> Tuple[List[int], np.ndarray]:
    """Sentence cuts and gold starts of a doc from its known arcs (``heads``: absolute, a root
    heads itself, -1 unknown; ``starts``: the reference's sentence starts, 1 where one begins).

    Sentences are contiguous and hold whole trees, so tokens linked by known arcs share a
    sentence: each group of overlapping link groups (a block) lies in one sentence, and two
    blocks holding a known root each are two sentences. Between two such blocks the cut goes
    where the reference puts one, if it may, else at the later block. A boundary is gold (1) only
    where nothing but the cut lies between the two rooted blocks; the other places it could be
    are unknown (-1), and so are the starts of blocks before the first and after the last rooted
    block (their sentences' roots are not known), which are not cut. Everything else is 0.
    """
    n = len(heads)
    group = np.arange(n)  # union-find over the known arcs

    def find(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for m, h in enumerate(heads.tolist()):
        if h >= 0 and h != m:
            group[find(m)] = find(h)
    roots = [find(i) for i in range(n)]
    lo = {r: i for i, r in reversed(list(enumerate(roots)))}
    hi = {r: i for i, r in enumerate(roots)}
    blocks: List[List[int]] = []  # [lo, hi, known roots], in order
    for r in sorted(lo, key=lo.get):
        if blocks and lo[r] <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], hi[r])
        else:
            blocks.append([lo[r], hi[r], 0])
    for m in np.flatnonzero(heads == np.arange(n)).tolist():
        next(b for b in blocks if b[0] <= m <= b[1])[2] += 1
    gold = np.zeros(n, dtype=np.int64)
    gold[0] = 1
    cuts: List[int] = []
    rooted = [i for i, b in enumerate(blocks) if b[2]]
    for i, b in enumerate(blocks):
        if i and (not rooted or i <= rooted[0] or i > rooted[-1]):
            gold[b[0]] = -1
    for left, right in zip(rooted[:-1], rooted[1:]):
        places = [blocks[i][0] for i in range(left + 1, right + 1)]
        cuts.append(next((p for p in places if starts[p] == 1), places[-1]))
        gold[places] = 1 if len(places) == 1 else -1
    return cuts, gold


def aligned_gold(eg: Example, projectivize: bool, tags: bool = False) -> Tuple[list, list, Optional[list]]:
    """``eg.get_aligned_parse(projectivize)`` (heads as predicted-doc indices or None, labels)
    and, with ``tags``, ``eg.get_aligned("TAG", as_string=True)``.

    When both docs have the same words and the reference a full parse (training on gold tokens,
    the usual case), they are read from ``to_array`` in one pass instead of spaCy's per-token
    loops over the reference, which took a fifth of a neural training step. Otherwise spaCy's
    own alignment does the work.
    """
    pred, ref = eg.predicted, eg.reference
    if _same_words(pred, ref) and len(ref) and ref.has_annotation("DEP"):
        rows = ref.to_array([HEAD, DEP, TAG])  # uint64: string hashes, and HEAD relative
        if (rows[:, 1] != 0).all():  # every token has its head and label: nothing is missing
            strings = ref.vocab.strings
            heads = (np.arange(len(ref)) + rows[:, 0].astype(np.int64)).tolist()  # -1 wraps back
            deps = [strings[d] for d in rows[:, 1].tolist()]
            if projectivize:
                heads, deps = nonproj.projectivize(heads, deps)
            tag_strings = [strings[t] if t else None for t in rows[:, 2].tolist()] if tags else None
            return list(heads), list(deps), tag_strings
    heads, deps = eg.get_aligned_parse(projectivize=projectivize)
    return list(heads), list(deps), (eg.get_aligned("TAG", as_string=True) if tags else None)


def aligned_tags(eg: Example, attr: str) -> List[Optional[str]]:
    """The reference's ``attr`` (``"POS"``, ``"TAG"``, ``"DEP"``, or a tag derived from the tree:
    ``"RELPOS"``, see ``relative_pos_tags``) per predicted token, None where unknown."""
    pred, ref = eg.predicted, eg.reference
    if attr == "RELPOS":
        return _aligned_values(eg, relative_pos_tags(ref))
    if _same_words(pred, ref):
        strings = ref.vocab.strings
        return [strings[v] if v else None for v in ref.to_array(attr).tolist()]
    return list(eg.get_aligned(attr, as_string=True))


def relative_pos_tags(doc: Doc, cap: int = 3) -> List[Optional[str]]:
    """Each token's head as a tag: the side of the head, how many words with the head's UPOS lie
    from the token to the head (the head included; at most ``cap``) and that UPOS, e.g. ``+1NOUN``
    (the next noun to the right), ``-2VERB``; ``ROOT`` for a root; None where the token has no
    label (no parse, or a partial one: its head is unknown) or the head's UPOS is unknown. The
    relative part-of-speech head encoding of sequence-labeling parsers (Strzyz et al. 2019), used
    here as a training signal for the encoder."""
    rows = doc.to_array([HEAD, POS, DEP])
    heads = np.arange(len(doc)) + rows[:, 0].astype(np.int64)
    pos, labelled = rows[:, 1], rows[:, 2] != 0
    strings = doc.vocab.strings
    out: List[Optional[str]] = []
    for i, h in enumerate(heads.tolist()):
        if not labelled[i]:
            out.append(None)
        elif h == i:
            out.append("ROOT")
        elif not pos[h]:
            out.append(None)
        else:
            between = pos[h + 1: i] if h < i else pos[i + 1: h]
            count = 1 + int((between == pos[h]).sum())
            out.append(f"{'+' if h > i else '-'}{min(count, cap)}{strings[pos[h]]}")
    return out


def _aligned_values(eg: Example, values: List[Optional[str]]) -> List[Optional[str]]:
    """Per predicted token the value of the one reference token it is aligned to one-to-one,
    None elsewhere (``values``: one per reference token)."""
    if _same_words(eg.predicted, eg.reference):
        return list(values)
    x2y, y2x = eg.alignment.x2y, eg.alignment.y2x
    out: List[Optional[str]] = []
    for i in range(len(eg.predicted)):
        targets = np.asarray(x2y[i]).tolist()
        one = len(targets) == 1 and len(np.asarray(y2x[targets[0]])) == 1
        out.append(values[targets[0]] if one else None)
    return out


def _same_words(pred: Doc, ref: Doc) -> bool:
    return len(pred) == len(ref) and bool((pred.to_array(ORTH) == ref.to_array(ORTH)).all())


def partial_span_tree(heads: np.ndarray, start: int, end: int, chunk: bool) -> Optional[np.ndarray]:
    """The span-local gold (n+1,) of tokens ``start..end-1`` from absolute heads (a token heading
    itself is a root; ``-1`` unknown): ``[-1, h_1 .. h_n]`` with the root's child at 0 and ``-1``
    where the head is unknown, or outside a ``chunk`` of a longer sentence; None when the known
    arcs cannot be part of one tree (a cycle, several roots, an arc leaving a whole sentence:
    defects of the gold itself)."""
    span_heads = heads[start:end]
    if not chunk and ((span_heads >= end) | ((span_heads >= 0) & (span_heads < start))).any():
        return None
    inside = (span_heads >= start) & (span_heads < end)
    local = np.full(end - start + 1, -1, dtype=np.int64)
    local[1:][inside] = span_heads[inside] - start + 1
    local[1:][span_heads == np.arange(start, end)] = 0
    if inside.all():
        return None if tree_problem(local) else local
    return None if partial_problem(local) else local


def partial_problem(local: np.ndarray) -> str:
    """Why the known arcs of span-local heads (``-1``: unknown) cannot be part of one tree (a
    cycle, more than one word on the root), or ``""``."""
    n_roots = int((local[1:] == 0).sum())
    if n_roots > 1:
        return f"expected at most one word attached to the root among the known heads, got {n_roots}"
    state = np.zeros(len(local), dtype=np.int8)  # 0 unseen, 1 on the current path, 2 done
    state[0] = 2
    for word in range(1, len(local)):
        path = []
        node = word
        while node > 0 and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = local[node]
        if node > 0 and state[node] == 1:
            return f"cycle through word {node} among the known heads"
        state[path] = 2
    return ""


def partially_annotated(eg: Example) -> bool:
    """Whether the reference has some heads and leaves others missing (not projectivized)."""
    ref = eg.reference
    return ref.has_annotation("DEP") and not ref.has_annotation("DEP", require_complete=True)
