"""Tests for randomized hill climbing: exact optima against brute force for n <= 6, incremental move
gains against full rescoring, always a valid tree, determinism, ``init``, time cap, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spacy_hcparse.decoders import decode_certified, decode_eisner, tree_problem, tree_score
from spacy_hcparse.decoders.hill_climb import (
    _PAIR_HEADS,
    HillClimbResult,
    _after_move,
    _fill_tables,
    _fresh_below,
    _lift,
    _pair_move,
    _single_pass,
    _tables,
    _workspace,
    attach_part,
    chain_neighbours,
    climb,
    decode_hill_climb,
    default_max_restarts,
)

from .brute import all_trees, best_tree, random_scores
from .test_sampling import sample_uniform_tree


def _scores(rng, n, sib=True, grand=True):
    return random_scores(rng, n, sib, grand)


def _cubes(sib, grand):
    return (
        sib if sib is not None else np.zeros((1, 1, 1)),
        grand if grand is not None else np.zeros((1, 1, 1)),
        sib is not None,
        grand is not None,
    )


def _part(heads, m, h, arc, sib, grand):
    kids = np.array([c for c in range(1, len(heads)) if heads[c] == m] + [0], dtype=np.int64)
    s, t = chain_neighbours(heads, h, m)
    return attach_part(h, m, s, t, heads, arc, *_cubes(sib, grand), kids, len(kids) - 1, -1)


def _gain(heads, m, h, arc, sib, grand):
    """Gain of moving ``m`` to ``h``, from the kernel's own incremental pieces."""
    return _part(heads, m, h, arc, sib, grand) - _part(heads, m, heads[m], arc, sib, grand)


def _filled(heads, arc, sib, grand):
    size = len(heads)
    work, tables = _workspace(size), _tables(size)
    _fill_tables(heads, arc, *_cubes(sib, grand), work, tables)
    return work, tables


def _read_tables(heads, grand, work, tables):
    """The tables as the search reads them: stale ``below`` rows recomputed (``_fresh_below``)."""
    if grand is not None:
        for m in range(1, len(heads)):
            _fresh_below(m, heads, grand, work, tables)
    return tables


def _assert_tables_match(heads, work, tables, arc, sib, grand):
    """Every table entry equals the part computed from scratch (``attach_part``)."""
    n = len(heads) - 1
    use_grand = grand is not None
    tables = _read_tables(heads, grand, work, tables)
    for m in range(1, n + 1):
        for h in range(1, n + 1):
            if h == m:
                continue
            table = tables[0, m, h] + (tables[1, m, h] if use_grand else 0.0)
            assert table == pytest.approx(_part(heads, m, h, arc, sib, grand), abs=1e-9)


def _descendants(heads, m):
    out = set()
    for v in range(1, len(heads)):
        u = v
        while u > 0:
            if u == m:
                out.add(v)
                break
            u = heads[u]
    return out


def _instances(rng, trials, low, high, factors=(True, True)):
    """``trials`` random problems of ``low <= n < high`` words, each with a uniform start tree:
    ``(arc, sib, grand, heads)``."""
    for trial in range(trials):
        n = int(rng.integers(low, high))
        arc, sib, grand = _scores(rng, n, *factors)
        yield arc, sib, grand, sample_uniform_tree(n, seed=trial)


# ------------------------------------------------------------------ incremental gains


@pytest.mark.parametrize("factors", [(True, True), (True, False), (False, True), (False, False)])
def test_move_gain_matches_rescoring(factors):
    rng = np.random.default_rng(7)
    checked = 0
    for arc, sib, grand, heads in _instances(rng, 150, 2, 12, factors):
        n = len(heads) - 1
        m = int(rng.integers(1, n + 1))
        if heads[m] == 0:
            continue
        options = [h for h in range(1, n + 1) if h not in _descendants(heads, m)]
        h = int(rng.choice(options))
        after = heads.copy()
        after[m] = h
        assert tree_problem(after) == ""
        expected = tree_score(after, arc, sib, grand) - tree_score(heads, arc, sib, grand)
        assert _gain(heads, m, h, arc, sib, grand) == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked > 80


def test_gain_on_two_rooted_intermediate_matches_factor_sum():
    """The lift's first step leaves two root children; the gain formula must still hold there."""
    from .brute import reference_score

    rng = np.random.default_rng(3)
    for trial in range(60):
        n = int(rng.integers(3, 10))
        arc, sib, grand = _scores(rng, n)
        heads = sample_uniform_tree(n, seed=100 + trial)
        root = int(np.flatnonzero(heads == 0)[0])
        d = int(rng.choice([v for v in range(1, n + 1) if v != root]))
        after = heads.copy()
        after[d] = 0
        expected = reference_score(after, arc, sib, grand) - reference_score(heads, arc, sib, grand)
        assert _gain(heads, d, 0, arc, sib, grand) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("factors", [(True, True), (True, False), (False, True)])
def test_tables_follow_moves(factors):
    """The part tables equal fresh ``attach_part`` values after filling and after moves."""
    for heads, work, tables, arc, sib, grand in _moved_tables(13, factors, 12, 5):
        _assert_tables_match(heads, work, tables, arc, sib, grand)


@pytest.mark.parametrize("factors", [(True, True), (True, False), (False, True)])
def test_tables_after_moves_are_a_fresh_fill_bit_for_bit(factors):
    """Moves refresh only the entries they change (``_relink``) and rebuild columns from the kept
    sibling links: every entry the search reads is exactly what filling the tables anew for the
    tree gives (the search's decisions, and so its trees, depend on the tables' last bits)."""
    for heads, work, tables, arc, sib, grand in _moved_tables(17, factors, 14, 8):
        _assert_fresh_fill(heads, work, tables, arc, sib, grand)


def _assert_fresh_fill(heads, work, tables, arc, sib, grand):
    """Every table entry the search reads is bit for bit what filling the tables anew gives."""
    fresh = _read_tables(heads, grand, *_filled(heads, arc, sib, grand))
    _read_tables(heads, grand, work, tables)
    read = slice(1, len(heads))
    for table in (0, 1) if grand is not None else (0,):
        assert tables[table, read, read].tobytes() == fresh[table, read, read].tobytes()


def _moved_tables(seed: int, factors, max_n: int, moves: int):
    """25 random trees of 2 to ``max_n - 1`` words with their tables filled, then after each of up
    to ``moves`` random head changes (``_after_move``; the root child stays): the heads, tables and
    scores at every step."""
    rng = np.random.default_rng(seed)
    for arc, sib, grand, heads in _instances(rng, 25, 2, max_n, factors):
        n = len(heads) - 1
        work, tables = _filled(heads, arc, sib, grand)
        yield heads, work, tables, arc, sib, grand
        for _ in range(moves):
            m = int(rng.integers(1, n + 1))
            options = [h for h in range(1, n + 1) if h not in _descendants(heads, m)]
            if heads[m] == 0 or not options:
                continue
            old, new = int(heads[m]), int(rng.choice(options))
            heads[m] = new
            _after_move(m, old, new, heads, arc, *_cubes(sib, grand), work, tables)
            yield heads, work, tables, arc, sib, grand


def test_passes_and_lifts_never_lower_the_score():
    rng = np.random.default_rng(11)
    for arc, sib, grand, heads in _instances(rng, 40, 2, 15):
        work, tables = _filled(heads, arc, sib, grand)
        for step in (_single_pass, _lift):
            before = tree_score(heads, arc, sib, grand)
            moved = step(heads, arc, sib, grand, True, True, 1e-11, work, tables)
            assert tree_problem(heads) == ""
            after = tree_score(heads, arc, sib, grand)
            assert after >= before - 1e-9
            if moved:
                assert after > before
            _assert_tables_match(heads, work, tables, arc, sib, grand)  # kept up to date
            _assert_fresh_fill(heads, work, tables, arc, sib, grand)


def _moved(heads, m, h):
    """``heads`` with ``m`` under ``h``, or None where that is no single-root tree."""
    tree = heads.copy()
    tree[m] = h
    return tree if h not in (0, m, heads[m]) and h not in _descendants(heads, m) else None


def _best_pair_gain(heads, arc, sib, grand):
    """By rescoring: the best gain of a word ``a`` (not the root child) moved to one of its
    ``_PAIR_HEADS`` best heads, then another word (not the root child) to any valid head."""
    score = tree_score(heads, arc, sib, grand)
    best = -np.inf
    for a in range(1, len(heads)):
        if heads[a] == 0:
            continue
        firsts = [tree for tree in (_moved(heads, a, h) for h in range(1, len(heads))) if tree is not None]
        firsts.sort(key=lambda tree: -tree_score(tree, arc, sib, grand))
        for first in firsts[:_PAIR_HEADS]:
            for b in range(1, len(heads)):
                for h in range(1, len(heads)):
                    second = _moved(first, b, h) if b != a and first[b] != 0 else None
                    if second is not None:
                        best = max(best, tree_score(second, arc, sib, grand) - score)
    return best


@pytest.mark.parametrize("factors", [(True, True), (True, False), (False, True), (False, False)])
def test_pair_move_is_the_best_pair_of_a_local_optimum(factors):
    """On a local optimum of passes and lifts, ``_pair_move`` applies the best pair as rescoring
    every pair finds it (its first word to one of its ``_PAIR_HEADS`` best heads), and moves
    nothing when none improves."""
    rng = np.random.default_rng(5)
    improvable = 0
    for arc, sib, grand, heads in _instances(rng, 200, 3, 9, factors):
        climb(heads, arc, *_cubes(sib, grand), 1e-11, _workspace(len(heads)), _tables(len(heads)))
        best = _best_pair_gain(heads, arc, sib, grand)
        work, tables = _filled(heads, arc, sib, grand)
        moved = heads.copy()
        assert _pair_move(moved, arc, *_cubes(sib, grand), 1e-11, work, tables) == (best > 1e-9)
        if best > 1e-9:
            improvable += 1
            assert tree_problem(moved) == "" and (moved != heads).sum() == 2
            gain = tree_score(moved, arc, sib, grand) - tree_score(heads, arc, sib, grand)
            assert gain == pytest.approx(best, abs=1e-9)
    assert improvable >= (5 if any(factors) else 0)  # first-order optima rarely have one


def test_brute_force_enumerates_the_empty_tree():
    assert all_trees(0).tolist() == [[-1]]
    assert len(all_trees(1)) == 1 and len(all_trees(4)) == 64


# ------------------------------------------------------------------ exactness vs brute force


def _optimal_rate(instances, **factors):
    rng = np.random.default_rng(2024)
    hits = 0
    for i, n in enumerate(instances):
        arc, sib, grand = _scores(rng, n, **factors)
        best, _ = best_tree(n, arc, sib, grand)
        result = decode_hill_climb(arc, sib, grand, seed=i)
        assert result.score <= best + 1e-9
        hits += result.score >= best - 1e-9
    return hits / len(instances)


def test_second_order_finds_the_optimum_almost_always():
    instances = [n for n in range(2, 7) for _ in range(60)]  # 300 instances
    assert _optimal_rate(instances, sib=True, grand=True) >= 0.97


def test_first_order_finds_the_optimum():
    instances = [n for n in range(2, 7) for _ in range(40)]
    assert _optimal_rate(instances, sib=False, grand=False) >= 0.99


def test_hand_made_chain_is_found():
    n = 5
    arc = np.full((n + 1, n + 1), -5.0)
    gold = np.array([-1, 0, 1, 2, 3, 4])
    for m in range(1, n + 1):
        arc[gold[m], m] = 5.0
    result = decode_hill_climb(arc)
    assert result.heads.tolist() == gold.tolist()
    assert result.score == pytest.approx(25.0)


# ------------------------------------------------------------------ contract


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(0, 60),
    with_sib=st.booleans(),
    with_grand=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_always_a_valid_tree_with_its_true_score(n, with_sib, with_grand, seed):
    rng = np.random.default_rng(seed)
    arc, sib, grand = _scores(rng, n, with_sib, with_grand)
    result = decode_hill_climb(arc, sib, grand, seed=seed, max_restarts=3, min_restarts=1)
    assert isinstance(result, HillClimbResult)
    assert result.heads.dtype == np.int64 and result.heads.shape == (n + 1,)
    assert tree_problem(result.heads) == ""
    assert abs(result.score - tree_score(result.heads, arc, sib, grand)) <= 1e-9
    if n >= 2:
        assert 1 <= result.hits <= result.restarts <= 3


def test_deterministic_for_a_seed_and_time_limit_does_not_change_it():
    rng = np.random.default_rng(5)
    arc, sib, grand = _scores(rng, 20)
    first = decode_hill_climb(arc, sib, grand, seed=42)
    again = decode_hill_climb(arc, sib, grand, seed=42)
    chunked = decode_hill_climb(arc, sib, grand, seed=42, time_limit=60.0)
    for other in (again, chunked):
        assert other.heads.tolist() == first.heads.tolist()
        assert other.score == first.score
        assert (other.restarts, other.hits) == (first.restarts, first.hits)
    assert not chunked.time_capped


def _polished(heads, arc, sib, grand):
    """``heads`` climbed, then pair moves each followed by a climb until none improves (as the
    search ends)."""
    while True:
        climb(heads, arc, sib, grand, True, True, 1e-11, _workspace(len(heads)), _tables(len(heads)))
        work, tables = _filled(heads, arc, sib, grand)
        if not _pair_move(heads, arc, sib, grand, True, True, 1e-11, work, tables):
            return heads


def test_init_is_climbed_first():
    rng = np.random.default_rng(9)
    for trial in range(10):
        n = 15
        arc, sib, grand = _scores(rng, n)
        init = sample_uniform_tree(n, seed=trial)
        local = _polished(init.copy(), arc, sib, grand)
        only_init = decode_hill_climb(arc, sib, grand, init=init, max_restarts=1, min_restarts=1)
        assert only_init.heads.tolist() == local.tolist()
        full = decode_hill_climb(arc, sib, grand, init=init, seed=trial)
        assert full.score >= tree_score(local, arc, sib, grand) - 1e-9


def test_tiny_sentences():
    assert decode_hill_climb(np.zeros((1, 1))).heads.tolist() == [-1]
    arc = np.array([[0.0, 2.0], [0.0, 0.0]])
    sib = np.ones((2, 2, 2))
    result = decode_hill_climb(arc, sib)
    assert result.heads.tolist() == [-1, 0]
    assert result.score == pytest.approx(3.0)  # arc[0, 1] + sib[0, 0, 1]


def test_unused_arc_entries_may_be_anything():
    rng = np.random.default_rng(1)
    arc, sib, grand = _scores(rng, 6)
    noisy = arc.copy()
    noisy[:, 0] = np.inf
    np.fill_diagonal(noisy, np.nan)
    assert decode_hill_climb(noisy, sib, grand).score == decode_hill_climb(arc, sib, grand).score


def test_time_limit_caps_a_long_search():
    rng = np.random.default_rng(0)
    n = 150
    arc, sib, grand = _scores(rng, n)
    result = decode_hill_climb(arc, sib, grand, time_limit=1e-4, max_restarts=1000, converge=1000)
    assert result.time_capped
    assert 1 <= result.restarts < 1000
    assert tree_problem(result.heads) == ""
    assert result.score == pytest.approx(tree_score(result.heads, arc, sib, grand), abs=1e-9)


def test_restart_cap_shrinks_with_length():
    assert default_max_restarts(3) == 100
    assert default_max_restarts(10) == 40
    assert default_max_restarts(25) == 30
    assert default_max_restarts(1000) == 30


@pytest.mark.parametrize("seed", [30, 132])
def test_pair_moves_reach_the_proven_optimum_that_restarts_miss(seed):
    """Rugged 16-word sentences: the default cap's restarts alone (``pair_moves=False``, no
    projective start) stop below the optimum that certified decoding proves; pair moves from their
    best tree reach it, with or without a time limit."""
    rng = np.random.default_rng(seed)
    n = 16
    arc = rng.normal(scale=3.0, size=(n + 1, n + 1))
    sib, grand = rng.normal(size=(n + 1,) * 3), rng.normal(size=(n + 1,) * 3)
    proven = decode_certified(arc, sib, grand, time_limit=None)
    assert proven.certified
    alone = decode_hill_climb(arc, sib, grand, pair_moves=False, projective_start=False)
    assert alone.score < proven.score - 1e-6
    for time_limit in (None, 10.0):
        found = decode_hill_climb(arc, sib, grand, time_limit=time_limit, projective_start=False)
        assert found.score == pytest.approx(proven.score, abs=1e-9)
        assert found.restarts == alone.restarts  # the same restarts, then the pairs
        assert tree_problem(found.heads) == ""


@pytest.mark.parametrize("factors", [(True, True), (True, False), (False, True)])
def test_projective_start_is_climbed(factors):
    """With ``projective_start`` the search climbs the best projective tree under the arcs and
    siblings: it never ends below that tree's score under every factor, even when the restart cap
    leaves room for no other start than ``init`` and that one; where that tree is the optimum
    (arcs and siblings only, a projective optimum), the search returns it."""
    rng = np.random.default_rng(11)
    below = 0
    for arc, sib, grand, heads in _instances(rng, 200, 3, 7, factors):
        projective = decode_eisner(arc, sib)
        target = tree_score(projective, arc, sib, grand)
        found = decode_hill_climb(arc, sib, grand, init=heads, max_restarts=2, min_restarts=1, pair_moves=False)
        assert found.score >= target - 1e-9
        assert tree_problem(found.heads) == ""
        alone = decode_hill_climb(arc, sib, grand, init=heads, max_restarts=2, min_restarts=1,
                                  pair_moves=False, projective_start=False)
        below += alone.score < target - 1e-9
        if grand is None:
            optimum = best_tree(len(heads) - 1, arc, sib)[0]
            if optimum <= target + 1e-9:
                assert found.score == pytest.approx(optimum, abs=1e-9)
    assert below > 0  # the start matters: without it the capped search ends below that tree


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"arc": np.zeros((3, 2))}, "square"),
        ({"arc": np.full((3, 3), np.nan)}, "NaN"),
        ({"sib": np.zeros((2, 2, 2))}, "sib must have shape"),
        ({"init": [-1, 0, 0]}, "heads is not a valid tree"),
        ({"init": [-1, 0]}, "heads must have shape"),
        ({"max_restarts": 0}, "max_restarts"),
        ({"min_restarts": 5, "max_restarts": 2}, "exceeds"),
        ({"converge": 1.5}, "converge"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"uniform_share": 1.5}, "uniform_share"),
        ({"temperature": 0.0}, "temperature"),
    ],
)
def test_bad_input_raises_value_error(kwargs, message):
    args = {"arc": np.zeros((3, 3))}
    args.update(kwargs)
    arc = args.pop("arc")
    sib = args.pop("sib", None)
    with pytest.raises(ValueError, match=message):
        decode_hill_climb(arc, sib, **args)
