"""The radix orders of small integer keys against numpy's stable argsort."""

from __future__ import annotations

import numpy as np
import pytest

import anondecomp
from anondecomp.sorting import stable_order


@pytest.mark.parametrize("n_keys", [1, 7, 1 << 16, (1 << 16) + 1, 903_000, 1 << 32, (1 << 40) + 3])
def test_stable_order_is_numpys_stable_argsort(n_keys):
    rng = np.random.default_rng(n_keys % 1000)
    for dtype in (np.int32, np.int64):
        if n_keys > np.iinfo(dtype).max:
            continue
        keys = rng.integers(0, n_keys, 5000, dtype=np.int64).astype(dtype)
        keys[:50] = keys[50:100]  # ties, which must keep their order
        order = stable_order(keys, n_keys)
        assert order.tolist() == np.argsort(keys, kind="stable").tolist()


def test_an_empty_key_list_has_an_empty_order():
    assert stable_order(np.empty(0, dtype=np.int64), 10).tolist() == []


def test_a_graphs_arm_order_lists_each_arms_edges_by_user_and_is_read_only():
    rng = np.random.default_rng(0)
    w = (rng.random((300, 70_000 // 1000)) < 0.2) * 1.0
    w[:, 0] = 1.0
    g = anondecomp.DemandGraph.from_weights(w)
    order = g.arm_order
    assert order.tolist() == np.argsort(g.edge_arms, kind="stable").tolist()
    assert g.arm_order is order  # computed once
    with pytest.raises(ValueError):
        order[0] = 1
