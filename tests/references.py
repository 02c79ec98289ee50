"""Plain-numpy references of every built-in kernel, each written from its formula (scipy's
distances and Bessel functions, scikit-learn's kernels), never from rffbench's code: the
exact Grams, the fused products and the differential suite are compared against them."""
import itertools
import math

import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import gamma as gamma_fn
from scipy.special import kv
from sklearn.gaussian_process.kernels import RationalQuadratic as RQ
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel


def matern_reference(X, Y, ls, nu=1.5):
    """The Bessel form; below r = 1e-12 its limit 1 (the form is 0 * inf there; the error
    of the limit is O(r^2))."""
    r = cdist(X, Y) * math.sqrt(2 * nu) / ls
    with np.errstate(invalid="ignore", over="ignore"):
        k = 2 ** (1 - nu) / gamma_fn(nu) * r**nu * kv(nu, r)
    k[r < 1e-12] = 1.0
    return k


def arccos_reference(X, Y, order, ls):
    """Cho & Saul's closed form: k_n = |x|^n |y|^n J_n(theta) / pi of x / l, y / l (step(0)
    = 0: a zero vector has k_0 = 0 with anything; any other row, however small, has its
    angle: the norms by hypot, which never squares, and the cosine of the unit rows)."""
    nx, ny = np.hypot.reduce(X, axis=1, initial=0.0), np.hypot.reduce(Y, axis=1, initial=0.0)
    U = X / np.where(nx > 0, nx, 1.0)[:, None]
    V = Y / np.where(ny > 0, ny, 1.0)[:, None]
    c = np.clip(U @ V.T, -1, 1)
    t = np.arccos(c)
    if order == 0:
        return np.where(np.outer(nx > 0, ny > 0), 1 - t / np.pi, 0.0)
    return np.outer(nx / ls, ny / ls) * (np.sin(t) + (np.pi - t) * c) / np.pi


def anova_reference(X, Y, p):
    """e_p of the coordinate products, by its definition: the sum over the p-subsets."""
    out = np.zeros((X.shape[0], Y.shape[0]))
    for S in itertools.combinations(range(X.shape[1]), p):
        S = list(S)
        out += np.prod(X[:, None, S] * Y[None, :, S], axis=-1)
    return out


def additive_chi2_reference(X, Y, ls):
    X, Y = X[:, None, :] / ls, Y[None] / ls
    s = X + Y
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, 2 * X * Y / np.where(s > 0, s, 1.0), 0.0).sum(-1)


def skewed_chi2_reference(X, Y, ls, skewedness=1.0):
    """prod_i sech((log(x_i + c) - log(y_i + c)) / (2 l)); at l = 1 scikit-learn's
    prod_i 2 sqrt((x_i + c)(y_i + c)) / (x_i + y_i + 2c)."""
    u = np.log(X[:, None, :] + skewedness) - np.log(Y[None] + skewedness)
    return np.prod(1.0 / np.cosh(u / (2 * ls)), axis=-1)


#: kernel name -> f(X, Y, ls, **params) in float64
REFERENCES = {
    "gaussian": lambda X, Y, ls: np.exp(-cdist(X, Y, "sqeuclidean") / (2 * ls**2)),
    "laplacian": lambda X, Y, ls: np.exp(-cdist(X, Y, "cityblock") / ls),
    "cauchy": lambda X, Y, ls: np.prod(1.0 / (1.0 + (X[:, None, :] - Y[None, :, :]) ** 2
                                              / ls**2), axis=-1),
    "matern": matern_reference,
    "rational_quadratic": lambda X, Y, ls, alpha=2.0: RQ(length_scale=ls, alpha=alpha)(X, Y),
    "linear": lambda X, Y, ls: linear_kernel(X, Y) / ls**2,
    "arccos0": lambda X, Y, ls: arccos_reference(X, Y, 0, ls),
    "arccos1": lambda X, Y, ls: arccos_reference(X, Y, 1, ls),
    "polynomial": lambda X, Y, ls, degree=2, coef0=1.0: polynomial_kernel(
        X, Y, degree=degree, gamma=1 / ls**2, coef0=coef0),
    "exp_dot": lambda X, Y, ls: np.exp(X @ Y.T / ls**2),
    "anova": lambda X, Y, ls, degree=2: anova_reference(X / ls, Y / ls, degree),
    "additive_chi2": additive_chi2_reference,
    "skewed_chi2": skewed_chi2_reference,
    "intersection": lambda X, Y, ls: np.minimum(X[:, None, :], Y[None]).sum(-1) / ls,
    "sech": lambda X, Y, ls: np.prod(1.0 / np.cosh((X[:, None, :] - Y[None]) / ls), axis=-1),
}


def reference_gram(name, X, Y, ls, **params):
    """The independent reference of kernel ``name``; a kernel without one is an error (a new
    kernel needs its reference here, never a neighbour's formula)."""
    if name not in REFERENCES:
        raise KeyError(f"no reference Gram for kernel {name!r}: add one to REFERENCES")
    return REFERENCES[name](np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64),
                            ls, **params)
