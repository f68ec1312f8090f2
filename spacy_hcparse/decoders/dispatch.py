"""One entry point over all decoders, for callers that pick the decoder by name (configs)."""
from typing import NamedTuple, Optional

import numpy as np

DECODERS = ("hill_climb", "dual", "mst", "eisner", "certified")


class DecodeResult(NamedTuple):
    """``heads`` (int64 (n+1,), index 0 the root) and what the search knows about it.

    ``certified`` is True when the tree is proven optimal (exact decoders: always; dual
    decomposition: when its subproblems agreed; certified decoding: when proven; hill climbing:
    never). ``upper_bound`` is NaN when the decoder gives none. ``restarts``: hill climbing's
    restarts, dual decomposition's iterations.
    """

    heads: np.ndarray
    score: float
    certified: bool
    upper_bound: float
    restarts: int
    time_capped: bool


def decode(
    name: str,
    arc: np.ndarray,
    sib: Optional[np.ndarray] = None,
    grand: Optional[np.ndarray] = None,
    *,
    seed: int = 0,
    time_limit: Optional[float] = None,
    init: Optional[np.ndarray] = None,
    **options,
) -> DecodeResult:
    """Decode with the decoder called ``name``; factors a decoder cannot use are ignored.

    ``mst`` uses ``arc`` only; ``eisner`` uses ``arc`` and ``sib`` (projective trees);
    ``hill_climb``, ``dual`` and ``certified`` use all three. ``init`` (a heads array) is hill
    climbing's first start tree (also within ``certified``); ``options`` go to the searching
    decoder (e.g. ``max_restarts``, ``max_iter``; for ``certified`` the keywords of
    ``decode_certified``, hill climbing's own under ``hill_climb_options``). ``-inf`` arcs are
    absent arcs for every decoder.
    """
    from .scoring import arc_part, tree_score

    if name == "hill_climb":
        from .hill_climb import decode_hill_climb

        res = decode_hill_climb(arc, sib, grand, seed=seed, time_limit=time_limit, init=init, **options)
        return DecodeResult(res.heads, res.score, False, float("nan"), res.restarts, res.time_capped)
    if name == "dual":
        from .dual import decode_dual

        res = decode_dual(arc, sib, grand, time_limit=time_limit, **options)
        return DecodeResult(
            res.heads, res.score, bool(res.certified), float(res.upper_bound), res.iterations, res.time_capped
        )
    if name == "certified":
        from .certified import decode_certified

        res = decode_certified(arc, sib, grand, seed=seed, time_limit=time_limit, init=init, **options)
        return DecodeResult(res.heads, res.score, res.certified, res.upper_bound, res.restarts, res.time_capped)
    if name == "mst":
        from .mst import decode_mst

        heads = decode_mst(arc)  # validates arc, so its tree is scored without a second check
        score = arc_part(heads, np.ascontiguousarray(arc, dtype=np.float64))
        return DecodeResult(heads, float(score), True, float("nan"), 0, False)
    if name == "eisner":
        from .eisner import decode_eisner

        heads = decode_eisner(arc, sib)
        return DecodeResult(heads, tree_score(heads, arc, sib), False, float("nan"), 0, False)
    raise ValueError(f"unknown decoder {name!r}; expected one of {DECODERS}")
