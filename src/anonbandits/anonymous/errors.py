"""Errors specific to the anonymous-bandit algorithms."""

from __future__ import annotations

from anonbandits.errors import AnonBanditsError


class NotUBatchedError(AnonBanditsError):
    """A batch's graph (D_b, A_{.,b}) of Algorithm 1 is not U-batched: some arm lost its support.

    Paper 000 Algorithm 1 aborts here (a user's optimal arm was eliminated, a low-probability event);
    ``arms`` lists the arms that cannot receive U users, ``batch`` the 1-based batch number.
    """

    def __init__(self, message: str, arms=(), batch: int = 0) -> None:
        super().__init__(message)
        self.arms = tuple(int(a) for a in arms)
        self.batch = batch
