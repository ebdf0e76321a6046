"""Method options (validated always, warned about when the method ignores them) and exact counting."""

import warnings

import numpy as np
import pytest

import anondecomp
from anondecomp import AnonDecompWarning, DemandGraph, InvalidInputError, decompose, verify
from anondecomp.decompose import RANDOMNESS
from anondecomp.graph import MAX_DEMAND, exact_sum
from anondecomp.result import compress
from anondecomp.validation import prepare

GRAPH = DemandGraph.from_batched(6, np.ones((4, 2), bool))


@pytest.mark.parametrize(
    "method, options",
    [
        ("greedy", {"time_limit": -5}),
        ("greedy", {"vertices": "bogus"}),
        ("randomized", {"vertices": "bogus"}),
        ("polytope", {"time_limit": float("nan")}),
        ("block", {"time_limit": float("inf")}),
        ("optimal", {"seed": -1}),
        ("auto", {"seed": 1.5}),
        ("auto", {"rng": 3}),
        ("greedy", {"speed": "fast"}),
    ],
)
def test_invalid_or_unknown_options_are_refused_whatever_the_method(method, options):
    with pytest.raises(InvalidInputError, match=next(iter(options))):
        decompose(GRAPH, 1, method, **options)


@pytest.mark.parametrize("method", anondecomp.METHODS)
def test_an_option_the_method_ignores_warns_and_one_it_reads_does_not(method):
    info = anondecomp.method_info(method)
    for option, value in {"seed": 3, "vertices": "schedule", "time_limit": 30.0}.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = decompose(GRAPH, 1, method, **{option: value})
        assert verify(GRAPH, 1, res).valid
        ignored = [w for w in caught if issubclass(w.category, AnonDecompWarning)]
        assert bool(ignored) == (option not in info.options | RANDOMNESS), (method, option, ignored)
        if ignored:
            assert f"does not use option {option!r}" in str(ignored[0].message)


def test_every_method_of_the_table_names_its_function_and_options():
    assert set(anondecomp.METHODS) == {
        "auto",
        "greedy",
        "block",
        "polytope",
        "randomized",
        "slack",
        "sessions",
        "optimal",
    }
    assert {m for m in anondecomp.METHODS if anondecomp.method_info(m).dense} == {"optimal"}
    assert anondecomp.method_info("greedy").options == frozenset()
    assert anondecomp.method_info("optimal").options >= {"time_limit", "vertices", "rng", "seed"}
    with pytest.raises(InvalidInputError, match="unknown method 'simplex'"):
        anondecomp.method_info("simplex")


def test_improve_is_a_bool_read_by_auto_and_accepted_silently_by_the_others(recwarn):
    g = DemandGraph.from_weights(np.array([[2, 1], [1, 2], [2, 1], [1, 2]], float))
    assert decompose(g, 1, "greedy", improve=False).method == "greedy" and not recwarn.list
    for bad in ("no", 0, 1.0):
        with pytest.raises(InvalidInputError, match="improve must be True or False"):
            decompose(g, 1, improve=bad)


def test_seed_and_rng_fix_the_randomized_draws():
    g = DemandGraph.from_batched(5, np.ones((6, 3), bool))
    a = decompose(g, 1, "randomized", seed=4)
    b = decompose(g, 1, "randomized", rng=np.random.default_rng(4))
    np.testing.assert_array_equal(a.assignments, b.assignments)
    np.testing.assert_array_equal(a.multiplicities, b.multiplicities)


def test_prepare_refuses_a_bad_c_and_names_thin_arms():
    with pytest.raises(InvalidInputError, match="C must be an integer >= 1"):
        prepare(GRAPH, 0, False)
    with pytest.raises(anondecomp.InfeasibleError, match="use best_effort"):
        prepare(GRAPH, 4, False)
    assert prepare(GRAPH, 4, True).uncovered.shape == (8, 2)


def test_exact_sum_switches_to_python_integers_before_int64_overflows():
    assert exact_sum(np.array([2**62, 2**62], dtype=np.int64)) == 2**63
    assert exact_sum(np.array([3, 4])) == 7
    rows = exact_sum(np.full((2, 3), 2**62, dtype=np.int64), axis=1)
    assert list(rows) == [3 * 2**62] * 2


def test_verify_counts_exactly_beyond_float64_and_int64():
    g = DemandGraph.from_batched(MAX_DEMAND, np.ones((3, 1), bool))
    one = np.zeros((1, 3), int)
    # 2^53 - 1 is short of 2^53; summed as floats with a 2^53 partial sum the difference would vanish
    short = verify(g, 2, np.zeros((2, 3), int), np.array([MAX_DEMAND - 2, 1]))
    assert not short.valid and short.deficits[0][2:] == (MAX_DEMAND, MAX_DEMAND - 1)
    huge = verify(g, 2, np.zeros((2, 3), int), np.array([10**30, 10**30 + 1], dtype=object))
    assert huge.valid and huge.total_assignments == 2 * 10**30 + 1
    beyond = verify(g, 2, one, np.array([10**400], dtype=object))
    assert beyond.valid and beyond.ratio == float("inf")
    with pytest.raises(InvalidInputError, match="multiplicities"):
        verify(g, 2, one, np.array([1.5], dtype=object))


def test_demands_above_the_limit_are_refused_with_the_limit():
    with pytest.raises(InvalidInputError, match=r"limit is 2\^53"):
        DemandGraph.from_batched(MAX_DEMAND + 4, np.ones((3, 1), bool))
    with pytest.raises(InvalidInputError, match=r"limit is 2\^53"):
        DemandGraph.from_batched(10**400, np.ones((3, 1), bool))
    with pytest.raises(InvalidInputError, match=r"at most 2\^53"):
        DemandGraph.from_weights([[1e19], [1.0]])
    with pytest.raises(InvalidInputError, match=r"user 'u0' asks for .* the limit is 2\^53"):
        DemandGraph.from_weights([[MAX_DEMAND, 1.0], [1.0, 1.0]])


def test_compress_adds_multiplicities_exactly():
    a = np.zeros((2, 3), dtype=np.int8)
    _, m = compress(a, np.array([2**53, 1], dtype=np.int64))
    assert m.tolist() == [2**53 + 1]
