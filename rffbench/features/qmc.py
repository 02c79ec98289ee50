"""``qmc``: quasi-Monte Carlo random features (Yang, Sindhwani, Avron, Mahoney, ICML 2014).

The frequencies are a scrambled low-discrepancy point set t_1..t_m in
(0, 1)^u (``sequence``: ``sobol`` or ``halton``, scipy.stats.qmc, seeded),
mapped by the inverse CDF of the kernel's spectral density
(:meth:`Kernel.frequencies_from_uniform`): Gaussian Phi^-1(t)/l, Laplacian
Cauchy quantiles, Cauchy Laplace quantiles, Matern as a Gaussian scale
mixture (u = d + 1 coordinates: d normals and one chi-square, an exact
measure-preserving map, so the construction is the same as for the others).
For ``pairs=false`` the offsets b come from one more coordinate, 2 pi t.
Each randomly scrambled point is uniform, so the estimate is unbiased.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import ConfigError
from .fourier import FourierMap

SEQUENCES = ("sobol", "halton")
#: uniforms are clipped to [TINY, 1 - TINY] before the inverse CDF (a scrambled
#: point can be exactly 0)
TINY = 2.0**-53


class QuasiMonteCarloFeatures(FourierMap):
    """Quasi-Monte Carlo features (Yang et al. 2014): scrambled low-discrepancy frequencies
    through the spectral inverse CDF."""

    name = "qmc"
    variance = None  # not i.i.d.: no exact variance formula, no published bound
    CONFIG_PARAMS = ("pairs", "sequence")

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, pairs=True, sequence="sobol"):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.pairs = pairs
        self.sequence = sequence

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        super().check_params(n_components, kernel, **params)
        seq = params.get("sequence", "sobol")
        if seq not in SEQUENCES:
            raise ConfigError(f"features.sequence={seq!r} is not allowed: use one of "
                              f"{', '.join(SEQUENCES)}")

    def _draw(self, d, m, rng):
        from scipy.stats import qmc

        ud = self.kernel_.uniform_dims(d)
        u = ud + (0 if self.pairs else 1)
        seed = np.random.default_rng(rng.integers(2**63))
        engine = qmc.Sobol(u, scramble=True, seed=seed) if self.sequence == "sobol" \
            else qmc.Halton(u, scramble=True, seed=seed)
        with warnings.catch_warnings():  # Sobol's balance warning for m not a power of 2
            warnings.simplefilter("ignore", UserWarning)
            T = np.clip(engine.random(m), TINY, 1.0 - TINY)
        W = self.kernel_.frequencies_from_uniform(T[:, :ud], d)
        offset = None if self.pairs else 2.0 * np.pi * T[:, -1]
        return W, offset
