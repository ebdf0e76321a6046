"""The protocols P = (R, S, A) that plug into Algorithm 1 of paper 004 (Chowdhury and Zhou, "Distributed
Differential Privacy in Multi-Armed Bandits", ICLR 2023, Sec. 3), one class per trust model / noise.

Every protocol fixes, for a batch of ``n`` users, the precision ``g``, accuracy ``tau`` and modulus
``m = n g + 2 tau + 1`` (:class:`BatchParams`), the per-user noise of the local randomizer R, the constants
``(sigma, h)`` of the noise tail (Assumption 1) that enter the confidence radius ``beta(b)`` (Lemma 2), and
its privacy guarantee. A batch's release is simulated two ways, which agree in distribution:
:meth:`Protocol.release_users` is faithful (every user encodes her reward, adds her own noise, reduces mod m;
the messages go through SecAgg, ideal or simulated, before the analyzer); :meth:`Protocol.release_sums` draws
the *aggregate* noise of the ``n`` users in one call from its exact law (``aggregate_noise``: Fact 1 for
Polya shares, Skellam's closure under sums, negative binomials for local ``Lap_Z``, the users' histogram for
discrete Gaussians). SecAgg's output ``(sum_i y_i) mod m`` equals ``(sum xhat + sum eta)
mod m``, so nothing else is lost.

The protocols sit below the families that use them: Algorithm 1 (:mod:`anonbandits.dp.distributed`) and the
``--privacy distributed`` group sums of the anonymous family, each through the
:class:`~anonbandits.privacy.mechanisms.Distributed` mechanism. Their old paths
``anonbandits.channels.protocols`` and ``anonbandits.dp.distributed.protocols`` still work for one release, with a
``DeprecationWarning``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.core.radii import lemma2_radius, lemma5_radius
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.privacy import accounting, aggregation, samplers, tails
from anonbandits.validation import (
    COUNT,
    COUNTS,
    EPSILON,
    MAX_DRAWS,
    NONNEGATIVE_COUNT,
    OPEN_UNIT,
    RNG,
    UNIT_NO_ZERO,
    Rule,
    checks,
    int_between,
    is_integer,
    optional,
)

_SCALE = Rule(lambda v: _real(v) and 1 <= v < math.inf, "a finite number of at least 1")


def _real(value: object) -> bool:
    return (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool | np.bool_)
        and not math.isnan(value)
    )


#: The largest modulus ``m`` of a batch: messages, their sums and the analyzer's arithmetic stay within int64.
#: An epsilon (or scale) whose precision or accuracy would need more for some batch is refused at that batch.
MAX_MODULUS = 2**62
_MODULUS = int_between(2, MAX_MODULUS)

#: Pairwise masking uses the complete graph up to this many users, a ring of degree 16 above it; the
#: split-and-mix shuffle stand-in cuts each message into 3 shares.
COMPLETE_MASKING_MAX_USERS, RING_DEGREE, SPLIT_SHARES = 512, 16, 3

#: The secure computations :meth:`Protocol.secure` simulates.
SECAGGS = ("ideal", "masked", "split-and-mix")


@filled_dataclass(frozen=True)
class BatchParams:
    """Public per-batch protocol parameters, ``m = n g + 2 tau + 1``; the property ``bits`` is ``ceil(log2 m)``,
    the bits of one user message.

    Parameters
    ----------
    n : int
        Users in the batch (its length ``l(b)``).
    g : int
        Precision of the randomized rounding of the rewards.
    tau : int
        Accuracy: the analyzer's underflow correction is exact while the total noise stays within ``tau``.
    m : int
        Modulus of the users' messages and of the secure aggregation.

    Raises
    ------
    ConfigError
        If ``n`` or ``g`` is not a positive integer, ``tau`` is not a non-negative integer (bools and floats are
        refused), or ``m`` is not an integer from ``n g + 2 tau + 1`` (the analyzer's exactness) to
        :data:`MAX_MODULUS`.

    {{refs_paper004}}

    Examples
    --------
    >>> bp = Protocol(1.0, 0.1).batch_params(16)
    >>> bp, bp.bits
    (BatchParams(n=16, g=4, tau=12, m=89), 7)
    """

    n: int
    g: int
    tau: int
    m: int

    def __post_init__(self) -> None:
        for name, rule in (("n", COUNT), ("g", COUNT), ("tau", NONNEGATIVE_COUNT), ("m", _MODULUS)):
            rule.check(name, getattr(self, name))
        if self.m < self.n * self.g + 2 * self.tau + 1:
            raise ConfigError(
                f"m must be at least n g + 2 tau + 1 = {self.n * self.g + 2 * self.tau + 1}, got {self.m!r}"
            )

    @property
    def bits(self) -> int:
        """Bits per user message, ``ceil(log2 m)``."""
        return (self.m - 1).bit_length()


@dataclass(frozen=True)
class Release:
    """One released statistic: the SecAgg output(s) and the analyzer's estimates of the blocks' sums.

    ``exact`` is ``(sum xhat + sum eta)/g`` (plus the central noise), what the analyzer returns whenever
    the total noise is within ``tau``; ``z != exact`` flags a modular wrap error.
    """

    yhat: np.ndarray
    z: np.ndarray
    exact: np.ndarray


#: the parameters of a batch, and those of a batch whose users are drawn one by one (at most MAX_DRAWS of them)
_BATCH = Rule(lambda v: isinstance(v, BatchParams), "the BatchParams of a batch (Protocol.batch_params)")
_USER_BATCH = Rule(
    lambda v: isinstance(v, BatchParams) and v.n <= MAX_DRAWS,
    f"the BatchParams of a batch of at most MAX_DRAWS = {MAX_DRAWS:,} users (each user is drawn)",
)
_SECAGG = Rule(lambda v: isinstance(v, str) and v in SECAGGS, f"one of {', '.join(SECAGGS)}")
#: a run's batch sizes: positive integers up to a horizon's users (the accounting of each is about linear in it)
_BATCH_SIZES = Rule(
    lambda v: not isinstance(v, str | bytes) and all(is_integer(n) and 1 <= n <= accounting.MAX_XI_USERS for n in v),
    f"a sequence of batch sizes, integers from 1 to {accounting.MAX_XI_USERS:.0e}",
)
_DELTA = optional(OPEN_UNIT)

#: the checks of each method (the subclasses' overrides apply the same)
_CHECK_PRECISION = checks(n=COUNT)
_CHECK_ACCURACY = checks(n=COUNT, g=COUNT)
_CHECK_RADIUS = checks(length=COUNT, active=COUNT, batch=COUNT, p=UNIT_NO_ZERO)
_CHECK_USER_NOISE = checks(bp=_USER_BATCH, rng=RNG)
_CHECK_AGGREGATE_NOISE = checks(bp=_BATCH, count=int_between(0, MAX_DRAWS), rng=RNG)
_CHECK_PRIVACY = checks(batch_sizes=_BATCH_SIZES, delta=_DELTA)
_CHECK_BATCH = checks(bp=_BATCH)


@fill
class Protocol:
    """Base class of the protocols P = (R, S, A), and Dist-DP-SE's pure-DP SecAgg protocol with Polya noise
    (Theorem 1, Sec. 4).

    Subclasses (``PROTOCOLS`` by registered name) change the noise, the parameters and the radius; the release
    machinery is shared. ``noise_eps = share eps`` calibrates the noise and ``share p_tau`` the accuracy
    (``share = 1/2`` for the shuffle protocol). For a batch of ``n`` users: ``g = ceil(eps sqrt(n))``, each user
    adds ``Polya(1/n, beta) - Polya(1/n, beta)`` with ``beta = exp(-eps/g)`` (total ``Lap_Z(g/eps)``) and
    ``tau = ceil((g/eps) log(2/p_tau))``.

    Parameters
    ----------
    epsilon : float
        The privacy level eps, positive.
    tau_confidence : float
        ``p_tau`` in (0, 1]: the total noise of a release exceeds ``tau`` with probability at most ``p_tau``.
    scale : float, optional
        The scaling factor ``s >= 1`` of the RDP and CDP protocols' precision (default 1; unused by the pure-DP
        ones).

    Raises
    ------
    ConfigError
        If ``epsilon`` is not a finite positive number within the supported range
        (:data:`~anonbandits.validation.EPSILON_MIN` to :data:`~anonbandits.validation.EPSILON_MAX`), a bool or
        NaN, ``tau_confidence`` is outside (0, 1] or ``scale`` is below 1 or infinite; from
        :meth:`batch_params`, if a batch's modulus would exceed :data:`MAX_MODULUS`.

    {{refs_paper004}}

    Examples
    --------
    >>> protocol = Protocol(1.0, 0.1)
    >>> protocol.name, protocol.privacy([2, 4], None)
    ('dist-dp-se', (1.0, 0.0))
    """

    name, pure, share = "dist-dp-se", True, 1.0

    def __init__(self, epsilon: float, tau_confidence: float, scale: float = 1.0) -> None:
        EPSILON.check("epsilon", epsilon)
        UNIT_NO_ZERO.check("tau_confidence", tau_confidence)
        _SCALE.check("scale", scale)
        self.epsilon, self.tau_confidence, self.scale = float(epsilon), float(tau_confidence), float(scale)
        self.noise_eps = self.epsilon * self.share

    @_CHECK_PRECISION
    def precision(self, n: int) -> int:
        """The precision ``g = ceil(eps sqrt(n))`` (at least 1) of the randomized rounding for a batch of ``n`` users.

        The RDP and CDP protocols scale it: ``g = ceil(s eps sqrt(n))``.

        Parameters
        ----------
        n : int
            The users in the batch.

        Returns
        -------
        int
            g, at least 1.

        Raises
        ------
        ConfigError
            If ``n`` is not a positive integer (at most 2^62; bools and floats are refused).

        Examples
        --------
        >>> Protocol(1.0, 0.1).precision(16)
        4
        """
        return max(1, math.ceil(self.noise_eps * math.sqrt(n)))

    @_CHECK_ACCURACY
    def accuracy(self, n: int, g: int) -> int:
        """The accuracy ``tau``: the total noise of a release exceeds it with probability at most ``p_tau``.

        Here ``tau = ceil((g/eps) log(2/p_tau))`` for the ``Lap_Z(g/eps)`` total noise; each subclass uses the
        tail bound of its own noise.

        Parameters
        ----------
        n : int
            The users in the batch (the local protocol's total noise depends on it).
        g : int
            The batch's precision (:meth:`precision`).

        Returns
        -------
        int
            tau.

        Raises
        ------
        ConfigError
            If ``n`` or ``g`` is not a positive integer (at most 2^62; bools and floats are refused).

        Examples
        --------
        >>> Protocol(1.0, 0.1).accuracy(16, 4)  # ceil(4 log(20))
        12
        """
        return math.ceil(tails.discrete_laplace_radius(g / self.noise_eps, self.tau_confidence * self.share))

    @_CHECK_PRECISION
    def batch_params(self, n: int) -> BatchParams:
        """The public parameters of a batch of ``n`` users: precision, accuracy and modulus ``m = n g + 2 tau + 1``.

        Parameters
        ----------
        n : int
            The batch's length ``l(b)``, its number of users.

        Returns
        -------
        BatchParams
            ``g`` from :meth:`precision`, ``tau`` from :meth:`accuracy`, and ``m``.

        Raises
        ------
        ConfigError
            If ``n`` is not a positive integer (at most 2^62), or ``m`` would exceed :data:`MAX_MODULUS` (the
            epsilon, or the scale, is too large or too small for a batch of ``n`` users: the message says which).

        Examples
        --------
        >>> Protocol(1.0, 0.1).batch_params(16)
        BatchParams(n=16, g=4, tau=12, m=89)
        """
        require(is_integer(n) and n >= 1, "the batch's number of users n", "a positive integer", n)
        try:
            g = self.precision(n)
            tau = self.accuracy(n, g)
            m = aggregation.modulus(n, g, tau)
        except OverflowError:  # an infinite noise scale: math.ceil(inf)
            m = MAX_MODULUS + 1
        if m > MAX_MODULUS:
            raise ConfigError(
                f"epsilon = {self.epsilon!r} (scale {self.scale!r}) needs a modulus over 2^62 for a batch of {n} "
                f"users ({self.name}'s precision and accuracy overflow 64-bit integers): use a larger epsilon "
                f"{'or a smaller scale ' if self.scale > 1 else ''}(docs/privacy.md)"
                if self.noise_eps * self.scale * math.sqrt(n) < 1
                else f"epsilon = {self.epsilon!r} (scale {self.scale!r}) needs a modulus over 2^62 for a batch of {n} "
                f"users ({self.name}'s precision overflows 64-bit integers): use a smaller epsilon or scale "
                "(docs/privacy.md)"
            )
        return BatchParams(n=int(n), g=g, tau=tau, m=m)

    def noise_constants(self) -> tuple[float, float]:
        """The constants ``(sigma, h)`` of Assumption 1 for the total noise, in reward units.

        With probability at least ``1 - 2p``, ``|total noise| / g <= sigma sqrt(log(2/p)) + h log(2/p)``; here
        ``sigma = sqrt(2)/eps`` and ``h = 1/eps`` (the ``Lap_Z(g/eps)`` total).

        Returns
        -------
        sigma : float
            The sub-Gaussian constant.
        h : float
            The sub-exponential constant (0 for sub-Gaussian noise).

        Examples
        --------
        >>> Protocol(2.0, 0.1).noise_constants()
        (0.7071067811865476, 0.5)
        """
        return math.sqrt(2.0) / self.noise_eps, 1.0 / self.noise_eps

    @_CHECK_RADIUS
    def radius(self, length: int, active: int, batch: int, p: float) -> float:
        """The confidence radius ``beta(b)`` of Lemma 2 for a batch of length ``l(b)``.

        ``beta(b) = sqrt(ln(4 s b^2/p) / (2 l)) + sigma sqrt(ln(2 s b^2/p)) / l + h ln(2 s b^2/p) / l`` with the
        constants of :meth:`noise_constants`.

        Parameters
        ----------
        length : int
            The batch length ``l(b)``: the users (pulls) per active arm in batch b.
        active : int
            The number ``s`` of active arms.
        batch : int
            The batch index b (from 1).
        p : float
            The failure probability, in (0, 1].

        Returns
        -------
        float
            The radius, in reward units.

        Raises
        ------
        ConfigError
            If ``length``, ``active`` or ``batch`` is not a positive integer (at most 2^62) or ``p`` is outside
            (0, 1].

        Examples
        --------
        >>> round(Protocol(1.0, 0.1).radius(16, 2, 1, 0.1), 4)
        0.7704
        """
        return lemma2_radius(length, active, batch, p, *self.noise_constants())

    @_CHECK_USER_NOISE
    @fill
    def user_noise(self, bp: BatchParams, rng: np.random.Generator) -> np.ndarray:
        """The noise of each of the batch's ``n`` users (local randomizer R).

        Here ``Polya(1/n, beta) - Polya(1/n, beta)`` with ``beta = e^{-eps/g}``, so the users' total is
        ``Lap_Z(g/eps)`` (Fact 1).

        Parameters
        ----------
        bp : BatchParams
            The batch's parameters.
        {{rng}}

        Returns
        -------
        numpy.ndarray
            (n,) int64, one noise per user, in encoded units.

        Raises
        ------
        ConfigError
            If ``bp`` is not a :class:`BatchParams` of at most :data:`~anonbandits.validation.MAX_DRAWS` users or
            ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> protocol = Protocol(1.0, 0.1)
        >>> protocol.user_noise(protocol.batch_params(16), np.random.default_rng(0)).shape
        (16,)
        """
        beta = math.exp(-self.noise_eps / bp.g)
        return samplers.polya(1.0 / bp.n, beta, bp.n, rng) - samplers.polya(1.0 / bp.n, beta, bp.n, rng)

    @_CHECK_AGGREGATE_NOISE
    @fill
    def aggregate_noise(self, bp: BatchParams, count: int, rng: np.random.Generator) -> np.ndarray:
        """Independent totals of the ``n`` users' noise, drawn from their exact law (here ``Lap_Z(g/eps)``).

        Parameters
        ----------
        bp : BatchParams
            The batch's parameters.
        count : int
            How many totals (blocks of ``n`` users) to draw.
        {{rng}}

        Returns
        -------
        numpy.ndarray
            (count,) int64, in encoded units; distributed as the sum of ``count`` x ``n`` :meth:`user_noise`.

        Raises
        ------
        ConfigError
            If ``bp`` is not a :class:`BatchParams`, ``count`` is not an integer from 0 to
            :data:`~anonbandits.validation.MAX_DRAWS`, or ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> protocol = Protocol(1.0, 0.1)
        >>> protocol.aggregate_noise(protocol.batch_params(16), 3, np.random.default_rng(0)).shape
        (3,)
        """
        return samplers.discrete_laplace(bp.g / self.noise_eps, count, rng)

    @_CHECK_AGGREGATE_NOISE
    def server_noise(self, bp: BatchParams, count: int, rng: np.random.Generator) -> np.ndarray | None:
        """Noise the trusted analyzer adds itself to each SecAgg output, in encoded units (central model only).

        Parameters
        ----------
        bp : BatchParams
            The batch's parameters.
        count : int
            The number of outputs.
        rng : numpy.random.Generator
            The source of the central noise.

        Returns
        -------
        numpy.ndarray or None
            (count,) int64 noises, or ``None`` (here, and in every model but the central one): no noise.

        Raises
        ------
        ConfigError
            If ``bp`` is not a :class:`BatchParams`, ``count`` is not an integer from 0 to
            :data:`~anonbandits.validation.MAX_DRAWS`, or ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> protocol = Protocol(1.0, 0.1)
        >>> protocol.server_noise(protocol.batch_params(16), 3, np.random.default_rng(0)) is None
        True
        """
        return None

    def _analyze(self, yhat: np.ndarray, clean: np.ndarray, bp: BatchParams, rng: np.random.Generator) -> Release:
        extra = self.server_noise(bp, yhat.size, rng)
        y = yhat if extra is None else np.mod(yhat + np.mod(extra, bp.m), bp.m)
        exact = clean if extra is None else clean + extra
        return Release(yhat=yhat, z=aggregation.analyze(y, bp.n, bp.g, bp.tau, bp.m), exact=exact / bp.g)

    @checks(encoded=COUNTS, bp=_BATCH, rng=RNG)
    def release_sums(self, encoded: np.ndarray, bp: BatchParams, rng: np.random.Generator) -> Release:
        """Releases for several blocks of ``n`` users from their encoded sums (aggregate-noise mode).

        Each block's total noise is drawn at once by :meth:`aggregate_noise` (same law as the users' own
        noises of :meth:`release_users`); the noisy sum is reduced mod m, then analyzed.

        Parameters
        ----------
        encoded : array_like of int
            The blocks' sums of the users' encoded rewards ``sum_i xhat_i`` (one entry per block), each in
            [0, n g].
        bp : BatchParams
            The parameters of a batch of ``n`` users.
        rng : numpy.random.Generator
            Draws the noise.

        Returns
        -------
        Release
            ``yhat`` the SecAgg outputs, ``z`` the analyzer's estimates of the reward sums and ``exact`` the
            noisy sums without modular wrap (``z != exact`` flags a wrap error).

        Raises
        ------
        ConfigError
            If ``encoded`` is not a 1-D array of integers in [0, n g] (the sum of n encodings in {0, ..., g}),
            ``bp`` is not a :class:`BatchParams` (or has more blocks than
            :data:`~anonbandits.validation.MAX_DRAWS`), or ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> protocol = Protocol(1.0, 0.1)
        >>> release = protocol.release_sums(np.array([8, 12]), protocol.batch_params(16), np.random.default_rng(0))
        >>> bool(np.array_equal(release.z, release.exact)), release.z.shape
        (True, (2,))
        """
        total = np.asarray(encoded, dtype=np.int64)
        if total.size and not (0 <= total.min() and total.max() <= bp.n * bp.g):
            raise ConfigError(f"encoded must be sums in [0, n g = {bp.n * bp.g}], got {_shown(encoded)}")
        total = total + self.aggregate_noise(bp, total.size, rng)
        return self._analyze(np.mod(total, bp.m), total, bp, rng)

    @checks(messages=COUNTS, bp=_USER_BATCH, secagg=_SECAGG, rng=RNG)
    def secure(self, messages: np.ndarray, bp: BatchParams, secagg: str, rng: np.random.Generator) -> int:
        """The secure computation S on the users' messages: ideal SecAgg or one of its simulations.

        Every variant returns the same modular sum; the simulations only transform the messages first.

        Parameters
        ----------
        messages : numpy.ndarray
            (n,) int64, the batch's users' messages ``y_i``, each in ``[0, m)``.
        bp : BatchParams
            The batch's parameters (the modulus ``m``).
        secagg : str
            ``"ideal"`` (the sum itself), ``"masked"`` (pairwise additive masks: the complete graph up to
            :data:`COMPLETE_MASKING_MAX_USERS` users, else a ring) or ``"split-and-mix"`` (shares, shuffled).
        rng : numpy.random.Generator
            Draws the masks or shares.

        Returns
        -------
        int
            ``(sum_i y_i) mod m``.

        Raises
        ------
        ConfigError
            If ``messages`` is not a 1-D array of ``bp.n`` integers in [0, m), ``bp`` is not a
            :class:`BatchParams` (of at most :data:`~anonbandits.validation.MAX_DRAWS` users), ``secagg`` is
            none of the three, or ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> protocol = Protocol(1.0, 0.1)
        >>> protocol.secure(np.arange(16), protocol.batch_params(16), "masked", np.random.default_rng(0))
        31
        """
        messages = np.asarray(messages, dtype=np.int64)
        if messages.size != bp.n or (messages.size and not (0 <= messages.min() and messages.max() < bp.m)):
            raise ConfigError(
                f"messages must be the batch's {bp.n} messages, each in [0, m = {bp.m}), got {_shown(messages)}"
            )
        if secagg == "masked":
            n = messages.size
            pairs = (
                aggregation.complete_pairs(n)
                if n <= COMPLETE_MASKING_MAX_USERS
                else aggregation.ring_pairs(n, RING_DEGREE)
            )
            messages = aggregation.masked_messages(messages, bp.m, rng, pairs)
        elif secagg == "split-and-mix":
            messages = aggregation.split_and_mix(messages, bp.m, SPLIT_SHARES, rng)
        elif secagg != "ideal":
            raise ConfigError(f"secagg must be one of {', '.join(SECAGGS)}, got {_shown(secagg)}")
        return aggregation.secure_sum(messages, bp.m)

    @checks(xhat=COUNTS, bp=_USER_BATCH, secagg=_SECAGG, rng=RNG)
    def release_users(self, xhat: np.ndarray, bp: BatchParams, secagg: str, rng: np.random.Generator) -> Release:
        """The release for one block from every user's encoding (faithful per-user mode).

        Each user adds her :meth:`user_noise` and sends ``(xhat_i + eta_i) mod m``; the messages go through
        :meth:`secure`, then the analyzer (with :meth:`server_noise`, if any).

        Parameters
        ----------
        xhat : array_like of int
            (n,) the users' encoded rewards.
        bp : BatchParams
            The batch's parameters; ``bp.n`` must be the number of encodings.
        secagg : str
            The secure computation (see :meth:`secure`).
        rng : numpy.random.Generator
            Draws the users' noise and the secure computation's randomness.

        Returns
        -------
        Release
            One-entry arrays: the SecAgg output ``yhat``, the estimate ``z`` and the wrap-free ``exact``.

        Raises
        ------
        ConfigError
            If ``xhat`` is not a 1-D array of ``bp.n`` integers in {0, ..., g}, ``bp`` is not a
            :class:`BatchParams` (of at most :data:`~anonbandits.validation.MAX_DRAWS` users), ``secagg`` is
            unknown, or ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> protocol = Protocol(1.0, 0.1)
        >>> xhat = np.r_[np.full(10, 4), np.zeros(6, int)]  # 10 rewards of 1 at g = 4
        >>> protocol.release_users(xhat, protocol.batch_params(16), "ideal", np.random.default_rng(0)).z
        array([10.])
        """
        xhat = np.asarray(xhat, dtype=np.int64)
        if xhat.size != bp.n or (xhat.size and not (0 <= xhat.min() and xhat.max() <= bp.g)):
            raise ConfigError(
                f"xhat must be the batch's {bp.n} encodings, each in {{0, ..., g = {bp.g}}}, got {_shown(xhat)}"
            )
        eta = self.user_noise(bp, rng)
        messages = np.mod(xhat + eta, bp.m)  # local randomizer R: y_i = (xhat_i + eta_i) mod m
        yhat = np.array([self.secure(messages, bp, secagg, rng)], dtype=np.int64)
        return self._analyze(yhat, np.array([int(xhat.sum()) + int(eta.sum())], dtype=np.int64), bp, rng)

    @_CHECK_PRIVACY
    def privacy(self, batch_sizes: list[int], delta: float | None) -> tuple[float, float]:
        """The ``(eps, delta)``-DP guarantee of a whole run (users are unique, so the worst batch counts).

        Parameters
        ----------
        batch_sizes : list of int
            The run's batch sizes ``n``.
        delta : float or None
            The target delta of the approximate-DP protocols; the pure-DP ones ignore it.

        Returns
        -------
        eps : float
            The privacy level (here ``epsilon``, Theorem 1).
        delta : float or None
            0 for the pure-DP protocols, else the given delta.

        Raises
        ------
        ConfigError
            If ``batch_sizes`` is not a sequence of integers from 1 to
            :data:`~anonbandits.privacy.accounting.MAX_XI_USERS`, ``delta`` is neither ``None`` nor in (0, 1),
            or (the approximate-DP protocols) ``delta`` is ``None`` or a batch needs a modulus over 2^62.

        Examples
        --------
        >>> Protocol(1.0, 0.1).privacy([2, 4], None)
        (1.0, 0.0)
        """
        return self.epsilon, 0.0


class ShuffleProtocol(Protocol):
    """Pure DP via secure shuffling (Theorem 3, Appendix D.2).

    A relaxed SecAgg built from shuffling (Cheu & Yan 2021) spends ``eps/4`` twice, so the noise is
    calibrated to ``eps' = eps/2``: ``g = ceil(eps' sqrt n)``, Polya(1/n, e^{-eps'/g}) per user (total
    ``Lap_Z(g/eps')``), ``tau`` at confidence ``p' = p_tau/2`` (``1/(2T)`` in theory mode). The simulated
    S is the ideal "shuffle then modular sum", or split-and-mix (each user's message cut into uniform
    additive shares, all shares shuffled), which is exactly correct but whose pure-DP security is not
    proven: the privacy claim is Theorem 3's, for the Cheu-Yan construction the paper does not specify.
    """

    name, share = "shuffle-dp-se", 0.5


class CentralProtocol(Protocol):
    """CDP-SE, the central model with discrete Laplace noise (Theorem 5; Algorithms 2 and 3; Appendix H.1).

    Users send ``xhat_i mod m`` without noise; the trusted analyzer adds ``Lap_Z(g/eps)`` mod m to the
    SecAgg output (Remark 7: ``eta1 - eta2``, two geometric variables; the users' total of Dist-DP-SE) and
    applies the underflow correction.
    """

    name = "cdp-se"
    server_noise = Protocol.aggregate_noise  # the analyzer adds what Dist-DP-SE's users add in total

    @_CHECK_USER_NOISE
    def user_noise(self, bp: BatchParams, rng: np.random.Generator) -> np.ndarray:
        """No user noise: zeros (the analyzer adds it, :meth:`server_noise`); refuses what
        :meth:`Protocol.user_noise` refuses."""
        return np.zeros(bp.n, dtype=np.int64)

    @_CHECK_AGGREGATE_NOISE
    def aggregate_noise(self, bp: BatchParams, count: int, rng: np.random.Generator) -> np.ndarray:
        """No users' noise: zeros; refuses what :meth:`Protocol.aggregate_noise` refuses."""
        return np.zeros(count, dtype=np.int64)


class LocalProtocol(Protocol):
    """LDP-SE, the local model with discrete Laplace noise (Theorem 6; Algorithms 4 and 5; Appendix H.2).

    Every user adds her own ``Lap_Z(g/eps)`` (each message alone is eps-DP, the sensitivity of ``xhat_i``
    being g). The total of ``n`` such noises is ``Polya(n, beta) - Polya(n, beta)`` exactly (a sum of n
    geometric variables is negative binomial). ``tau`` and ``beta(b)`` use the derived constant of
    Lemma 5 (Appendix H.2), whose absolute constant c the paper leaves open: ``Lap_Z(B)`` with ``B >= 1`` is
    ``(4.52 B^2, 2B)``-sub-exponential, so c = 2.13 serves:
    ``tau = ceil((g/eps) max(3.01 sqrt(n log(2/p)), 4 log(2/p)))``.
    """

    name = "ldp-se"

    @_CHECK_ACCURACY
    def accuracy(self, n: int, g: int) -> int:
        """``tau = ceil((g/eps) max(3.01 sqrt(n log(2/p_tau)), 4 log(2/p_tau)))`` (Lemma 5), for n users' noises;
        refuses what :meth:`Protocol.accuracy` refuses."""
        return math.ceil(tails.discrete_laplace_sum_radius(g / self.epsilon, n, self.tau_confidence))

    @_CHECK_RADIUS
    def radius(self, length: int, active: int, batch: int, p: float) -> float:
        """``beta(b)`` with the local noise's tail (Lemma 5) in place of Assumption 1's; refuses what
        :meth:`Protocol.radius` refuses."""
        return lemma5_radius(length, active, batch, p, self.epsilon)

    @_CHECK_USER_NOISE
    def user_noise(self, bp: BatchParams, rng: np.random.Generator) -> np.ndarray:
        """Each user's own ``Lap_Z(g/eps)``; refuses what :meth:`Protocol.user_noise` refuses."""
        return samplers.discrete_laplace(bp.g / self.epsilon, bp.n, rng)

    @_CHECK_AGGREGATE_NOISE
    def aggregate_noise(self, bp: BatchParams, count: int, rng: np.random.Generator) -> np.ndarray:
        """Totals of n users' ``Lap_Z(g/eps)``: ``Polya(n, beta) - Polya(n, beta)``, ``beta = e^{-eps/g}``;
        refuses what :meth:`Protocol.aggregate_noise` refuses."""
        beta = math.exp(-self.epsilon / bp.g)
        return samplers.polya(bp.n, beta, count, rng) - samplers.polya(bp.n, beta, count, rng)


class _ScaledProtocol(Protocol):
    """Shared by the RDP/CDP protocols: ``g = ceil(s eps sqrt n)`` and total noise variance ``g^2/eps^2``."""

    pure = False

    @_CHECK_PRECISION
    def precision(self, n: int) -> int:
        """``g = ceil(s eps sqrt(n))`` (at least 1); refuses what :meth:`Protocol.precision` refuses."""
        return max(1, math.ceil(self.scale * self.epsilon * math.sqrt(n)))

    @staticmethod
    @checks(delta=_DELTA)
    def target_delta(delta: float | None) -> float:
        """The delta of the reported ``(eps', delta)``-DP conversion, which these approximate-DP protocols need
        (``ConfigError`` for ``None``, or a delta outside (0, 1))."""
        if delta is None:
            raise ConfigError(
                f"{SkellamProtocol.name} and {DiscreteGaussianProtocol.name} report (eps, delta)-DP: "
                "they need a target delta (dp_delta)"
            )
        return delta

    @_CHECK_BATCH
    def total_variance(self, bp: BatchParams) -> float:
        """Variance of the aggregated noise of one release, in encoded units (``ConfigError`` if ``bp`` is not a
        :class:`BatchParams`)."""
        return (bp.g / self.epsilon) ** 2


class SkellamProtocol(_ScaledProtocol):
    """Dist-RDP-SE: RDP via SecAgg with Skellam noise (Theorem 2, Sec. 5), scaling factor ``s``.

    ``g = ceil(s eps sqrt n)``; user noise ``Sk(0, g^2/(n eps^2))``, total ``Sk(0, g^2/eps^2)``;
    ``tau = ceil((2g/eps) sqrt(log(2/p)) + sqrt(2) log(2/p))`` (Proposition 1, with the square root the
    extraction lost); ``sigma = 2/eps + sqrt(2)/(s eps)``, ``h = 1/(s eps)``.
    """

    name = "dist-rdp-se"

    def noise_constants(self) -> tuple[float, float]:
        """``sigma = 2/eps + sqrt(2)/(s eps)``, ``h = 1/(s eps)``."""
        e, s = self.epsilon, self.scale
        return 2.0 / e + math.sqrt(2.0) / (s * e), 1.0 / (s * e)

    @_CHECK_ACCURACY
    def accuracy(self, n: int, g: int) -> int:
        """``tau = ceil((2g/eps) sqrt(log(2/p_tau)) + sqrt(2) log(2/p_tau))`` (Proposition 1); refuses what
        :meth:`Protocol.accuracy` refuses."""
        return math.ceil(tails.skellam_radius((g / self.epsilon) ** 2, self.tau_confidence))

    @_CHECK_USER_NOISE
    def user_noise(self, bp: BatchParams, rng: np.random.Generator) -> np.ndarray:
        """Each user's ``Sk(0, g^2/(n eps^2))``; refuses what :meth:`Protocol.user_noise` refuses."""
        return samplers.skellam(0, self.total_variance(bp) / bp.n, bp.n, rng)

    @_CHECK_AGGREGATE_NOISE
    def aggregate_noise(self, bp: BatchParams, count: int, rng: np.random.Generator) -> np.ndarray:
        """Totals ``Sk(0, g^2/eps^2)`` (Skellam is closed under sums); refuses what
        :meth:`Protocol.aggregate_noise` refuses."""
        return samplers.skellam(0, self.total_variance(bp), count, rng)

    @_CHECK_PRIVACY
    def privacy(self, batch_sizes: list[int], delta: float | None) -> tuple[float, float]:
        """Lemma 3 with the actual integer g of every batch size, converted by Lemma 10; worst batch. Refuses
        what :meth:`Protocol.privacy` refuses."""
        curves = [
            accounting.skellam_rdp(accounting.DEFAULT_ORDERS, bp.g, self.total_variance(bp))
            for bp in map(self.batch_params, batch_sizes)
        ]
        target = self.target_delta(delta)
        return max([0.0, *(accounting.rdp_to_dp(curve, target) for curve in curves)]), target


class DiscreteGaussianProtocol(_ScaledProtocol):
    """Dist-CDP-SE: CDP via SecAgg with discrete Gaussian noise (Theorem 4, Appendix F).

    ``g = ceil(s eps sqrt n)``; user noise ``N_Z(0, g^2/(n eps^2))`` per user (the sum of discrete Gaussians is
    not a discrete Gaussian, so the aggregate is the users' total, drawn exactly by
    :func:`~anonbandits.privacy.discrete_gaussian_sum`); ``tau = ceil((g/eps) sqrt(2 log(2/p)))``;
    ``sigma = sqrt(2)/eps + sqrt(2)/(s eps)``, ``h = 0`` (sub-Gaussian noise).
    """

    name = "dist-cdp-se"

    def noise_constants(self) -> tuple[float, float]:
        """``sigma = sqrt(2)/eps + sqrt(2)/(s eps)``, ``h = 0``."""
        e, s = self.epsilon, self.scale
        return math.sqrt(2.0) / e + math.sqrt(2.0) / (s * e), 0.0

    @_CHECK_ACCURACY
    def accuracy(self, n: int, g: int) -> int:
        """``tau = ceil((g/eps) sqrt(2 log(2/p_tau)))``; refuses what :meth:`Protocol.accuracy` refuses."""
        return math.ceil(tails.subgaussian_radius((g / self.epsilon) ** 2, self.tau_confidence))

    @_CHECK_BATCH
    def user_sigma(self, bp: BatchParams) -> float:
        """Scale of one user's discrete Gaussian share (the n shares add up to the total variance);
        ``ConfigError`` if ``bp`` is not a :class:`BatchParams`."""
        return math.sqrt(self.total_variance(bp) / bp.n)

    @_CHECK_USER_NOISE
    def user_noise(self, bp: BatchParams, rng: np.random.Generator) -> np.ndarray:
        """Each user's ``N_Z(0, g^2/(n eps^2))``; refuses what :meth:`Protocol.user_noise` refuses."""
        return samplers.discrete_gaussian(self.user_sigma(bp), bp.n, rng)

    @_CHECK_AGGREGATE_NOISE
    def aggregate_noise(self, bp: BatchParams, count: int, rng: np.random.Generator) -> np.ndarray:
        """Totals of ``n`` per-user discrete Gaussians (their exact law, drawn as the users' histogram); refuses
        what :meth:`Protocol.aggregate_noise` refuses."""
        return samplers.discrete_gaussian_sum(self.user_sigma(bp), bp.n, count, rng)

    @_CHECK_PRIVACY
    def privacy(self, batch_sizes: list[int], delta: float | None) -> tuple[float, float]:
        """Lemma 4 per batch size (``(1/2) epsbar^2``-CDP), worst batch, converted to ``(eps', delta)``-DP.
        Refuses what :meth:`Protocol.privacy` refuses."""
        worst = max(
            [
                0.0,
                *(
                    accounting.discrete_gaussian_sum_cdp(bp.n, self.user_sigma(bp), bp.g)
                    for bp in map(self.batch_params, batch_sizes)
                ),
            ]
        )
        target = self.target_delta(delta)
        return accounting.zcdp_to_dp(worst * worst / 2.0, target), target


PROTOCOLS: dict[str, type[Protocol]] = {
    cls.name: cls
    for cls in (CentralProtocol, LocalProtocol, Protocol, SkellamProtocol, DiscreteGaussianProtocol, ShuffleProtocol)
}
