"""Feature templates over arc-standard configurations, hashed into bucket offsets.

Each word of a span has a row of ``N_ATTRS`` int64 attribute hashes (``token_attrs``): lowercase
form, a tag (the tagger's ``TAG`` when the doc has one, otherwise a hash of spaCy's ``SHAPE`` and
``SUFFIX`` as a part-of-speech stand-in), suffix, prefix and shape; row 0 is the root. A
configuration fills a context vector of ``N_VALUES`` int64 values (``fill_context``): the
attributes, arc label and valencies of ``N_SLOTS`` positions (s0, s1, s2, q0, q1, q2 and the two
outermost dependents on each side of s0 and s1) plus the s0-s1 distance. A template is a
conjunction of up to three values; ``hash_features`` mixes the template id with its values and
masks the result into ``[0, n_buckets)``. Scores read the ``n_classes`` weights starting at each
bucket (see ``layers.sparse_linear``), so no per-feature Python objects exist anywhere.

Templates follow Zhang & Nivre (2011) with the tag stand-in: single positions, s0/s1/q0 pairs,
tag triples, distance, valency and label sets (``ZHANG_NIVRE``).
"""
from typing import Dict, List, Sequence

import numpy as np

from ..compiling import njit
from .state import BUF, LABEL, LC1, LC2, META, N, NL, NR, RC1, RC2, SP, STACK

# word attributes
W, T, SUF, PRE, SHAPE = range(5)
N_ATTRS = 5
# per slot: the attributes, then the arc label and the left/right valency
L, VL, VR = N_ATTRS, N_ATTRS + 1, N_ATTRS + 2
N_FIELDS = N_ATTRS + 3
SLOTS = ("s0", "s1", "s2", "q0", "q1", "q2", "s0l1", "s0l2", "s0r1", "s0r2", "s1l1", "s1l2", "s1r1", "s1r2")
N_SLOTS = len(SLOTS)
DIST = N_SLOTS * N_FIELDS
N_VALUES = DIST + 1
FIELDS = {"w": W, "t": T, "suf": SUF, "pre": PRE, "shape": SHAPE, "l": L, "vl": VL, "vr": VR}
ABSENT = 1  # value of every field of an empty slot
ROOT_VALUE = 2  # attribute values of the root (row 0)
MAX_TERMS = 3


ZHANG_NIVRE = [
    # single positions
    "s0.w", "s0.t", "s0.w+s0.t", "s0.suf", "s0.pre",
    "s1.w", "s1.t", "s1.w+s1.t", "s1.suf",
    "s2.w", "s2.t",
    "q0.w", "q0.t", "q0.w+q0.t", "q0.suf", "q0.pre",
    "q1.w", "q1.t", "q1.w+q1.t",
    "q2.w", "q2.t",
    # dependents of s0 and s1
    "s0l1.w", "s0l1.t", "s0l1.l", "s0r1.w", "s0r1.t", "s0r1.l",
    "s1l1.w", "s1l1.t", "s1l1.l", "s1r1.w", "s1r1.t", "s1r1.l",
    "s0l2.t", "s0l2.l", "s0r2.t", "s0r2.l", "s1l2.t", "s1l2.l", "s1r2.t", "s1r2.l",
    # pairs
    "s0.w+s0.t+s1.w", "s0.w+s1.w+s1.t", "s0.w+s0.t+s1.t", "s0.t+s1.w+s1.t",
    "s0.w+s1.w", "s0.t+s1.t", "s0.t+q0.t", "s0.w+q0.w", "s0.w+q0.t", "s0.t+q0.w",
    "s1.t+q0.t", "s1.w+q0.w", "s0.suf+s1.suf", "s0.shape+s1.shape",
    # triples
    "s0.t+q0.t+q1.t", "s1.t+s0.t+q0.t", "s2.t+s1.t+s0.t", "q0.t+q1.t+q2.t",
    "s1.t+s0.t+s0l1.t", "s1.t+s0.t+s0r1.t", "s1.t+s1l1.t+s0.t", "s1.t+s1r1.t+s0.t",
    "s0.t+s0l1.t+s0l2.t", "s0.t+s0r1.t+s0r2.t", "s1.t+s1l1.t+s1l2.t", "s1.t+s1r1.t+s1r2.t",
    "s1.w+s0.t+q0.t", "s1.t+s0.w+q0.t", "s1.t+s0.t+q0.w",
    "s1.t+s0.t+s0l1.l", "s1.t+s0.t+s0r1.l", "s1.t+s1r1.l+s0.t", "s1.t+s1l1.l+s0.t",
    # distance
    "s0.w+d", "s0.t+d", "s1.w+d", "s1.t+d", "s0.w+s1.w+d", "s0.t+s1.t+d",
    # valency
    "s0.w+s0.vl", "s0.t+s0.vl", "s0.w+s0.vr", "s0.t+s0.vr",
    "s1.w+s1.vl", "s1.t+s1.vl", "s1.w+s1.vr", "s1.t+s1.vr",
    # label sets
    "s0.t+s0l1.l+s0l2.l", "s0.t+s0r1.l+s0r2.l", "s1.t+s1l1.l+s1l2.l", "s1.t+s1r1.l+s1r2.l",
]
TEMPLATE_SETS: Dict[str, List[str]] = {"zhang_nivre": ZHANG_NIVRE}


def value_index(term: str) -> int:
    """Context index of a term such as ``s0.w``, ``s1l1.l`` or ``d``."""
    if term == "d":
        return DIST
    slot, _, field = term.partition(".")
    if slot not in SLOTS or field not in FIELDS:
        raise ValueError(f"unknown feature term {term!r}")
    return SLOTS.index(slot) * N_FIELDS + FIELDS[field]


def compile_templates(templates: Sequence[str]) -> np.ndarray:
    """``(n_templates, MAX_TERMS)`` int64 context indices, ``-1`` padding."""
    out = np.full((len(templates), MAX_TERMS), -1, dtype=np.int64)
    for i, spec in enumerate(templates):
        terms = spec.split("+")
        if not 1 <= len(terms) <= MAX_TERMS:
            raise ValueError(f"template {spec!r} must have 1 to {MAX_TERMS} terms")
        out[i, : len(terms)] = [value_index(t) for t in terms]
    return out


def get_templates(name: str) -> np.ndarray:
    if name not in TEMPLATE_SETS:
        raise ValueError(f"unknown template set {name!r}; expected one of {sorted(TEMPLATE_SETS)}")
    return compile_templates(TEMPLATE_SETS[name])


@njit(cache=True)
def mix(h: np.int64, v: np.int64) -> np.int64:
    """One step of a 64-bit multiplicative hash (wrapping int64 arithmetic)."""
    h = (h ^ v) * np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15
    return h ^ (h >> np.int64(29))


@njit(cache=True)
def token_attrs(arr: np.ndarray, use_tag: bool) -> np.ndarray:
    """Rows of word attributes from ``doc.to_array([LOWER, SUFFIX, PREFIX, SHAPE, TAG])`` (as
    int64) for a span, with the root row prepended."""
    n = arr.shape[0]
    out = np.empty((n + 1, N_ATTRS), dtype=np.int64)
    out[0, :] = ROOT_VALUE
    for i in range(n):
        out[i + 1, W] = arr[i, 0]
        out[i + 1, SUF] = arr[i, 1]
        out[i + 1, PRE] = arr[i, 2]
        out[i + 1, SHAPE] = arr[i, 3]
        out[i + 1, T] = arr[i, 4] if use_tag else mix(arr[i, 3], arr[i, 1])
    return out


@njit(cache=True)
def _fill_slot(ctx, slot, word, st, attrs):
    base = slot * N_FIELDS
    if word < 0:
        for f in range(N_FIELDS):
            ctx[base + f] = ABSENT
        return
    for f in range(N_ATTRS):
        ctx[base + f] = attrs[word, f]
    ctx[base + L] = st[LABEL, word] + 16
    ctx[base + VL] = min(st[NL, word], 8) + 16
    ctx[base + VR] = min(st[NR, word], 8) + 16


@njit(cache=True)
def fill_context(st: np.ndarray, attrs: np.ndarray, ctx: np.ndarray) -> None:
    """The ``N_VALUES`` context values of configuration ``st`` (see module docstring)."""
    sp = st[META, SP]
    s0 = st[STACK, sp - 1] if sp >= 1 else -1
    s1 = st[STACK, sp - 2] if sp >= 2 else -1
    s2 = st[STACK, sp - 3] if sp >= 3 else -1
    b = st[META, BUF]
    n = st[META, N]
    q0 = b if b <= n else -1
    q1 = b + 1 if b + 1 <= n else -1
    q2 = b + 2 if b + 2 <= n else -1
    _fill_slot(ctx, 0, s0, st, attrs)
    _fill_slot(ctx, 1, s1, st, attrs)
    _fill_slot(ctx, 2, s2, st, attrs)
    _fill_slot(ctx, 3, q0, st, attrs)
    _fill_slot(ctx, 4, q1, st, attrs)
    _fill_slot(ctx, 5, q2, st, attrs)
    slot = 6
    for head in (s0, s1):
        for row in (LC1, LC2, RC1, RC2):
            child = st[row, head] if head >= 0 else -1
            _fill_slot(ctx, slot, child, st, attrs)
            slot += 1
    if s0 >= 0 and s1 >= 0:
        d = s0 - s1
        ctx[DIST] = 16 + (d if d < 5 else (5 if d < 10 else 6))
    else:
        ctx[DIST] = ABSENT


@njit(cache=True)
def hash_features(
    ctx: np.ndarray, templates: np.ndarray, mask: np.int64, out: np.ndarray, offset: int = 1, salt: int = 0x5BD1E995
) -> None:
    """Bucket of every template: ``out[k] = hash(k + offset, salt, values...) & mask``."""
    for k in range(templates.shape[0]):
        h = mix(np.int64(k + offset), np.int64(salt))
        for j in range(templates.shape[1]):
            idx = templates[k, j]
            if idx < 0:
                break
            h = mix(h, ctx[idx])
        out[k] = h & mask


@njit(cache=True)
def slot_words(st: np.ndarray, out: np.ndarray) -> None:
    """The word index of each of the ``N_SLOTS`` positions (``-1`` if empty); used by the
    neural scorer to gather token vectors."""
    sp = st[META, SP]
    b = st[META, BUF]
    n = st[META, N]
    for depth in range(3):
        out[depth] = st[STACK, sp - 1 - depth] if sp > depth else -1
        out[3 + depth] = b + depth if b + depth <= n else -1
    slot = 6
    for head in (out[0], out[1]):
        for row in (LC1, LC2, RC1, RC2):
            out[slot] = st[row, head] if head >= 0 else -1
            slot += 1
