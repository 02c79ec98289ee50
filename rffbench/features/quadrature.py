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
rotation and rho ~ chi(d + 2).  Why it is unbiased for any dependence between the nodes:
E[d / rho^2] = 1 and, per node, the chi(d + 2) density times d / rho^2 is the chi(d)
density, so E[(d / rho^2) f(rho u)] = E f(w) for u uniform on the sphere; the first term
has mean 0.

The map averages independent rules (Q_i and the radii).  ``radius="vertex"`` (the default,
as the authors' code draws it) gives every simplex vertex its own radius rho_ij (shared by
v_j and -v_j); ``radius="rule"`` one radius per rule, the textbook rule, exact for
polynomials of degree 3 (tested).  Per node a = rho_ij Q_i v_j / l with weight
c_ij = d / rho_ij^2:

* Gaussian kernel (f even: the reflected node repeats the term): N = D/2 nodes, features
  sqrt(c / N) [cos a.x, sin a.x]; D = 2 n (d + 1) for n rules.
* arc-cosine kernels: nodes and their reflections, N = D directions, features
  sqrt(2 c / N) g(+-a.x); D = 2 n (d + 1) for n rules.

The centre term (``centre=True``, the default) is the constant
f(0) (1 - mean c_ij): ``kernel_offset_``, added to z(x).z(y) in every kernel estimate (it
has mean 0 and can be negative, so it is not a feature).  f(0) = 1 for the Gaussian kernel;
2 g(0)^2 = 1/2 for the order-0 arc-cosine kernel with the step's midpoint g(0) = 1/2 (the
authors' heaviside(0) = 0.5); 0 for order 1 (relu(0) = 0; there the radius cancels).  It is
a control variate: measured on LETTER (x / max, gamma = 1/d, 550 + 550 points) it lowers
the relative Frobenius error of the Gaussian estimate about 100-fold (0.052 -> 0.00053 at
n = 1; ``centre=False`` keeps the plain average, unbiased too).  Randomised (seeded),
unbiased (tested), no i.i.d. variance formula or published uniform bound
(``variance = None``).
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _numba as nbk
from ..checks import BOOL, Int, OneOf
from ..errors import ConfigError
from .base import FeatureMap, check_even, project_into, trig_kernel
from .fourier import ZERO_TOL, FourierMap
from .structured import GAUSSIAN_DIRECTION_KERNELS

RADII = ("vertex", "rule")


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


def centre_value(kernel):
    """f(0) of the kernel's integrand (module docs): the centre term's factor."""
    if kernel.shift_invariant:
        return 1.0
    return 0.5 if kernel.order == 0 else 0.0


class SphericalRadialFeatures(FeatureMap):
    """Stochastic spherical-radial quadrature features (Munkhoeva et al. 2018): randomised
    degree-3 rules, D = 2 n (d + 1), with the rule's centre term as ``kernel_offset_``.

    Parameters (besides the common ones): ``radius`` ("vertex": a radius per simplex
    vertex, as the authors' code; "rule": one per rule), ``centre`` (bool, default True:
    the centre term f(0) (1 - mean d / rho^2) completes the estimate).

    Attributes: ``random_weights_`` (d, nodes) the nodes rho Q v_j / l, ``node_weights_``
    (nodes,) the square roots of the feature weights, ``radii_`` (nodes,), ``n_rules_``,
    ``n_components_`` = 2 n (d + 1) (n_components rounded to rules, with a warning, in
    Python; a run refuses a D that is not a multiple of 2 (d + 1)), ``kernel_offset_``."""

    constraints = {
        "radius": OneOf(RADII, text="use one of " + ", ".join(RADII) + " (a radius per simplex "
                                    "vertex, or per rule)"),
        "centre": BOOL,
    }

    name = "ssr"
    KERNELS = GAUSSIAN_DIRECTION_KERNELS
    KERNEL_REASON = ("the spherical-radial rule integrates against a standard Gaussian: the "
                     "Gaussian kernel's spectral density or the arc-cosine kernels' directions")
    tags = {"sparse_input": True}

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, radius="vertex", centre=True):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.radius = radius
        self.centre = centre

    def map_params(self):
        return dict(radius=self.radius, centre=self.centre)

    @classmethod
    def outputs_per_freq(cls, kernel=None, **params):
        return 2 if trig_kernel(kernel) else 1  # Gaussian: cos/sin per node

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        if d is None:
            return
        block = 2 * (d + 1)
        if n_components % block:
            lo = max(block, n_components // block * block)
            raise ConfigError.not_allowed(
                "D", int(n_components), f" for features=ssr with d={d}: a spherical-"
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
        nodes, radii = [], []
        for _ in range(n):
            Q = haar_rotation(d, rng)
            rho = np.sqrt(rng.chisquare(d + 2, size=d + 1 if self.radius == "vertex" else 1))
            nodes.append(np.broadcast_to(rho, (d + 1,))[:, None] * (V @ Q.T))
            radii.append(np.broadcast_to(rho, (d + 1,)))
        self.radii_ = np.concatenate(radii).astype(self._dtype)
        c = d / np.concatenate(radii) ** 2  # d / rho^2 per node, mean 1
        self.random_weights_ = np.ascontiguousarray((np.vstack(nodes) / self.kernel_.ls).T,
                                                    dtype=X.dtype)
        self._w_absmax = np.abs(self.random_weights_).max(axis=1).astype(np.float64)
        self.n_rules_ = n
        nodes_n = n * (d + 1)
        trig = self.kernel_.shift_invariant
        # Gaussian: sqrt(c / N) per cos/sin pair, N = nodes; arc-cosine: sqrt(2 c / N) per
        # direction, N = 2 nodes (the reflections): both sqrt(c / nodes)
        self.node_weights_ = np.sqrt(c / nodes_n).astype(self._dtype)
        self.n_freq_ = nodes_n if trig else 2 * nodes_n
        f0 = centre_value(self.kernel_)
        self.kernel_offset_ = f0 * (1.0 - float(np.mean(c))) if self.centre and f0 else 0.0

    @property
    def _n_features_out(self):
        return self.n_components_

    def _transform_into(self, X, out):
        m = self.n_components_ // 2
        project_into(X, self._as("random_weights_", X.dtype), out[:, :m])
        w = self._as("node_weights_", np.float64)
        bound = np.asarray(abs(X) @ self._w_absmax.astype(X.dtype), dtype=np.float64)
        if self.kernel_.shift_invariant:
            nbk.sincos_pairs_inplace(out, m, 1.0, bound)
        else:
            out[:, m:] = out[:, :m]
            out[:, m:] *= -1.0
            nbk.activation_inplace(out, self.kernel_.activation, 1.0, ZERO_TOL * bound)
        nbk.scale_columns_inplace(out, np.concatenate([w, w]))


class GaussHermiteFeatures(FourierMap):
    """Subsampled dense-grid Gauss-Hermite features (Dao, De Sa & Re, NIPS 2017) for the
    Gaussian kernel: each frequency coordinate drawn from the m-node Gauss-Hermite rule
    (for the arc-cosine kernels, the same grid directions with their step / relu; at m = 2
    the directions are Rademacher vectors, the ``GQ`` of Munkhoeva et al. 2018).

    The tensor-product rule of m nodes per coordinate integrates E cos(w.(x - y) / l) exactly for
    polynomials of degree 2m - 1 per coordinate, but has m^d nodes; the map samples D/2 of them
    with probability = their weight (each coordinate independently: node a_k = sqrt(2) t_k with
    probability w_k / sqrt(pi), t_k, w_k the physicists' rule) and takes cos/sin pairs (the
    ``rff_pairs`` transform).  The expectation is the grid's value prod_i sum_k p_k
    cos(a_k delta_i / l), not k itself: biased by the rule's quadrature error, which vanishes as
    m grows (documented, measured by ``grid_kernel``).  Attributes: ``random_weights_``
    (d, D/2), ``nodes_``, ``node_probs_``."""

    constraints = {"nodes": Int(2, 100, text="use an integer in 2..100 (Gauss-Hermite nodes per "
                                             "coordinate)")}

    name = "gauss_hermite"
    pairs = True
    KERNELS = GAUSSIAN_DIRECTION_KERNELS
    KERNEL_REASON = ("Gauss-Hermite nodes integrate against a standard Gaussian: the Gaussian "
                     "kernel's spectral density or the arc-cosine kernels' directions")
    tags = {"bias": ("the m-node Gauss-Hermite rule's quadrature error: E z(x).z(y) = prod_i "
                     "sum_k p_k cos(a_k delta_i / l), not exp(-|delta|^2 / (2 l^2)); it "
                     "vanishes as features.params.nodes grows")}

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, nodes=5):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.nodes = nodes

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        super().check_params(n_components, kernel, **params)
        if trig_kernel(kernel):
            check_even(cls.name, n_components)

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


#: the maps this module registers (rffbench.features collects them)
MAPS = (SphericalRadialFeatures, GaussHermiteFeatures)
