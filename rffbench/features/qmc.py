"""``qmc``: quasi-Monte Carlo random features (Yang, Sindhwani, Avron, Mahoney, ICML 2014).

The frequencies are a scrambled low-discrepancy point set t_1..t_m in
(0, 1)^u (``sequence``: ``sobol`` or ``halton``, scipy.stats.qmc, seeded,
or ``generalized_halton``, below), mapped by the inverse CDF of the kernel's
spectral density
(:meth:`Kernel.frequencies_from_uniform`): Gaussian Phi^-1(t)/l, Laplacian
Cauchy quantiles, Cauchy Laplace quantiles, Matern as a Gaussian scale
mixture (u = d + 1 coordinates: d normals and one chi-square, an exact
measure-preserving map, so the construction is the same as for the others).
For ``pairs=false`` the offsets b come from one more coordinate, 2 pi t.
Each randomly scrambled point is uniform, so the estimate is unbiased.  The
arc-cosine kernels take the same Gaussian directions (Phi^-1(t) / l) with their
step / relu activation.

``generalized_halton`` is the sequence of the ``ghalton`` package that
Munkhoeva et al. (2018) used for their QMC baseline (Faure & Lemieux 2009):
points k = 1..m of the Halton sequence in the first u primes p_j, each digit a
of k in base p_j replaced by sigma_j(a), sigma_j a random permutation of
0..p_j - 1 that fixes 0 (one per coordinate, drawn from the seed; ghalton seeds
C's rand() with the time in seconds, which is why the authors' 500 runs hold
only about 20 distinct draws).  As sigma_j(0) = 0 the points are not uniform:
the estimate is biased (a deterministic-style QMC rule with random digit
permutations, ``get_tags().bias``), as theirs.
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from ..checks import Key, OneOf
from ..errors import ConfigError
from .base import PAIRS_KEY
from .fourier import FourierMap

SEQUENCES = ("sobol", "halton", "generalized_halton")
#: scipy's Sobol sequence has direction numbers for at most this many dimensions
SOBOL_MAX_DIM = 21201
#: uniforms are clipped to [TINY, 1 - TINY] before the inverse CDF (a scrambled
#: point can be exactly 0)
TINY = 2.0**-53


class QuasiMonteCarloFeatures(FourierMap):
    """Quasi-Monte Carlo features (Yang et al. 2014): scrambled low-discrepancy frequencies
    through the spectral inverse CDF.

    Parameters
    ----------
    pairs : bool, default True
        cos/sin pairs (D even) or cos + offset (shift-invariant kernels only).
    sequence : {"sobol", "halton", "generalized_halton"}, default "sobol"
        The low-discrepancy sequence (scrambled Sobol or Halton: unbiased;
        generalized_halton: ghalton's digit permutations, biased).
    """

    name = "qmc"
    tags = {"variance": None}  # not i.i.d.: no exact variance formula, no published bound
    CONFIG_PARAMS = {"pairs": PAIRS_KEY,
                     "sequence": Key("sobol", OneOf(SEQUENCES), "the low-discrepancy sequence: "
                                     "sobol, halton or generalized_halton")}
    constraints = {"sequence": OneOf(SEQUENCES)}
    EXTRA_KERNELS = ("arccos0", "arccos1", "linear")
    KERNEL_NEEDS = ("frequencies_from_uniform",)

    def get_tags(self):
        """The class's tags, with the bias of ``sequence=generalized_halton``."""
        if self.sequence == "generalized_halton":
            return replace(type(self).tags, bias=(
                "sequence=generalized_halton: digit permutations that fix 0 do not make the "
                "points uniform (as the ghalton sequence of Munkhoeva et al. 2018)"))
        return type(self).tags

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, pairs=True, sequence="sobol"):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.pairs = pairs
        self.sequence = sequence

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, kernel=None, pairs=True,
                   sequence="sobol", **params):
        """The sequence must exist in the dimension the map draws in (Sobol: at most
        SOBOL_MAX_DIM) and its state fit in memory (scrambled Halton keeps permutations of
        0..p - 1 for each of the first u primes p: 74 GB at u = 30,000)."""
        if d is None:
            return
        u = sequence_dims(kernel, d, pairs)
        why = sequence_problem(sequence, u)
        if why is None:
            return
        others = [q for q in SEQUENCES if q != sequence and sequence_problem(q, u) is None]
        raise ConfigError(f"features.sequence={sequence!r} is not allowed with d={d}: {why}; "
                          + (f"use features.sequence={' or '.join(others)}" if others
                             else "use another map (e.g. features=rff)"))

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """FourierMap's, and the low-discrepancy sequence's points and state."""
        u = sequence_dims(params.get("kernel"), d, params.get("pairs", True))
        m = cls.n_freq_for(n_components, **params)
        return super().memory_bytes(n_rows, d, n_components, itemsize, train_rows, **params) \
            + 16.0 * m * u + sequence_bytes(params.get("sequence", "sobol"), u)

    def _draw(self, d, m, rng):
        from scipy.stats import qmc

        ud = self.kernel_.uniform_dims(d)
        u = ud + (0 if self.pairs else 1)
        self.check_data(self.n_components, m, d, self.kernel_, self.pairs, self.sequence)
        seed = np.random.default_rng(rng.integers(2**63))
        if self.sequence == "generalized_halton":
            T = np.clip(generalized_halton(m, u, seed), TINY, 1.0 - TINY)
        else:
            engine = qmc.Sobol(u, scramble=True, seed=seed) if self.sequence == "sobol" \
                else qmc.Halton(u, scramble=True, seed=seed)
            with warnings.catch_warnings():  # Sobol's balance warning for m not a power of 2
                warnings.simplefilter("ignore", UserWarning)
                T = np.clip(engine.random(m), TINY, 1.0 - TINY)
        W = self.kernel_.frequencies_from_uniform(T[:, :ud], d)
        offset = None if self.pairs else 2.0 * np.pi * T[:, -1]
        return W, offset


def first_primes(n):
    """The first n primes (a sieve up to the bound p_n < n (ln n + ln ln n), n >= 6)."""
    import math

    if n <= 0:
        return []
    top = 15 if n < 6 else int(n * (math.log(n) + math.log(math.log(n)))) + 1
    sieve = np.ones(top + 1, dtype=bool)
    sieve[:2] = False
    for p in range(2, int(top ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p::p] = False
    return [int(p) for p in np.flatnonzero(sieve)[:n]]


def sequence_dims(kernel, d, pairs=True):
    """The dimension u of the points the map draws: the kernel's uniform coordinates for
    d inputs (d; Matern d + 1), one more for the offsets when ``pairs`` is false."""
    from ..kernels import KERNELS, Kernel

    k = kernel if isinstance(kernel, Kernel) else \
        KERNELS[kernel]() if kernel is not None else None
    return (k.uniform_dims(d) if k is not None else d) + (0 if pairs in (True, None) else 1)


def sequence_bytes(sequence, u):
    """Bytes of the sequence's own state in dimension u: scipy's scrambled Halton holds
    ceil(54 / log2 p) - 1 permutations of 0..p - 1 (int64) for each of the first u primes
    p; generalized_halton one permutation at a time; Sobol its direction numbers."""

    if sequence == "halton":
        primes = np.asarray(first_primes(u), dtype=np.float64)
        counts = np.ceil(54.0 / np.log2(primes)) - 1
        return float(8.0 * np.sum(counts * primes))
    if sequence == "generalized_halton":
        return 16.0 * (first_primes(u)[-1] if u else 0)
    return 8.0 * 32 * u * 2


def sequence_problem(sequence, u):
    """Why ``sequence`` cannot give u-dimensional points here (None: it can)."""
    from ..memory import MEMORY_FRACTION, available_bytes, human

    if sequence == "sobol" and u > SOBOL_MAX_DIM:
        return (f"scipy's Sobol sequence has at most {SOBOL_MAX_DIM} dimensions and the map "
                f"draws {u}-dimensional points")
    if sequence == "generalized_halton" and u == 1:
        return ("in one dimension the sequence has no randomness: base 2's only digit "
                "permutation that fixes 0 is the identity, so every random_state (seed) gives "
                "the same frequencies and redraws would measure no spread")
    need, avail = sequence_bytes(sequence, u), available_bytes()
    if avail is not None and need > MEMORY_FRACTION * avail:
        return (f"the {sequence} sequence's permutations in {u} dimensions need {human(need)}, "
                f"more than {MEMORY_FRACTION:.0%} of the {human(avail)} available")
    return None


def generalized_halton(m, u, rng):
    """Points 1..m of the generalized Halton sequence in (0, 1)^u (module docs): the radical
    inverse of k in the j-th prime base p_j with each digit mapped by a random permutation
    of 0..p_j - 1 that fixes 0.  Returns (m, u) float64."""
    k = np.arange(1, m + 1, dtype=np.int64)
    out = np.empty((m, u))
    for j, p in enumerate(first_primes(u)):
        sigma = np.concatenate([[0], 1 + rng.permutation(p - 1)]).astype(np.float64)
        rest, value, scale = k.copy(), np.zeros(m), 1.0 / p
        while rest.any():
            value += sigma[rest % p] * scale
            rest //= p
            scale /= p
        out[:, j] = value
    return out


#: the maps this module registers (rffbench.features collects them)
MAPS = (QuasiMonteCarloFeatures,)
