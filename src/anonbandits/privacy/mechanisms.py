"""Privacy mechanisms on what any channel releases (aggregate sums and their numbers of contributors): the
direct channel's per-arm epoch sums or the anonymous channel's C-anonymous group sums.

* :class:`CentralLaplace`: one ``Lap(sensitivity/eps)`` per released sum (``Lap(1/eps)`` for sums of rewards in
  [0, 1]; DP-SE, Sajed and Sheffet, ICML 2019); :func:`laplace_noise` draws its noise, and is what every
  Laplace mechanism of the bandit layer draws from (paper 001's Anytime-Lazy-UCB, Hybrid-UCB and FTNL, paper
  003's DP-MASE);
* :class:`Distributed`: a protocol P = (R, S, A) of *Distributed Differential Privacy in Multi-Armed Bandits*
  (Chowdhury and Zhou, ICLR 2023, Sec. 3) on encoded sums, the users' total noise drawn from its exact law.

A release holding ``c`` of a user's rewards is ``(alpha, rdp(alpha))``-RDP for her (Renyi DP, Mironov, CSF
2017): her guarantee over a run adds the curves of the releases she is in (:func:`guarantee`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, Self, overload

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.privacy.accounting import (
    DEFAULT_ORDERS,
    discrete_gaussian_sum_cdp,
    pure_dp_to_rdp,
    rdp_to_dp,
    skellam_rdp,
)
from anonbandits.privacy.protocols import BatchParams, LocalProtocol, Protocol
from anonbandits.validation import (
    COUNT,
    COUNTS,
    EPSILON,
    FINITE_ARRAY,
    INT_ARRAY,
    OPEN_UNIT,
    POSITIVE_ARRAY,
    POSITIVE_FINITE,
    POSITIVE_INT_ARRAY,
    RNG,
    SIZE,
    Rule,
    checks,
)

#: RDP orders for curves defined at every real order > 1 (pure DP, zCDP), dense: a run's optimum can be anywhere.
REAL_ORDERS = 1.0 + np.geomspace(1e-4, 1e4, 2000)


class _Release(NamedTuple):
    values: np.ndarray
    noise: np.ndarray | None
    accounting: Mapping[str, Any]


@fill
class NoisyRelease(_Release):
    """What a mechanism releases: the noisy values, the noise added and the accounting of the release.

    A named tuple: cheap to build once per epoch. However built (``NoisyRelease(...)``, ``_make``,
    ``_replace``), its fields are checked and its arrays stored read-only: the values and the noise numeric
    arrays of one shape (neither NaN), the accounting a mapping whose ``epsilon``, when it has one, is a finite
    positive number.

    Parameters
    ----------
    values : numpy.ndarray
        The noisy values, one per input sum.
    noise : numpy.ndarray or None
        The noise added to each sum (``None`` where a modular protocol's analyzer returns estimates).
    accounting : Mapping
        The accounting of the release (e.g. ``{"epsilon": 0.5, "scale": 2.0}``; for paper 004's protocols,
        their raw release).

    Raises
    ------
    ConfigError
        If ``values`` is not a number or an array of numbers (bools, text, ragged lists and NaN are refused),
        ``noise`` is neither ``None`` nor such an array of the values' shape, ``accounting`` is not a mapping,
        or its ``epsilon`` is not a finite positive number.

    {{refs_dwork2006_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> release = CentralLaplace(1.0).release(np.array([3.0, 5.0]), np.array([4, 6]), np.random.default_rng(0))
    >>> bool(np.allclose(release.values - release.noise, [3.0, 5.0])), dict(release.accounting)
    (True, {'epsilon': 1.0, 'scale': 1.0})
    """

    __slots__ = ()

    def __new__(cls, values: np.ndarray, noise: np.ndarray | None, accounting: Mapping[str, Any]) -> NoisyRelease:
        values = _frozen("values", values)
        if noise is not None:
            noise = _frozen("noise", noise)
            require(
                noise.shape == values.shape, "noise", f"None or an array of the values' shape {values.shape}", noise
            )
        require(isinstance(accounting, Mapping), "accounting", "a mapping", accounting)
        if "epsilon" in accounting:
            POSITIVE_FINITE.check("accounting epsilon", accounting["epsilon"])
        return super().__new__(cls, values, noise, accounting)

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Self:  # type: ignore[override]  # checked, however built
        return cls(*iterable)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**self._asdict(), **changes})


def _numbers(value: Any) -> bool:
    # a ragged list makes np.asarray raise ValueError: the rule counts that as a refusal
    if isinstance(value, str | bytes | Mapping):
        return False
    a = np.asarray(value)
    return a.dtype.kind in "iuf" and not np.isnan(a).any()


_NUMBERS = Rule(_numbers, "a number or an array of numbers (not bools, not text, not NaN)")


def _frozen(name: str, value: Any) -> np.ndarray:
    """``value`` as a read-only numeric array (a copy when the caller could still write it)."""
    _NUMBERS.check(name, value)
    a = np.asarray(value)
    if a.flags.writeable:
        a = a.copy()
        a.setflags(write=False)
    return a


@overload
def laplace_noise(scale: float, rng: np.random.Generator, size: None = None) -> float: ...


@overload
def laplace_noise(
    scale: np.ndarray, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
) -> np.ndarray: ...


@overload
def laplace_noise(scale: float | np.ndarray, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray: ...


@checks(scale=POSITIVE_ARRAY, rng=RNG, size=SIZE)
@fill
def laplace_noise(
    scale: float | np.ndarray, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
) -> np.ndarray | float:
    """``Lap(scale)`` noise (centred), one draw per entry of ``size`` (or of ``scale``, an array of scales).

    The Laplace mechanism adds ``Lap(sensitivity / eps)`` to a statistic of the given sensitivity; every Laplace
    noise of the bandit layer is drawn here, so that one draw of a driver is one draw of the generator, in the
    driver's order.

    Parameters
    ----------
    scale : float or numpy.ndarray
        The Laplace scale ``b`` (variance ``2 b^2``), or one scale per draw.
    rng : numpy.random.Generator
        The source of randomness.
    size : int or tuple of int or None, optional
        Shape of the draw (numpy's ``size``); ``None`` (the default) draws one value per entry of ``scale``.

    Returns
    -------
    numpy.ndarray or float
        The draws (a float for a scalar ``scale`` and ``size=None``).

    Raises
    ------
    ConfigError
        If ``scale`` is not a positive finite number or an array of them (or, with ``size``, an array that does
        not broadcast to ``size``), ``rng`` is not a generator, or ``size`` is not ``None`` or a non-negative
        integer or tuple of them of at most :data:`~anonbandits.validation.MAX_DRAWS` draws.

    {{refs_dwork2006}}

    Examples
    --------
    >>> import numpy as np
    >>> laplace_noise(2.0, np.random.default_rng(0), 3).shape
    (3,)
    >>> laplace_noise(np.array([1.0, 10.0]), np.random.default_rng(0)).shape
    (2,)
    """
    if size is not None and np.ndim(scale):  # an array of scales must fill the shape drawn
        shape = (size,) if isinstance(size, int | np.integer) else tuple(size)
        try:
            fits = np.broadcast_shapes(np.shape(scale), shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ConfigError(f"scale must broadcast to size {size!r}, got an array of shape {np.shape(scale)}")
    return rng.laplace(0.0, scale, size)


@fill
class CentralLaplace:
    """The central Laplace mechanism: an eps-DP release ``sum + Lap(sensitivity/eps)`` of each sum.

    Each reward must enter a single release (DP-SE forgets earlier epochs), so the guarantee of a run is
    eps by parallel composition. The attribute ``scale`` is the Laplace scale ``sensitivity/eps``.

    Parameters
    ----------
    epsilon : float
        The privacy parameter eps of each release: a finite positive number (not a bool) between
        :data:`~anonbandits.validation.EPSILON_MIN` and :data:`~anonbandits.validation.EPSILON_MAX`.
    sensitivity : float, optional
        The sensitivity of a released sum, finite and positive. Default 1.0 (sums of rewards in [0, 1]).

    Raises
    ------
    ConfigError
        For an epsilon or a sensitivity these refuse (0, negative, NaN, infinite, a bool, an epsilon out of
        range), or a scale ``sensitivity/epsilon`` whose variance overflows or underflows: one line naming the
        argument and its value.

    {{refs_dwork2006_sajed2019}}

    Examples
    --------
    >>> import numpy as np
    >>> mechanism = CentralLaplace(0.5)
    >>> mechanism.scale, mechanism.variance(np.array([10, 20])).tolist()
    (2.0, [8.0, 8.0])
    >>> mechanism.release(np.array([3.0, 4.0]), np.array([3, 4]), np.random.default_rng(0)).values.shape
    (2,)
    """

    def __init__(self, epsilon: float, sensitivity: float = 1.0) -> None:
        EPSILON.check("epsilon", epsilon)
        POSITIVE_FINITE.check("sensitivity", sensitivity)
        self.epsilon, self.sensitivity = float(epsilon), float(sensitivity)
        self.scale = self.sensitivity / self.epsilon
        # the label must be the noise: a scale that overflows (inf noise) or underflows (no noise) is refused
        require(
            0.0 < 2.0 * self.scale * self.scale < math.inf,
            "sensitivity / epsilon",
            "a Laplace scale whose variance is a finite positive float",
            self.scale,
        )
        # the same guarantee for every release, built once (read-only)
        self._accounting = MappingProxyType({"epsilon": self.epsilon, "scale": self.scale})

    @overload
    def noise(self, rng: np.random.Generator, size: None = None) -> float: ...

    @overload
    def noise(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray: ...

    @checks(rng=RNG, size=SIZE)
    def noise(self, rng: np.random.Generator, size: int | tuple[int, ...] | None = None) -> np.ndarray | float:
        """Draw ``Lap(scale)`` noise: one value (a float) or an array of ``size`` of them.

        Parameters
        ----------
        rng : numpy.random.Generator
            The source of the noise.
        size : int, tuple of int or None, optional
            Shape of the draw; ``None`` (default) draws one value.

        Returns
        -------
        numpy.ndarray or float
            Independent draws of the Laplace distribution of scale :attr:`scale`, centred at 0.

        Raises
        ------
        ConfigError
            If ``rng`` is not a generator or ``size`` is not ``None`` or a non-negative integer or tuple of them
            of at most :data:`~anonbandits.validation.MAX_DRAWS` draws.

        Examples
        --------
        >>> import numpy as np
        >>> CentralLaplace(1.0).noise(np.random.default_rng(0), (2, 3)).shape
        (2, 3)
        """
        return laplace_noise(self.scale, rng, size)

    @checks(sums=FINITE_ARRAY, contributors=INT_ARRAY, rng=RNG)
    def release(self, sums: np.ndarray, contributors: int | np.ndarray, rng: np.random.Generator) -> NoisyRelease:
        """Add one independent ``Lap(scale)`` to each of ``sums`` (``contributors`` does not change it).

        ``release_rewards`` is the same method, under the name the callers of summed rewards use.

        Parameters
        ----------
        sums : numpy.ndarray
            The exact sums to release.
        contributors : int or numpy.ndarray
            The number of rewards in each sum (unused: the noise depends only on the sensitivity).
        rng : numpy.random.Generator
            The source of the noise.

        Returns
        -------
        NoisyRelease
            The noisy sums (of the shape of ``sums``), the noise added and the accounting ``{"epsilon",
            "scale"}`` (one read-only mapping shared by every release).

        Raises
        ------
        ConfigError
            If ``sums`` is not a number or an array of finite numbers, ``contributors`` is not an integer or an
            array of integers, or ``rng`` is not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> release = CentralLaplace(0.5).release(np.array([3.0, 4.0]), np.array([3, 4]), np.random.default_rng(0))
        >>> (release.values - release.noise).tolist(), dict(release.accounting)
        ([3.0, 4.0], {'epsilon': 0.5, 'scale': 2.0})
        """
        noise = self.noise(rng, np.size(sums))
        if np.ndim(sums) > 1:  # the same draws, in the sums' shape
            noise = noise.reshape(np.shape(sums))
        return NoisyRelease(sums + noise, noise, self._accounting)

    pure, release_rewards = True, release

    @checks(rewards=FINITE_ARRAY)
    def variance(self, rewards: np.ndarray) -> np.ndarray:
        """Variance of the noise of each release (``2 sensitivity^2/eps^2``, whatever its number of rewards).

        Parameters
        ----------
        rewards : numpy.ndarray
            The number of rewards of each release (only its shape matters).

        Returns
        -------
        numpy.ndarray
            The variance, of the shape of ``rewards``.

        Raises
        ------
        ConfigError
            If ``rewards`` is not a number or an array of finite numbers (bools, text and ragged lists are
            refused).

        Examples
        --------
        >>> import numpy as np
        >>> CentralLaplace(1.0).variance(np.array([1, 5])).tolist()
        [2.0, 2.0]
        """
        return np.full(np.shape(rewards), 2.0 * self.scale * self.scale)


@fill
class Distributed:
    """A protocol of paper 004 as a mechanism on blocks of ``n`` users' encoded sums.

    ``release`` takes the integer encoded sums (randomized rounding to precision ``g``, see
    :func:`anonbandits.envs.rewards.encoded_sums`) of blocks that all have ``contributors`` users,
    adds the users' aggregate noise, reduces modulo ``m`` (SecAgg) and runs the analyzer. ``values`` are the
    analyzer's estimates ``z`` of the blocks' sums. ``release_rewards`` releases sums of 0/1 rewards and raises
    :class:`~anonbandits.errors.ConfigError` on a sum that is not an integer.

    Parameters
    ----------
    protocol : anonbandits.privacy.protocols.Protocol
        The protocol (an instance of a class of ``anonbandits.privacy.protocols.PROTOCOLS``): its noise,
        parameters and accounting.

    Raises
    ------
    ConfigError
        If ``protocol`` is not a :class:`~anonbandits.privacy.protocols.Protocol`.

    {{refs_paper004}}
    Section 3.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.privacy.protocols import PROTOCOLS
    >>> mechanism = Distributed(PROTOCOLS["dist-dp-se"](1.0, 1e-3))
    >>> release = mechanism.release_rewards(np.array([3.0, 7.0]), np.array([10, 10]), np.random.default_rng(0))
    >>> release.values.shape, mechanism.pure
    ((2,), True)
    """

    def __init__(self, protocol: Any) -> None:
        if not isinstance(protocol, Protocol):
            raise ConfigError(
                f"protocol must be a protocol of anonbandits.privacy.protocols.PROTOCOLS, got {_shown(protocol)}"
            )
        self.protocol: Any = protocol  # a subclass: the scaled ones add total_variance and user_sigma
        self.pure, self.epsilon = protocol.pure, protocol.epsilon
        self.orders = DEFAULT_ORDERS if protocol.name == "dist-rdp-se" else REAL_ORDERS  # Lemma 3: integers

    @checks(sums=COUNTS, contributors=COUNT, rng=RNG)
    def release(
        self, sums: np.ndarray, contributors: int, rng: np.random.Generator, *, params: Any = None
    ) -> NoisyRelease:
        """Release encoded block sums of ``contributors`` users each (one protocol run per block).

        ``params`` are the protocol's batch parameters for ``contributors`` users when the caller already
        holds them (it needed ``g`` to encode the sums); they are computed otherwise.

        Parameters
        ----------
        sums : numpy.ndarray
            The blocks' integer encoded sums (1-D), each in [0, contributors g].
        contributors : int
            The number of users of every block.
        rng : numpy.random.Generator
            The source of the users' noise.
        params : object, optional
            The protocol's batch parameters for ``contributors`` users (``n``, ``g``, ``tau``, ``m``); ``None``
            (default): computed by the protocol.

        Returns
        -------
        NoisyRelease
            The analyzer's estimates ``z`` of the blocks' sums, no separate noise (``None``), and the accounting
            ``{"protocol", "params", "release"}``.

        Raises
        ------
        ConfigError
            If ``sums`` is not a 1-D array of integers, each in [0, contributors g] (the sum of
            ``contributors`` encodings in {0, ..., g}), ``contributors`` is not a positive integer (or needs a
            modulus over 2^62), ``rng`` is not a generator, or ``params`` is neither ``None`` nor the
            :class:`~anonbandits.privacy.protocols.BatchParams` of ``contributors`` users.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.privacy.protocols import PROTOCOLS
        >>> mechanism = Distributed(PROTOCOLS["dist-dp-se"](1.0, 1e-3))
        >>> release = mechanism.release(np.array([12, 28]), 10, np.random.default_rng(0))  # g = 4: sums <= 40
        >>> release.values.shape, release.noise, release.accounting["params"].n
        ((2,), None, 10)
        """
        if params is not None and not (isinstance(params, BatchParams) and params.n == contributors):
            raise ConfigError(f"params must be None or the BatchParams of {contributors} users, got {_shown(params)}")
        bp = params if params is not None else self.protocol.batch_params(int(contributors))
        encoded = np.asarray(sums, dtype=np.int64)
        if encoded.size and not (0 <= encoded.min() and encoded.max() <= bp.n * bp.g):
            raise ConfigError(f"sums must be encoded sums in [0, contributors g = {bp.n * bp.g}], got {_shown(sums)}")
        rel = self.protocol.release_sums(encoded, bp, rng)
        return NoisyRelease(rel.z, None, {"protocol": self.protocol.name, "params": bp, "release": rel})

    def _by_size(self, rewards: np.ndarray, value) -> np.ndarray:
        """``value(params, mask)`` for each distinct number of rewards (every release of ``n`` rewards has the
        protocol's parameters for ``n`` users: one share per reward, the modulus holding ``n g``)."""
        rewards = np.asarray(rewards, dtype=np.int64)
        out = np.empty(rewards.shape)
        for n in np.unique(rewards):
            at = rewards == n
            out[at] = value(self.protocol.batch_params(int(n)), at)
        return out

    @checks(sums=FINITE_ARRAY, rewards=POSITIVE_INT_ARRAY, rng=RNG)
    def release_rewards(self, sums: np.ndarray, rewards: np.ndarray, rng: np.random.Generator) -> NoisyRelease:
        """Release sums of ``rewards[k]`` rewards each, through the protocol run of their number of users.

        The rewards must be 0/1 (Bernoulli), whose encoding ``g x`` is exact, so ``sums[k] g`` is the sum of the
        members' encodings.

        Parameters
        ----------
        sums : numpy.ndarray
            The exact sums of 0/1 rewards (integers, as floats or ints).
        rewards : numpy.ndarray
            The number of rewards of each sum, of the shape of ``sums``.
        rng : numpy.random.Generator
            The source of the users' noise.

        Returns
        -------
        NoisyRelease
            The estimates of the sums in reward units, their differences from the exact sums, and the accounting
            ``{"protocol"}``.

        Raises
        ------
        ConfigError
            If ``sums`` is not a number or an array of finite numbers, ``rewards`` is not a positive integer or
            an array of them (at most 2^62) of the shape of ``sums``, ``rng`` is not a generator, or a sum is not
            an integer between 0 and its number of rewards (rewards that are not 0/1).

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.privacy.protocols import PROTOCOLS
        >>> mechanism = Distributed(PROTOCOLS["dist-dp-se"](1.0, 1e-3))
        >>> mechanism.release_rewards(np.array([0.5]), np.array([10]), np.random.default_rng(0))
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: sums must be integers from 0 to rewards (sums of 0/1 rewards), got array([0.5])
        """
        sums = np.asarray(sums, dtype=float)
        if np.shape(rewards) != sums.shape:
            raise ConfigError(
                f"rewards must have the shape of sums {sums.shape} (one count per sum), got {_shown(rewards)}"
            )
        if np.any((sums != np.rint(sums)) | (sums < 0) | (sums > rewards)):
            raise ConfigError(f"sums must be integers from 0 to rewards (sums of 0/1 rewards), got {_shown(sums)}")
        values = self._by_size(
            rewards, lambda bp, at: self.release(np.rint(sums[at] * bp.g).astype(np.int64), bp.n, rng, params=bp).values
        )
        return NoisyRelease(values, values - sums, {"protocol": self.protocol.name})

    @checks(rewards=POSITIVE_INT_ARRAY)
    def variance(self, rewards: np.ndarray) -> np.ndarray:
        """Variance of each release's noise in reward units: ``Lap_Z(g/eps)`` (pure; n of them for the local
        model) or ``(g/eps)^2``, over g^2.

        Parameters
        ----------
        rewards : numpy.ndarray
            The number of rewards (users) of each release; it sets the protocol's precision ``g``.

        Returns
        -------
        numpy.ndarray
            The variance in reward units, one per release (the shape of ``rewards``).

        Raises
        ------
        ConfigError
            If ``rewards`` is not a positive integer or an array of them (at most 2^62; bools, floats and text
            are refused), or a number of rewards needs a modulus over 2^62.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.privacy.protocols import PROTOCOLS
        >>> mechanism = Distributed(PROTOCOLS["dist-dp-se"](1.0, 1e-3))
        >>> variance = mechanism.variance(np.array([10, 10, 20]))
        >>> bool(variance[0] == variance[1]), variance.shape
        (True, (3,))
        """
        users = isinstance(self.protocol, LocalProtocol)  # the local model: n users' Lap_Z(g/eps) in total

        def var(bp, at):
            b = bp.g / self.protocol.noise_eps
            one = 2 * np.exp(-1 / b) / np.expm1(-1 / b) ** 2 if self.pure else b * b
            return (bp.n if users else 1) * one / bp.g**2

        return self._by_size(rewards, var)

    @checks(c=COUNTS, n=COUNTS)
    def rdp(self, c: np.ndarray, n: np.ndarray) -> np.ndarray:
        """Rényi DP, at :attr:`orders`, of a user with ``c[k]`` of the ``n[k]`` rewards of release k.

        The encoded sensitivity is ``c g``, under Skellam (Lemma 3) or discrete Gaussian shares (Lemma 4: zCDP,
        ``rho = epsbar^2/2``).

        Parameters
        ----------
        c : numpy.ndarray
            Integer number of the user's rewards in each release.
        n : numpy.ndarray
            Integer number of rewards of each release, of the length of ``c``.

        Returns
        -------
        numpy.ndarray
            ``(len(c), len(orders))`` Rényi DP of each release at the orders :attr:`orders` (a pure protocol's
            release of ``c`` rewards of the user is ``c eps``-DP: :func:`~anonbandits.privacy.pure_dp_to_rdp`).

        Raises
        ------
        ConfigError
            If ``c`` or ``n`` is not a 1-D array of non-negative integers (bools refused), their lengths differ,
            an ``n`` is 0 or a ``c`` exceeds its ``n``.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.privacy.protocols import PROTOCOLS
        >>> mechanism = Distributed(PROTOCOLS["dist-rdp-se"](1.0, 1e-3))
        >>> curves = mechanism.rdp(np.array([1, 2]), np.array([10, 10]))
        >>> curves.shape == (2, mechanism.orders.size), bool(np.all(curves[1] >= curves[0]))
        (True, True)
        """
        c, n = _counts("c", c), _counts("n", n)
        require(
            c.shape == n.shape and bool(np.all(n >= 1)) and bool(np.all(c <= n)),
            "c and n",
            "two 1-D integer arrays of one length with 0 <= c <= n and n >= 1",
            (c.tolist(), n.tolist()),
        )
        a, p = self.orders, self.protocol
        if self.pure:  # c of a user's rewards in an eps-DP release: c eps-DP, as guarantee() composes it
            return pure_dp_to_rdp(c[:, None] * self.epsilon, a)
        out = np.empty((len(c), a.size))
        for k, (ck, nk) in enumerate(zip(c.tolist(), n.tolist(), strict=True)):
            bp = p.batch_params(int(nk))
            if p.name == "dist-rdp-se":
                out[k] = skellam_rdp(a, ck * bp.g, p.total_variance(bp))
            else:
                out[k] = a * discrete_gaussian_sum_cdp(int(nk), p.user_sigma(bp), ck * bp.g) ** 2 / 2
        return out


def _counts(name: str, value: Any) -> np.ndarray:
    """``value`` as a 1-D array of non-negative integers (not bools), or a one-line ConfigError naming it."""
    a = np.asarray(value) if not isinstance(value, str | bytes | Mapping) else np.asarray([value])
    require(
        a.ndim == 1 and a.dtype.kind in "iu" and bool(np.all(a >= 0)),
        name,
        "a 1-D array of non-negative integers",
        value,
    )
    return a.astype(np.int64)


Mechanism = CentralLaplace | Distributed


@checks(
    mechanism=Rule(lambda v: isinstance(v, CentralLaplace | Distributed), "a CentralLaplace or Distributed mechanism"),
    exposure=Rule(lambda v: isinstance(v, Mapping), "a mapping (c, n) -> per-user counts"),
    delta=OPEN_UNIT,
)
def guarantee(
    mechanism: Mechanism, exposure: Mapping[tuple[int, int], np.ndarray], delta: float
) -> tuple[float, float, float]:
    """``(eps per reward, eps per user, delta)`` of a run, computed from its actual releases.

    ``exposure[(c, n)][u]`` counts the releases of ``n`` rewards that held ``c`` of user u's rewards. Per
    reward: the RDP of one reward in a release (``c = 1``), worst ``n``, converted by Lemma 10 of paper 004
    (exactly eps with delta 0 for the pure mechanisms). Per user (the worst): her curves add up (RDP
    composition; pure eps-DP is ``min(eps, alpha eps^2/2)``-RDP), converted at ``delta``. ``delta`` is 0 when
    no reported figure needed it.

    Raises
    ------
    ConfigError
        If ``mechanism`` is not a :class:`CentralLaplace` or :class:`Distributed`, ``exposure`` is not a mapping
        or ``delta`` is outside (0, 1).
    """
    keys = np.array(sorted(exposure), dtype=np.int64).reshape(-1, 2)
    if not keys.size:
        return 0.0, 0.0, 0.0
    counts = np.stack([exposure[(c, n)] for c, n in keys.tolist()])  # (keys, users)
    eps = mechanism.epsilon
    # the mechanism's own RDP curves where it is not pure (only a Distributed one can be: CentralLaplace is pure)
    curves = mechanism if isinstance(mechanism, Distributed) and not mechanism.pure else None
    orders = REAL_ORDERS if curves is None else curves.orders

    def rdp(c: np.ndarray) -> np.ndarray:  # a release holding c rewards of a user: c eps-DP when pure
        return pure_dp_to_rdp(c[:, None] * eps, orders) if curves is None else curves.rdp(c, keys[:, 1])

    eps_user = max(rdp_to_dp(row, delta, orders) for row in np.unique(counts.T @ rdp(keys[:, 0]), axis=0))
    if mechanism.pure:  # (Bun and Steinke, TCC 2016); basic composition sum c eps kept when smaller
        basic = eps * float((keys[:, 0] @ counts).max())
        return eps, min(basic, eps_user), (delta if eps_user < basic else 0.0)
    ones = rdp(np.ones(len(keys), np.int64))
    return max(rdp_to_dp(row, delta, orders) for row in ones), eps_user, delta


@checks(
    mechanism=Rule(lambda v: isinstance(v, CentralLaplace | Distributed), "a CentralLaplace or Distributed mechanism"),
    exposure=Rule(lambda v: isinstance(v, Mapping), "a mapping (c, n) -> per-user counts"),
    delta=OPEN_UNIT,
)
def epsilon_by_user(mechanism: Mechanism, exposure: Mapping[tuple[int, int], np.ndarray], delta: float) -> np.ndarray:
    """Each user's epsilon over a whole run, from the releases that held her rewards (``exposure`` as in
    :func:`guarantee`): her RDP curves added up and converted at ``delta``, and for a pure mechanism the smaller
    of that and basic composition ``sum c eps``. A user in no release has 0. The largest is at most
    :func:`guarantee`'s per-user figure, which takes each bound's worst user before the smaller of the two.

    Returns
    -------
    numpy.ndarray
        (N,) float64; empty when ``exposure`` is.

    Examples
    --------
    >>> import numpy as np
    >>> exposure = {(1, 10): np.array([0, 1, 4])}  # user 2 was in four releases of 10 rewards
    >>> epsilon_by_user(CentralLaplace(0.5), exposure, 1e-6).round(3).tolist()
    [0.0, 0.5, 2.0]
    """
    keys = np.array(sorted(exposure), dtype=np.int64).reshape(-1, 2)
    if not keys.size:
        return np.zeros(0)
    counts = np.stack([np.asarray(exposure[(c, n)]) for c, n in keys.tolist()])  # (keys, users)
    eps = mechanism.epsilon
    curves = mechanism if isinstance(mechanism, Distributed) and not mechanism.pure else None
    orders = REAL_ORDERS if curves is None else curves.orders
    step = pure_dp_to_rdp(keys[:, 0][:, None] * eps, orders) if curves is None else curves.rdp(keys[:, 0], keys[:, 1])
    rows, inverse = np.unique(counts.T @ step, axis=0, return_inverse=True)
    out = np.array([rdp_to_dp(row, delta, orders) for row in rows])[inverse.ravel()]
    out[counts.sum(axis=0) == 0] = 0.0
    if mechanism.pure:
        out = np.minimum(out, eps * (keys[:, 0] @ counts).astype(np.float64))
    return out
