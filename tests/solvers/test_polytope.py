"""The C-anonymity polytope: H-representation and covering LP against brute-force vertex enumeration,
and Carathéodory invariants (Section 3.4.2: Lemma 4 and Carathéodory's theorem)."""

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from anondecomp import InvalidInputError, caratheodory, check_membership, membership


def vertices_of(support, C, S):
    """Every 0/1 point of P_C(S) inside ``support``: users on an arm of S (or none), S-columns >= C+1."""
    N, K = support.shape
    out = []
    for choice in itertools.product(*[[-1] + [j for j in range(K) if S[j] and support[i, j]] for i in range(N)]):
        v = np.zeros((N, K))
        for i, j in enumerate(choice):
            if j >= 0:
                v[i, j] = 1
        if (v.sum(axis=0)[S] >= C + 1).all():
            out.append(v.ravel())
    return np.array(out)


def brute_force(x, C, S):
    """(x in conv(vertices), max beta with beta*x dominated by a point of conv(vertices inside supp x))."""
    V_all = vertices_of(np.ones_like(x, bool), C, S)
    inside = False
    if len(V_all):
        res = linprog(
            np.zeros(len(V_all)),
            A_eq=np.vstack([V_all.T, np.ones(len(V_all))]),
            b_eq=np.concatenate([x.ravel(), [1]]),
            bounds=(0, None),
            method="highs",
        )
        inside = res.status == 0
    V = vertices_of(x > 0, C, S)
    if len(V) == 0:
        return inside, 0.0
    n = len(V)
    # max beta: V^T lam >= beta x, sum lam = 1
    c = np.concatenate([np.zeros(n), [-1.0]])
    A_ub = np.hstack([-V.T, x.ravel()[:, None]])
    res = linprog(
        c,
        A_ub=A_ub,
        b_ub=np.zeros(x.size),
        A_eq=np.concatenate([np.ones(n), [0]])[None, :],
        b_eq=[1],
        bounds=[(0, None)] * n + [(0, None)],
        method="highs",
    )
    return inside, np.inf if res.status == 3 else -res.fun


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 2), st.integers(0, 2**31), st.booleans())
def test_membership_matches_vertex_definition(N, K, C, seed, from_vertices):
    rng = np.random.default_rng(seed)
    S = rng.random(K) < 0.8
    if from_vertices:
        V = vertices_of(np.ones((N, K), bool), C, S)
        assume(len(V) > 0)
        lam = rng.dirichlet(np.ones(min(len(V), 4)))
        x = (lam[:, None] * V[rng.choice(len(V), len(lam), replace=False)]).sum(axis=0).reshape(N, K)
        x = x * rng.uniform(0.6, 1.2)
    else:
        x = rng.random((N, K)) * (rng.random((N, K)) < 0.7)
    inside, beta = brute_force(x, C, S)
    got = membership(x, C, S)
    assert got.member == inside, got.violated
    assert got.beta == pytest.approx(beta, abs=1e-7) if np.isfinite(beta) else got.beta == np.inf


def test_membership_names_the_failing_constraint():
    x = np.full((4, 2), 0.5)
    got = check_membership(x, C=2, S=[0, 1])
    assert not got.member
    assert got.violated == ("column sum of arm 0 is 2 < C+1 = 3", "column sum of arm 1 is 2 < C+1 = 3")
    assert "row sum of user 0" in check_membership(np.array([[0.7, 0.7]] * 4), 1).violated[0]


def random_point(rng, N, K, C):
    """A random point of P_C(S): a convex combination of random integral assignments."""
    S = np.ones(K, bool)
    pts = []
    for _ in range(rng.integers(1, 6)):
        while True:
            arms = rng.integers(-1, K, N)
            counts = np.bincount(arms[arms >= 0], minlength=K)
            if (counts >= C + 1).all():
                break
        v = np.zeros((N, K))
        v[np.flatnonzero(arms >= 0), arms[arms >= 0]] = 1
        pts.append(v)
    lam = rng.dirichlet(np.ones(len(pts)))
    return sum(lam_k * p for lam_k, p in zip(lam, pts, strict=True)), S


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 8), st.integers(1, 3), st.integers(1, 2), st.integers(0, 2**31))
def test_caratheodory_invariants(extra, K, C, seed):
    N = K * (C + 1) + extra  # P_C needs C+1 users on every arm
    x, S = random_point(np.random.default_rng(seed), N, K, C)
    res = caratheodory(x, C, S)
    assert len(res.weights) <= res.dimension + 1
    assert (res.weights > 0).all()
    assert res.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.abs(res.reconstruct(K) - x).max() < 1e-9
    for k in range(len(res.weights)):
        v = res.vertex_matrix(k, K)
        assert check_membership(v, C, S).member  # every vertex is an integral point of P_C(S)
        assert (v <= (x > 0)).all()  # and stays on x's support


def test_caratheodory_rejects_points_outside():
    with pytest.raises(InvalidInputError, match="column sum of arm 0"):
        caratheodory(np.full((3, 1), 0.5), C=1)
