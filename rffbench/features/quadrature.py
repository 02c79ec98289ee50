"""Quadrature features: ``ssr`` (stochastic spherical-radial rules) and ``gauss_hermite``
(subsampled dense-grid Gauss-Hermite, Dao, De Sa & Re 2017; class docs).

``ssr``: stochastic spherical-radial quadrature features (Munkhoeva, Kapushev, Burnaev &
Oseledets, NeurIPS 2018), for the Gaussian and the arc-cosine kernels.

These kernels are Gaussian integrals, k = E_{w ~ N(0, I)} f(w): the Gaussian kernel with
f(w) = cos(w.(x - y) / l), the arc-cosine kernels with f(w) = 2 g(w.x / l) g(w.y / l),
g = step (order 0) or relu (order 1).  The randomised degree-(3, 3) spherical-radial rule
(Genz & Monahan 1998) estimates E f(w) without bias by

    (1 - d / rho^2) f(0) + d / (2 (d + 1) rho^2) sum_{j=1}^{d+1} [f(rho Q v_j) + f(-rho Q v_j)]

with v_1..v_{d+1} the unit vertices of a regular simplex (v_i.v_j = -1/d), Q a Haar
rotation and rho ~ chi(d + 2).  The map averages n independent rules (Q_i, rho_i), so
D = 2 n (d + 1): per node a = rho Q v_j / l the features sqrt(c) [cos a.x, sin a.x]
(Gaussian) or sqrt(c) [g(a.x), g(-a.x)] (arc-cosine), c = d / ((d + 1) rho^2 n).

The centre term (1 - d / rho^2) f(0) is left out: it is 0 for the arc-cosine kernels
(g(0) = 0) and, for the Gaussian kernel (f(0) = 1), it has mean 1 - d E[1/rho^2] = 0, so
the estimate stays unbiased without it.  The paper adds it to the kernel estimate as a
control variate; as a sum of n such terms can be negative, it is not an inner product of
features and cannot be part of a feature map.  Randomised (seeded), unbiased (tested),
no i.i.d. variance formula or published uniform bound (``variance = None``).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _numba as nbk
from ..errors import ConfigError
from .fourier import FeatureMap, FourierMap, check_even, project_into


def simplex_vertices(d):
    """The d + 1 unit vertices of a regular simplex centred at 0 in R^d (rows), v_i.v_j =
    -1/d for i != j: the centred standard basis of R^(d+1) in an orthonormal basis of its
    hyperplane."""
    E = np.eye(d + 1) - 1.0 / (d + 1)
    U = np.linalg.svd(E)[0][:, :d]
    V = E @ U
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def haar_rotation(d, rng):
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


class SphericalRadialFeatures(FeatureMap):
    """Stochastic spherical-radial quadrature features (Munkhoeva et al. 2018): n randomised
    degree-3 rules, D = 2 n (d + 1).

    Attributes: ``random_weights_`` (d, n (d + 1)) the nodes rho_i Q_i v_j / l,
    ``node_weights_`` (n (d + 1),) sqrt(d / ((d + 1) rho_i^2 n)), ``n_rules_``,
    ``n_components_`` = 2 n (d + 1) (n_components rounded to rules, with a warning, in
    Python; a run refuses a D that is not a multiple of 2 (d + 1))."""

    name = "ssr"
    KERNELS = ("gaussian", "arccos0", "arccos1")
    KERNEL_REASON = ("the spherical-radial rule integrates against a standard Gaussian: the "
                     "Gaussian kernel's spectral density or the arc-cosine kernels' directions")
    SPARSE_NATIVE = True

    @classmethod
    def n_freq_for(cls, n_components, **params):
        return n_components // 2  # nodes: each gives 2 features

    @classmethod
    def check_data(cls, n_components, n_samples, d=None):
        if d is None:
            return
        block = 2 * (d + 1)
        if n_components % block:
            lo = max(block, n_components // block * block)
            raise ConfigError(
                f"D={n_components} is not allowed for features=ssr with d={d}: a spherical-"
                f"radial rule gives 2 (d + 1) = {block} features, so D = 2 n (d + 1); use a "
                f"multiple of {block}, e.g. D={lo} or D={lo + block} (or D_n=n for every map)")

    def _fit(self, X, rng):
        d, D = X.shape[1], self.n_components
        block = 2 * (d + 1)
        n = max(1, round(D / block))
        if n * block != D:  # a run refuses this beforehand (check_data)
            warnings.warn(f"n_components={D} is not a multiple of 2 (d + 1) = {block}: ssr uses "
                          f"{n} rule(s), {n * block} features", UserWarning, stacklevel=3)
        self.n_components_ = n * block
        V = simplex_vertices(d)
        nodes, weights = [], []
        for _ in range(n):
            rho = np.sqrt(rng.chisquare(d + 2))
            nodes.append(rho * V @ haar_rotation(d, rng).T)
            weights.append(np.full(d + 1, np.sqrt(d / ((d + 1) * rho**2 * n))))
        W = np.vstack(nodes) / self.kernel_.ls
        self.random_weights_ = np.ascontiguousarray(W.T, dtype=X.dtype)
        self.node_weights_ = np.concatenate(weights).astype(X.dtype)
        self._w_absmax = np.abs(self.random_weights_).max(axis=1).astype(np.float64)
        self.n_rules_ = n
        self.n_freq_ = n * (d + 1)

    @property
    def _n_features_out(self):
        return self.n_components_

    def _transform_into(self, X, out):
        m = self.n_freq_
        project_into(X, self._as("random_weights_", X.dtype), out[:, :m])
        w = self._as("node_weights_", np.float64)
        if self.kernel_.name == "gaussian":
            bound = np.asarray(abs(X) @ self._w_absmax.astype(X.dtype), dtype=np.float64)
            nbk.sincos_pairs_inplace(out, m, 1.0, bound)
        else:
            out[:, m:] = out[:, :m]
            out[:, m:] *= -1.0
            nbk.arccos_features_inplace(out, self.kernel_.order, 1.0)
        nbk.scale_columns_inplace(out, np.concatenate([w, w]))


class GaussHermiteFeatures(FourierMap):
    """Subsampled dense-grid Gauss-Hermite features (Dao, De Sa & Re, NIPS 2017) for the
    Gaussian kernel: each frequency coordinate drawn from the m-node Gauss-Hermite rule.

    The tensor-product rule of m nodes per coordinate integrates E cos(w.(x - y) / l) exactly for
    polynomials of degree 2m - 1 per coordinate, but has m^d nodes; the map samples D/2 of them
    with probability = their weight (each coordinate independently: node a_k = sqrt(2) t_k with
    probability w_k / sqrt(pi), t_k, w_k the physicists' rule) and takes cos/sin pairs (the
    ``rff_pairs`` transform).  The expectation is the grid's value prod_i sum_k p_k
    cos(a_k delta_i / l), not k itself: biased by the rule's quadrature error, which vanishes as
    m grows (documented, measured by ``grid_kernel``).  Attributes: ``random_weights_``
    (d, D/2), ``nodes_``, ``node_probs_``."""

    name = "gauss_hermite"
    pairs = True
    KERNELS = ("gaussian",)
    KERNEL_REASON = "Gauss-Hermite nodes integrate against a Gaussian spectral density only"
    BIAS = ("the m-node Gauss-Hermite rule's quadrature error: E z(x).z(y) = prod_i sum_k p_k "
            "cos(a_k delta_i / l), not exp(-|delta|^2 / (2 l^2)); it vanishes as "
            "features.params.nodes grows")

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, nodes=5):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.nodes = nodes

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        super().check_params(n_components, kernel, **params)
        check_even(cls.name, n_components)
        m = params.get("nodes", 5)
        if isinstance(m, bool) or not isinstance(m, int) or not 2 <= m <= 100:
            raise ConfigError(f"features.params.nodes={m!r} is not allowed: use an integer in "
                              "2..100 (Gauss-Hermite nodes per coordinate)")

    def map_params(self):
        return dict(nodes=self.nodes)

    @staticmethod
    def rule(m):
        """(nodes a_k, probabilities p_k) of the m-node rule for E over N(0, 1)."""
        t, w = np.polynomial.hermite.hermgauss(m)
        return np.sqrt(2.0) * t, w / np.sqrt(np.pi)

    def grid_kernel(self, delta):
        """The expectation of the estimate at x - y = delta (rows): the tensor rule's value."""
        a, p = self.rule(self.nodes)
        t = np.asarray(delta, dtype=np.float64)[..., None] * a / self.kernel_.ls
        return np.prod(np.sum(p * np.cos(t), axis=-1), axis=-1)

    def _draw(self, d, m, rng):
        a, p = self.rule(self.nodes)
        self.nodes_, self.node_probs_ = a.astype(self._dtype), p.astype(self._dtype)
        return a[rng.choice(self.nodes, size=(m, d), p=p)] / self.kernel_.ls, None
