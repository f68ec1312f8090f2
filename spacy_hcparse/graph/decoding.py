"""Decoders as configured objects: what ``hc_parser``'s ``decoder`` setting holds.

Each object wraps one pure decoder of ``spacy_hcparse.decoders`` with its options, and says
which higher-order factors it reads (``factors``), so the model scores only those. Calling it
with a span's scores returns a ``DecodeResult``. Registered in spaCy's ``misc`` registry, so a
config picks one and a trained pipeline can be given another at load time:

    [components.hc_parser.decoder]
    @misc = "spacy_hcparse.Eisner.v1"

    spacy.load(path, config={"components": {"hc_parser": {"decoder": {"@misc": "spacy_hcparse.Dual.v1"}}}})

Conventions as in ``spacy_hcparse.decoders``: ``arc[h, m]``, ``sib[h, s, m]``, ``grand[g, h, m]``,
index 0 the root; a cube is None when the span has no factors of that type (a first-order
span), and then every searching decoder falls back to the exact first-order MST.
"""
from typing import FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.util import registry

from ..compiling import clock
from ..decoders import (decode_certified, decode_dual, decode_eisner, decode_hill_climb, decode_mbr, decode_mst,
                        kbest_eisner, kbest_mst, mbr_gain, tree_score)
from ..decoders.batch import cut, decode_eisner_batch, split_squares
from ..decoders.batch_search import decode_mst_batch, hill_climb_batch
from ..decoders.scoring import arc_part
from .scores import GraphScores

NO_FACTORS: FrozenSet[str] = frozenset()
SIBLINGS: FrozenSet[str] = frozenset({"sib"})
ALL_FACTORS: FrozenSet[str] = frozenset({"sib", "grand"})


class DecodeResult(NamedTuple):
    """``heads`` (int64 (n+1,), index 0 the root) and what the search knows about it.

    ``certified`` is True when the tree is proven optimal (the exact first-order MST: always;
    dual decomposition: when its subproblems agreed; certified decoding: when proven; the others:
    never). ``upper_bound`` is NaN when the decoder gives none. ``restarts``: hill climbing's
    restarts or dual decomposition's iterations.
    """

    heads: np.ndarray
    score: float
    certified: bool
    upper_bound: float
    restarts: int
    time_capped: bool


class Decoder:
    """What every decoder object does beyond one span's tree (``__call__``): ``decode_batch`` and
    ``decode_spans``, one span at a time (a decoder with a batched kernel overrides them), and
    ``kbest``."""

    factors: FrozenSet[str] = NO_FACTORS

    def __call__(self, arc, sib=None, grand=None, *, start=None) -> DecodeResult:
        raise NotImplementedError

    def decode_batch(self, scores: GraphScores, arcs: np.ndarray, sizes: np.ndarray,
                     starts: Sequence[Optional[np.ndarray]], threads: int = 1) -> List[DecodeResult]:
        """The tree of every span of ``scores``: ``arcs`` the arc scores the decoder reads, span
        after span, ``sizes`` their ``n + 1`` (``graph_batch.span_arcs``); ``starts[i]``: a first
        start for span ``i``'s search (heads), or None; ``threads``: for a batched kernel."""
        return [self(arc, *scores.cubes(i, self.factors), start=starts[i])
                for i, arc in enumerate(split_squares(arcs, sizes))]

    def decode_spans(self, scores: GraphScores, spans: Sequence[int], arcs: np.ndarray, sizes: np.ndarray,
                     threads: int = 1) -> List[DecodeResult]:
        """The trees of ``spans`` (indices into ``scores``, whose cubes they read) on the arc scores
        ``arcs`` (theirs, end to end; ``sizes`` their ``n + 1``), without first starts: what the
        structured hinge decodes (``batch_hinge``). A batched kernel runs untimed (its restart caps
        bound the work); span by span, a search keeps its time limit."""
        return [self(arc, *scores.cubes(i, self.factors)) for i, arc in zip(spans, split_squares(arcs, sizes))]

    def kbest(self, arc: np.ndarray, sib: Optional[np.ndarray], k: int) -> Tuple[np.ndarray, np.ndarray]:
        """The k best trees of one span (``arc`` (n+1, n+1) as the decoder reads it, ``sib`` its
        sibling cube or None) and their scores, best first: here the k best spanning trees by arc
        score (no k-best algorithm handles the searches' grandparent factors)."""
        return kbest_mst(arc, k)


class MST(Decoder):
    """Exact first-order non-projective decoding (Chu-Liu-Edmonds, one root); reads arcs only.
    ``decode_spans`` in one compiled call."""

    def __call__(self, arc, sib=None, grand=None, *, start=None) -> DecodeResult:
        heads = decode_mst(arc)  # validates arc, so its tree is scored without a second check
        score = arc_part(heads, np.ascontiguousarray(arc, dtype=np.float64))
        return DecodeResult(heads, float(score), True, float("nan"), 0, False)

    def decode_spans(self, scores: GraphScores, spans: Sequence[int], arcs: np.ndarray, sizes: np.ndarray,
                     threads: int = 1) -> List[DecodeResult]:
        trees = cut(decode_mst_batch(arcs, sizes, threads=threads), sizes)
        return [DecodeResult(tree, float(arc_part(tree, arc)), True, float("nan"), 0, False)
                for tree, arc in zip(trees, split_squares(arcs, sizes))]


class Eisner(Decoder):
    """Exact projective decoding (Eisner), with sibling factors when the span has them; a batch
    in one compiled call."""

    factors = SIBLINGS

    def __call__(self, arc, sib=None, grand=None, *, start=None) -> DecodeResult:
        heads = decode_eisner(arc, sib)
        return DecodeResult(heads, tree_score(heads, arc, sib), False, float("nan"), 0, False)

    def decode_batch(self, scores: GraphScores, arcs: np.ndarray, sizes: np.ndarray,
                     starts: Sequence[Optional[np.ndarray]], threads: int = 1) -> List[DecodeResult]:
        return self.decode_spans(scores, range(len(sizes)), arcs, sizes, threads)

    def decode_spans(self, scores: GraphScores, spans: Sequence[int], arcs: np.ndarray, sizes: np.ndarray,
                     threads: int = 1) -> List[DecodeResult]:
        sib = scores.factors_of("sib", spans, self.factors)
        heads, tree_scores = decode_eisner_batch(arcs, sizes, sib.counts, sib.triples, sib.values, threads=threads)
        return [DecodeResult(tree, float(score), False, float("nan"), 0, False)
                for tree, score in zip(cut(heads, sizes), tree_scores)]

    def kbest(self, arc: np.ndarray, sib: Optional[np.ndarray], k: int) -> Tuple[np.ndarray, np.ndarray]:
        """The k best projective trees by arc and sibling score (k-best Eisner)."""
        return kbest_eisner(arc, k, sib)


class MBR(Decoder):
    """Minimum Bayes risk decoding (``decoders.decode_mbr``): the tree with the most expected
    correct heads under the arc marginals of the scores divided by ``temperature``
    (``projective``: arcs and siblings, inside-outside over the second-order chart, then Eisner
    over the marginals; else arcs only, the matrix-tree theorem, then the MST). ``score``: the
    tree's score under the factors it reads, as Eisner's and the MST's."""

    def __init__(self, projective: bool, temperature: float) -> None:
        if not temperature > 0:
            raise ValueError(f"MBR temperature must be positive, got {temperature}")
        self.projective = projective
        self.temperature = temperature
        self.factors = SIBLINGS if projective else NO_FACTORS

    def __call__(self, arc, sib=None, grand=None, *, start=None) -> DecodeResult:
        sib = sib if self.projective else None
        heads = decode_mbr(arc, self.projective, self.temperature, sib)
        return DecodeResult(heads, tree_score(heads, arc, sib), False, float("nan"), 0, False)

    def kbest(self, arc: np.ndarray, sib: Optional[np.ndarray], k: int) -> Tuple[np.ndarray, np.ndarray]:
        """The k best trees by expected correct heads (score: the gain), or the decoder's tree
        alone (score NaN) where no tree avoids the pruned arcs."""
        gain = mbr_gain(arc, self.projective, self.temperature, sib if self.projective else None)
        if gain is None:
            return self(arc).heads[None, :], np.array([float("nan")])
        return kbest_eisner(gain, k) if self.projective else kbest_mst(gain, k)


def _start_if_better(start, arc, sib, grand, mst=None):
    """``start`` (heads, e.g. an earlier parser's tree) when it scores higher than the first-order
    MST tree (``mst`` where the caller has it), else None: the searches then start from the MST
    tree themselves."""
    if start is None:
        return None
    mst = decode_mst(arc) if mst is None else mst
    return start if tree_score(start, arc, sib, grand) > tree_score(mst, arc, sib, grand) else None


class _Search(Decoder):
    """A search over arc, sibling and grandparent factors: ``options`` (``seed``, ``time_limit``
    in seconds per sentence, default ``DEFAULT_TIME_LIMIT``) go to its decoder function unchanged.
    A span without higher-order factors gets the exact first-order MST instead."""

    factors = ALL_FACTORS
    DEFAULT_TIME_LIMIT: Optional[float] = 0.5

    def __init__(self, **options) -> None:
        self.options = {"time_limit": self.DEFAULT_TIME_LIMIT, **options}

    def __call__(self, arc, sib=None, grand=None, *, start=None) -> DecodeResult:
        if sib is None and grand is None:
            return MST()(arc)
        return self.search(arc, sib, grand, start)

    def search(self, arc, sib, grand, start) -> DecodeResult:
        raise NotImplementedError


class HillClimb(_Search):
    """Randomized greedy hill climbing over arc, sibling and grandparent factors.

    The first start is the first-order MST tree, or ``start`` (e.g. an earlier parser's tree)
    when that scores higher; ``options`` go to ``decode_hill_climb``. A batch without starts
    searches its first span alone, within ``time_limit``, then the others in compiled calls of
    ``CHUNK`` spans (``decoders.batch_search``: the same trees, each search bounded by the restart
    caps) while its spans take under a tenth of ``time_limit`` on average, else one by one, each
    within ``time_limit``.
    """

    CHUNK = 64

    def decode_batch(self, scores: GraphScores, arcs: np.ndarray, sizes: np.ndarray,
                     starts: Sequence[Optional[np.ndarray]], threads: int = 1) -> List[DecodeResult]:
        if any(start is not None for start in starts):
            return super().decode_batch(scores, arcs, sizes, starts, threads)
        limit, began = self.options["time_limit"], clock()
        squares = np.concatenate([[0], np.cumsum(sizes * sizes)])
        one_by_one, batched = Decoder.decode_spans, HillClimb.decode_spans  # each within time_limit / untimed

        def part(decode, lo: int, hi: int) -> List[DecodeResult]:
            return decode(self, scores, range(lo, hi), arcs[squares[lo]: squares[hi]], sizes[lo:hi], threads)

        out = part(one_by_one, 0, 1)
        for lo in range(1, len(sizes), self.CHUNK):
            if limit is not None and clock() - began > 0.1 * limit * lo:
                return out + part(one_by_one, lo, len(sizes))
            out += part(batched, lo, min(lo + self.CHUNK, len(sizes)))
        return out

    def decode_spans(self, scores: GraphScores, spans: Sequence[int], arcs: np.ndarray, sizes: np.ndarray,
                     threads: int = 1) -> List[DecodeResult]:
        """In one compiled call (``batch_search.hill_climb_batch``; the restart caps bound its work)."""
        sib, grand = (scores.factors_of(kind, spans, self.factors) for kind in ("sib", "grand"))
        found = hill_climb_batch(arcs, sizes, *sib, *grand, threads=threads, **self.batch_options())
        return [DecodeResult(tree, float(score), not searched, float("nan"), int(restarts), False)
                for tree, score, restarts, searched in zip(cut(found.heads, sizes), found.scores, found.restarts,
                                                           found.searched)]

    def search(self, arc, sib, grand, start) -> DecodeResult:
        mst = decode_mst(arc)
        init = _start_if_better(start, arc, sib, grand, mst)
        res = decode_hill_climb(arc, sib, grand, init=mst if init is None else init, **self.options)
        return DecodeResult(res.heads, res.score, False, float("nan"), res.restarts, res.time_capped)

    def batch_options(self) -> dict:
        """The options ``decoders.batch_search.hill_climb_batch`` takes: all but the time
        limit (a batch runs in one compiled call; the restart caps bound its work)."""
        return {key: value for key, value in self.options.items() if key != "time_limit"}


class Dual(_Search):
    """Dual decomposition (head automata + spanning tree); certifies the trees it proves optimal;
    ``options`` go to ``decode_dual``."""

    def search(self, arc, sib, grand, start) -> DecodeResult:
        res = decode_dual(arc, sib, grand, **self.options)
        return DecodeResult(res.heads, res.score, bool(res.certified), float(res.upper_bound), res.iterations,
                            res.time_capped)


class Certified(_Search):
    """Hill climbing's tree, proven optimal (dominance pruning, exhaustive search over what
    survives, dual decomposition, branch and bound) or returned with an honest upper bound; see
    ``decode_certified``. The first start is the first-order MST tree, or ``start`` when that
    scores higher."""

    DEFAULT_TIME_LIMIT = 1.0

    def search(self, arc, sib, grand, start) -> DecodeResult:
        init = _start_if_better(start, arc, sib, grand)
        res = decode_certified(arc, sib, grand, init=init, **self.options)
        return DecodeResult(res.heads, res.score, bool(res.certified), float(res.upper_bound), res.restarts,
                            res.time_capped)


@registry.misc("spacy_hcparse.MST.v1")
def make_mst() -> MST:
    """Exact first-order MST decoding."""
    return MST()


@registry.misc("spacy_hcparse.Eisner.v1")
def make_eisner() -> Eisner:
    """Exact projective decoding with arc and sibling factors."""
    return Eisner()


@registry.misc("spacy_hcparse.MBR.v1")
def make_mbr(projective: bool = True, temperature: float = 1.0) -> MBR:
    """Minimum Bayes risk decoding over arc marginals (``projective``: Eisner over inside-outside
    marginals of the arc and sibling scores; false: the MST over matrix-tree marginals of the arc
    scores) at ``temperature``."""
    return MBR(projective, temperature)


@registry.misc("spacy_hcparse.HillClimb.v1")
def make_hill_climb(
    max_restarts: Optional[int] = 50,
    min_restarts: int = 5,
    converge: int = 3,
    uniform_share: float = 0.0,
    time_limit: Optional[float] = 0.5,
    seed: int = 0,
    pair_moves: bool = False,
    projective_start: bool = False,
) -> HillClimb:
    """Hill climbing over every factor; see ``decode_hill_climb`` for the options. ``time_limit``:
    seconds per sentence (None: no cap); ``seed``: the restarts' random seed; ``pair_moves`` and
    ``projective_start`` off by default, as v1 has always searched."""
    return HillClimb(seed=seed, time_limit=time_limit, max_restarts=max_restarts, min_restarts=min_restarts,
                     converge=converge, uniform_share=uniform_share, pair_moves=pair_moves,
                     projective_start=projective_start)


@registry.misc("spacy_hcparse.HillClimb.v2")
def make_hill_climb_v2(
    max_restarts: Optional[int] = None,
    min_restarts: int = 5,
    converge: int = 10,
    uniform_share: float = 0.5,
    temperature: float = 2.0,
    time_limit: Optional[float] = 0.5,
    seed: int = 0,
    pair_moves: bool = True,
    projective_start: bool = True,
) -> HillClimb:
    """Hill climbing with ``decode_hill_climb``'s defaults, tuned against proven optima on EWT
    dev (``benchmarks/decoders_real.py``; figures in docs/decoders.md). ``max_restarts`` None: a
    cap that shrinks as the sentence grows (``decoders.hill_climb.default_max_restarts``: about
    the same climbing work per sentence); the best projective tree as the second start unless
    ``projective_start`` is false; then pair moves from the best tree (``decoders.hill_climb``)
    unless ``pair_moves`` is false. Training turns both off (the hinge's cost-augmented trees:
    docs/decoders.md)."""
    return HillClimb(seed=seed, time_limit=time_limit, max_restarts=max_restarts, min_restarts=min_restarts,
                     converge=converge, uniform_share=uniform_share, temperature=temperature,
                     pair_moves=pair_moves, projective_start=projective_start)


@registry.misc("spacy_hcparse.Certified.v1")
def make_certified(
    max_iter: int = 200,
    max_nodes: int = 200,
    max_depth: int = 30,
    node_iter: int = 50,
    search_nodes: int = 300,
    time_limit: Optional[float] = 1.0,
    seed: int = 0,
) -> Certified:
    """Certified decoding over every factor (hill climbing with its default settings, then a
    proof; ``decode_certified``). ``time_limit``: seconds per sentence for all steps."""
    return Certified(seed=seed, time_limit=time_limit, max_iter=max_iter, max_nodes=max_nodes, max_depth=max_depth,
                     node_iter=node_iter, search_nodes=search_nodes)


@registry.misc("spacy_hcparse.Dual.v1")
def make_dual(max_iter: int = 200, time_limit: Optional[float] = 0.5, max_nodes: int = 200) -> Dual:
    """Dual decomposition over every factor; certifies optimal trees. ``max_iter``: subgradient
    iterations; ``max_nodes``: branch and bound subproblems for a sentence the iterations leave
    uncertified (0: none); ``time_limit``: seconds per sentence for both (None: no cap)."""
    return Dual(time_limit=time_limit, max_iter=max_iter, max_nodes=max_nodes)
