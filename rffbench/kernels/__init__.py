"""Kernels: exact Gram, and for the shift-invariant ones k(delta), a spectral sampler and
sigma_p^2.  One module per family: :mod:`.stationary` (shift-invariant), :mod:`.dot_product`
(arc-cosine, polynomial), :mod:`.chi2`; :mod:`.base` holds :class:`Kernel`.

``KERNELS`` maps the config name to the class.  All kernels are normalised,
k(0) = 1, and parametrised by a lengthscale ``l`` (docs/theory.md, section 4); the
shift-invariant ones (``skewed_chi2`` in log(x + c)):

==================  =================================  ==============================  =============
name                k(delta)                           frequencies omega               sigma_p^2
==================  =================================  ==============================  =============
gaussian            exp(-|delta|_2^2 / (2 l^2))        N(0, I / l^2)                   d / l^2
laplacian           exp(-|delta|_1 / l)                each coordinate                 inf
                                                       Cauchy(0, 1/l)
cauchy              prod_j 1 / (1 + delta_j^2 / l^2)   each coordinate                 2 d / l^2
                                                       Laplace(0, 1/l)
matern              2^(1-nu)/Gamma(nu) (sqrt(2 nu)     z sqrt(2 nu / g) / l,           d nu /
  (nu)              r/l)^nu K_nu(sqrt(2 nu) r / l),    z ~ N(0, I), g ~ chi2(2 nu)     ((nu-1) l^2),
                    r = |delta|_2                                                      inf for
                                                                                       nu <= 1
rational_quadratic  (1 + |delta|^2 / (2 alpha l^2))    z sqrt(tau) / l, z ~ N(0, I),   d / l^2
  (alpha)           ^-alpha                            tau ~ Gamma(alpha, rate alpha)
sech                prod_j sech(delta_j / l)           each coordinate (2 / (pi l))    d / l^2
                                                       log tan(pi u / 2)
skewed_chi2         prod_j sech(delta_j / (2 l)),      each coordinate (1 / (pi l))    d / (4 l^2)
  (c)               delta_j = log(x_j + c)             log tan(pi u / 2)
                              - log(y_j + c)
==================  =================================  ==============================  =============

(sigma_p^2 = E|w|^2.)  Note the swap: the *Laplacian* kernel has Cauchy frequencies, the
*Cauchy* kernel Laplace frequencies.

``lengthscale`` is a positive number, ``"median"`` (the default, in Python
as on the command line): the median pairwise distance, in the kernel's own
metric (L1 for ``laplacian``, L2 otherwise), of a seeded subsample of at most
``median_subsample`` training points, or ``"knn<k>"`` (e.g. ``knn50``): the mean
distance of those points to their k-th nearest neighbour among them (the bandwidth
rule of Yu et al. 2016's ORF experiments: k = 50 on 1000 points); a rule is
resolved by :meth:`Kernel.fit` into ``lengthscale_``.  ``gamma`` is scikit-learn's
parameter, an alternative to the lengthscale where scikit-learn has the kernel: ``gaussian``
gamma = 1/(2 l^2)
(``rbf_kernel``, ``RBFSampler``), ``laplacian`` gamma = 1/l
(``laplacian_kernel``); giving both gamma and a numeric lengthscale is an error.

Kernels are callables, ``k(X, Y)`` = the Gram matrix, so a fitted kernel can be
given to scikit-learn estimators that take one (``SVC(kernel=k)``).

``KERNELS`` is a :class:`~rffbench.registry.Registry`: plug-ins add kernels
through the entry-point group ``rffbench.kernels`` (subclasses of Kernel).
"""
from __future__ import annotations

from sklearn.base import clone

from ..errors import ConfigError
from ..registry import Registry, subclass_check
from . import chi2, dot_product, stationary
from .base import (
    DIRECT_SQDIST_MAX_D,
    GRAM_BLOCK_ROWS,
    LENGTHSCALE_RANGE,
    MAX_KERNEL_VALUE,
    MEDIAN_SUBSAMPLE,
    Kernel,
    TileSpec,
    check_lengthscale,
    data_rule,
    max_row_norm,
)
from .dot_product import DotProductKernel, NotShiftInvariant

#: the modules of rffbench's kernels, each listing its kernels in ``KERNELS`` (a new kernel
#: in one of them is its class and its entry there)
FAMILIES = (stationary, dot_product, chi2)

KERNELS = Registry("rffbench.kernels", "kernel",
                   {cls.name: cls for module in FAMILIES for cls in module.KERNELS},
                   subclass_check(Kernel, "a kernel", hooks=[("tile_spec", "_gram_into")]))
#: every kernel class by its class name (``from rffbench.kernels import Matern``)
globals().update({cls.__name__: cls for module in FAMILIES for cls in module.KERNELS})

__all__ = ["KERNELS", "FAMILIES", "Kernel", "TileSpec", "make_kernel", "kernel_with",
           "data_rule", "check_lengthscale", "max_row_norm", "NotShiftInvariant",
           "DotProductKernel", "DIRECT_SQDIST_MAX_D",
           "GRAM_BLOCK_ROWS", "LENGTHSCALE_RANGE", "MAX_KERNEL_VALUE", "MEDIAN_SUBSAMPLE",
           *(cls.__name__ for module in FAMILIES for cls in module.KERNELS)]


def kernel_with(kernel, lengthscale=None, gamma=None):
    """An unfitted copy of ``kernel`` (name or Kernel) with ``lengthscale`` / ``gamma`` set
    if given: how maps and exact estimators take the kernel's scale as their own parameter.
    Giving them both here and on a Kernel instance is a ConfigError."""
    k = clone(make_kernel(kernel))
    given = {n: v for n, v in (("lengthscale", lengthscale), ("gamma", gamma)) if v is not None}
    if given:
        if isinstance(kernel, Kernel) and (data_rule(kernel.lengthscale) is None
                                           or kernel.gamma is not None):
            raise ConfigError(f"{', '.join(f'{n}={v!r}' for n, v in given.items())} given to the "
                              f"estimator and lengthscale={kernel.lengthscale!r}, gamma="
                              f"{kernel.gamma!r} to its kernel: set them in one place")
        k.set_params(**given)
    return k


def make_kernel(kernel, **params):
    """A Kernel instance from a Kernel (returned as is) or a registry name.  A parameter
    the class does not take is an error (ConfigError naming it and what the class takes),
    never dropped.

    Parameters
    ----------
    kernel : str or Kernel
        A registered name (or, on the command line, an import path) or an instance.
    **params
        The class's parameters (lengthscale, gamma, its own, e.g. nu).

    Returns
    -------
    Kernel
        Unfitted (call :meth:`Kernel.fit`), or ``kernel`` itself when it is an instance.
    """
    if isinstance(kernel, Kernel):
        return kernel
    cls = KERNELS.get_or_raise(kernel)
    names = set(cls._get_param_names())
    unknown = sorted(set(params) - names)
    if unknown:
        raise ConfigError(f"kernel={kernel}: {', '.join(unknown)} is not a parameter of "
                          f"{cls.__name__}: it takes {', '.join(sorted(names))}")
    return cls(**params)
