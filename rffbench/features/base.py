"""What every feature map shares: the base class ``FeatureMap`` (the scikit-learn
transformer idiom, checks, chunked transform), its capabilities (``MapTags``), the chunking
constants and helpers, and which registered maps represent a kernel (``maps_for_kernel``).

The families are one module each (``fourier.py``: rff, rff_pairs; ``structured.py``; ...);
a plug-in map subclasses :class:`FeatureMap` the same way (docs/python.md).
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _numba as nbk
from ..checks import BOOL, Check, Int, Key, ParamNamesOnce, declared, require
from ..errors import ConfigError
from ..kernels import Kernel, kernel_with, make_kernel
from .formulas import VARIANCE_TERMS

#: default chunk: about this many output elements per GEMM + pass (32 MB float64)
CHUNK_ELEMENTS = 1 << 22


def as_generator(random_state):
    """A numpy Generator from None, an int, a Generator or a legacy RandomState."""
    if isinstance(random_state, np.random.RandomState):
        random_state = random_state.randint(np.iinfo(np.int32).max)
    return np.random.default_rng(random_state)


#: features.pairs, a key of the maps with a ``pairs`` parameter: null (the default) leaves
#: the map's own default
PAIRS_KEY = Key(None, Check(lambda v: isinstance(v, bool), "use true, false or null (the "
                            "map's default)", ["yes", 1], none=True),
                "cos/sin pairs (D even) or cos + offset; null = the map's default")

#: FeatureMap.on_device: where a map transforms ("cuda": a GPU, or numba's CUDA simulator
#: where NUMBA_ENABLE_CUDASIM=1)
DEVICES = ("cpu", "cuda")
#: device=: where a run's maps transform (and its exact kernel products run).  A run on
#: numba's CUDA simulator is its own device, ``cuda_sim`` (its times are the simulator's,
#: on the CPU): in its records and its run id, never served to a run that asked for a GPU
RUN_DEVICES = ("cpu", "cuda", "cuda_sim")


def compute_device(device):
    """The device a run's ``device`` value computes on (on_device's): cuda for cuda_sim."""
    return "cuda" if device == "cuda_sim" else device


#: features.chunk_rows (the config block and every map's constructor)
CHUNK_ROWS = Int(1, none=True, text="use an integer >= 1 or null (automatic)")


@dataclass(frozen=True)
class MapTags:
    """What a feature map can do and what is known of its estimate, in one object (as
    scikit-learn's ``__sklearn_tags__``): read as ``cls.tags.variance``,
    ``fmap.get_tags().bias``."""

    #: the i.i.d. family whose exact variance formula and published bounds apply to the
    #: estimate: "rff" (cos + offset), "pairs" (cos/sin) or None (no formula, no bound)
    variance: Optional[str] = None
    #: None: z(x).z(y) is an unbiased estimate of k(x, y) (checked by
    #: rffbench.testing.check_feature_map); otherwise the documented bias, in words
    bias: Optional[str] = None
    #: no random parameters (a deterministic quadrature, e.g. sklearn_chi2): the same
    #: features for every random_state; its error is a bias, measured, not a variance
    deterministic: bool = False
    #: fit draws from the training rows themselves (landmarks, leverages, bin vocabulary):
    #: the records say so
    data_dependent: bool = False
    #: _fit/_transform_into take scipy.sparse CSR rows as they are (a projection X @ W);
    #: otherwise sparse input is densified one chunk of rows at a time
    sparse_input: bool = False
    #: transform returns scipy.sparse CSR (binning) instead of a dense array
    sparse_output: bool = False
    #: None: the sample variance of the estimate over redraws estimates its variance (the
    #: conformance check compares it with the formula); otherwise why it does not, in words
    #: (log-normal terms: a few hundred redraws miss the rare large ones that carry it)
    heavy_tails: Optional[str] = None
    #: None: fit is continuous in its input and in the order of its sums (the conformance
    #: checks compare float32 with float64 fits, and 1 with all threads, to rounding);
    #: otherwise why not, in words (k-means' local optima): those gaps are reported, not
    #: failed (the outputs' dtypes are still checked)
    unstable_fit: Optional[str] = None


#: the class attributes the tags replaced -> their tag (a subclass setting one is refused)
RETIRED_FLAGS = {"variance": "variance", "BIAS": "bias", "DETERMINISTIC": "deterministic",
                 "DATA_DEPENDENT": "data_dependent", "SPARSE_NATIVE": "sparse_input",
                 "sparse_output": "sparse_output"}
#: the dtypes a transform computes in (any other input is converted by validate_data)
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def _ready(fitted, X):
    """Whether ``X`` is already what scikit-learn's ``validate_data`` would return for a
    transform by ``fitted`` (fitted on arrays, not a DataFrame): a writeable C-contiguous
    float64 or float32 ndarray of its features' width, at least one row, all finite (its
    sum finite; a sum that overflows goes the long way).  Then it is used as it is: the
    long way took 0.3 ms a call (a tenth of rff's 1,348 x 64 -> 1,024 transform), nearly
    all of it looking for DataFrames and feature names; anything else takes it, with its
    conversions, warnings and errors."""
    if not (type(X) is np.ndarray and X.ndim == 2 and X.dtype in _FLOATS
            and X.flags.c_contiguous and X.flags.writeable and X.shape[0] > 0
            and X.shape[1] == getattr(fitted, "n_features_in_", -1)
            and not hasattr(fitted, "feature_names_in_")):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()))


class FeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ParamNamesOnce,
                 BaseEstimator):
    """Base of every rffbench feature map (and of plug-in maps: see rffbench.registry).

    Parameters
    ----------
    kernel : str or Kernel, default "gaussian"
        A registered kernel name or a :class:`~rffbench.kernels.Kernel` instance.
    n_components : int, default 100
        D, the output dimension.
    lengthscale : float or "median", default None
        The kernel's lengthscale; None keeps the kernel's own, whose default is
        ``"median"`` (resolved on the data given to ``fit``), as on the command line.
    gamma : float, default None
        scikit-learn's gamma instead of the lengthscale (gaussian: 1/(2 l^2),
        laplacian: 1/l).  Giving both, or either on the map and on a Kernel
        instance, is an error.
    random_state : None, int, Generator or RandomState
    chunk_rows : int, default None
        Rows per transform chunk; None = about 4M output elements.

    Notes
    -----
    Input may be dense or scipy.sparse (converted to CSR); fitted arrays and the
    output have the input's float dtype (float32 or float64).

    After ``fit``, ``kernel_offset_`` (a float, 0.0 unless the map's estimate has a
    constant term) completes the kernel estimate: k(x, y) ~ z(x).z(y) + ``kernel_offset_``
    (:meth:`kernel_estimate`).  A constant can be negative, so it is not a feature; the
    spherical-radial rules (``ssr``) use it for their centre term.

    Subclasses set ``name``, declare what differs from the base in ``tags`` (a dict merged
    into their parent's :class:`MapTags`) and implement ``_fit(X, rng)`` (X in the fit
    dtype, CSR if sparse and ``tags.sparse_input``; it may set ``kernel_offset_``) and
    ``_transform_into(X, out)``.
    """

    name = "feature_map"
    #: what the map can do and what is known of its estimate (:class:`MapTags`); a subclass
    #: writes only what differs, ``tags = {"variance": "rff"}``; :meth:`get_tags` gives an
    #: instance's (a tag may depend on the parameters: qmc's bias)
    tags = MapTags()
    #: the kernel's parameters when it is given by name and neither lengthscale nor gamma
    #: is (empty: the kernel's defaults, the median heuristic): a peer's own defaults (the
    #: sklearn_* maps: scikit-learn's samplers' gamma, coef0)
    KERNEL_DEFAULTS = {}
    #: where :meth:`transform` runs: "cpu", or "cuda" (set by :meth:`on_device`)
    device = "cpu"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        retired = sorted(set(RETIRED_FLAGS) & set(vars(cls)))
        if retired:  # a plug-in written for the flags the tags replaced: refused, by name
            raise TypeError(f"{cls.__qualname__} sets {', '.join(retired)}: declare them as "
                            "tags = {" + ", ".join(f"{RETIRED_FLAGS[r]!r}: ..." for r in retired)
                            + "} (rffbench.features.MapTags)")
        own = vars(cls).get("tags")
        if isinstance(own, dict):  # what differs from the parent's tags (found past cls)
            cls.tags = replace(super(cls, cls).tags, **own)

    def get_tags(self):
        """This instance's tags (the class's unless a parameter changes one)."""
        return type(self).tags

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        self.kernel = kernel
        self.n_components = n_components
        self.lengthscale = lengthscale
        self.gamma = gamma
        self.random_state = random_state
        self.chunk_rows = chunk_rows

    # -- parameter checks shared by fit and the config validation ----------
    #: parameters beyond the common ones that the config passes (features.<name>):
    #: ``{name: rffbench.checks.Key(config default, constraint, description)}``; the
    #: built-in maps' keys become the features block's (rffbench.config generates them)
    CONFIG_PARAMS = {}
    #: kernels the map can represent (None: every shift-invariant kernel and
    #: EXTRA_KERNELS, or every kernel if not SHIFT_INVARIANT_ONLY) and why only those
    KERNELS = None
    KERNEL_REASON = ""
    SHIFT_INVARIANT_ONLY = True
    #: kernels beyond the shift-invariant ones that a KERNELS = None map represents
    EXTRA_KERNELS = ()
    #: default of the ``pairs`` parameter for maps that have one
    PAIRS_DEFAULT = True
    #: the kernel's methods the map draws from (a plug-in kernel that leaves one of them
    #: to Kernel, e.g. without a spectral sampler, is refused by check_kernel, by name)
    KERNEL_NEEDS = ()

    #: the values of the map's own parameters (rffbench.checks), checked by
    #: :meth:`check_params` for the config (``features.NAME`` for CONFIG_PARAMS, else
    #: ``features.params.NAME``) and the Python API; a subclass adds its own
    constraints = {"pairs": BOOL}

    @classmethod
    def all_constraints(cls):
        """The constraints of the parameters this class takes (its own and its bases':
        :func:`rffbench.checks.declared`)."""
        return declared(cls)

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        """Raise ConfigError (naming the key) for an impossible D, kernel or parameter."""
        require(Int(1).ok(n_components), "D", n_components, "use an integer >= 1")
        cls.check_kernel(kernel)
        defaults = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()}
        for name, c in cls.all_constraints().items():
            value = params.get(name, cls.PAIRS_DEFAULT if name == "pairs" else defaults[name])
            key = f"features.{name}" if name in cls.CONFIG_PARAMS else f"features.params.{name}"
            require(c.ok(value), key, value, c.message())
        if "pairs" in cls.CONFIG_PARAMS and not trig_kernel(kernel) \
                and params.get("pairs", cls.PAIRS_DEFAULT) != cls.PAIRS_DEFAULT:
            raise ConfigError(f"features.pairs={params['pairs']!r} is not allowed with kernel="
                              f"{getattr(kernel, 'name', kernel)}: it has no effect (cos/sin "
                              "pairs or cos + offset are for shift-invariant kernels; the "
                              "arc-cosine kernels take one step / relu feature per direction)")
        if "pairs" in cls.CONFIG_PARAMS and params.get("pairs", cls.PAIRS_DEFAULT) \
                and trig_kernel(kernel):
            check_even(cls.name, n_components)

    @classmethod
    def check_kernel(cls, kernel):
        """Raise ConfigError (naming the maps that work) if the map cannot represent
        ``kernel`` (a name or a Kernel)."""
        kname = getattr(kernel, "name", kernel)
        if cls.KERNELS is not None and kname is not None and kname not in cls.KERNELS:
            raise ConfigError(f"features={cls.name} is not allowed with kernel={kname}: "
                              f"{cls.KERNEL_REASON}")
        if cls.KERNELS is None and cls.SHIFT_INVARIANT_ONLY and kname is not None \
                and kname not in cls.EXTRA_KERNELS:
            kcls = kernel_class(kernel)
            if kcls is not None and not kcls.shift_invariant:
                raise ConfigError(f"features={cls.name} is not allowed with kernel={kname}: it "
                                  "samples the spectral density of a shift-invariant kernel and "
                                  f"{kname} is not one; use features="
                                  f"{' or '.join(maps_for_kernel(kname))}")
        lacks = cls.kernel_lacks(kernel)
        if lacks:
            raise ConfigError(f"features={cls.name} is not allowed with kernel={kname}: the "
                              f"map draws from the kernel's {' and '.join(lacks)}, which "
                              f"{kname} does not implement (e.g. a kernel without a spectral "
                              f"sampler); use features={' or '.join(maps_for_kernel(kname))}")

    @classmethod
    def kernel_lacks(cls, kernel):
        """The methods of KERNEL_NEEDS that ``kernel``'s class leaves to Kernel."""
        from ..registry import unimplemented

        kcls = kernel_class(kernel)
        if kcls is None or not cls.KERNEL_NEEDS:
            return []
        return [alts[0] for alts in unimplemented(kcls, Kernel, [(m,) for m in cls.KERNEL_NEEDS])]

    @classmethod
    def exact_mse(cls, kernel, x, y, D, **params):
        """The exact mean squared error of the estimate at the pair (x, y) (float64 vectors)
        for D outputs of this map with the fitted shift-invariant ``kernel`` and the map's
        ``params``, or None where no formula is known.  Here: the i.i.d. family the map
        declares (``tags.variance``: Sutherland & Schneider 2015); a map with its own formula
        overrides it (positive, orf)."""
        if cls.tags.variance not in VARIANCE_TERMS or not kernel.shift_invariant:
            return None
        delta = kernel.warp(x) - kernel.warp(y)  # where the kernel is shift-invariant
        return VARIANCE_TERMS[cls.tags.variance](kernel.k_of_delta(delta),
                                            kernel.k_of_delta(2.0 * delta)) / D

    #: where the formula of a map's own :meth:`exact_mse` comes from (for the records)
    EXACT_MSE_SOURCE = ""

    @classmethod
    def exact_mse_source(cls):
        """The source of :meth:`exact_mse`'s formula, as the records cite it."""
        if cls.EXACT_MSE_SOURCE:
            return cls.EXACT_MSE_SOURCE
        return "Sutherland & Schneider 2015" if cls.tags.variance in VARIANCE_TERMS else ""

    @classmethod
    def outputs_per_freq(cls, kernel=None, **params):
        """Output columns per frequency (random direction): 2 for cos/sin pairs, else 1."""
        return 1

    @classmethod
    def n_freq_for(cls, n_components, kernel=None, **params):
        """Number of frequencies (random directions) behind an output of D = n_components."""
        return n_components // cls.outputs_per_freq(kernel, **params)

    @classmethod
    def n_components_for(cls, n_freq, kernel=None, **params):
        """The output dimension D of ``n_freq`` frequencies (``D_unit=frequencies``)."""
        return n_freq * cls.outputs_per_freq(kernel, **params)

    def map_params(self):
        """This instance's values of CONFIG_PARAMS."""
        return {k: getattr(self, k) for k in self.CONFIG_PARAMS}

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        """Raise ConfigError if the map cannot be fitted on ``n_samples`` rows of dimension
        ``d`` (checked once the data is loaded, before any measurement); ``params``: the
        map's configured parameters and ``kernel``."""

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Bytes to fit the map on ``train_rows`` rows of dimension d and hold the features
        of ``n_rows`` rows (the memory plan, rffbench.memory): dense frequencies (m x d,
        with a transposed and a cast copy), offsets, and the output."""
        m = cls.n_freq_for(n_components, **params)
        return 8.0 * (3 * d + 2) * m + float(n_rows) * n_components * itemsize

    def _check_chunk_rows(self):
        c = CHUNK_ROWS
        require(c.ok(self.chunk_rows), "features.chunk_rows", self.chunk_rows, c.message())

    def _validate(self, X, reset):
        if not reset and _ready(self, X):
            return X
        # writeable: a read-only input is copied, not compiled for (nbk.as_compiled_input)
        return validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                             reset=reset, order="C", force_writeable=True)

    def fit(self, X, y=None):
        """Draw the random parameters for inputs of X's dimension (and resolve a
        ``"median"`` lengthscale on X).

        Parameters
        ----------
        X : array or scipy.sparse matrix of shape (n_samples, n_features)
            Training rows (only their dimension, and for data-dependent maps or a "median"
            lengthscale, their values, are used).
        y : None
            Ignored (scikit-learn's transformer signature).

        Returns
        -------
        self
        """
        X = self._validate(X, reset=True)
        self.check_params(self.n_components, self.kernel, **self.map_params())
        self._check_chunk_rows()
        kernel, ls, gamma = self.kernel, self.lengthscale, self.gamma
        if ls is None and gamma is None and isinstance(kernel, str) and self.KERNEL_DEFAULTS:
            own = dict(self.KERNEL_DEFAULTS)  # a peer's defaults, as its library has them
            ls, gamma = own.pop("lengthscale", None), own.pop("gamma", None)
            kernel = make_kernel(kernel, **own) if own else kernel
        self.kernel_ = kernel_with(kernel, ls, gamma).fit(X)
        self.kernel_.check_values_on(X, what="the data given to fit")  # as a run does
        self.kernel_offset_ = 0.0
        self._cast_cache = {}
        self._dtype = X.dtype  # fitted arrays are kept in the input's dtype
        self._fit(X if self.tags.sparse_input or not sp.issparse(X) else DenseRows(X),
                  as_generator(self.random_state))
        return self

    def on_device(self, device):
        """This map (returned) with its :meth:`transform` on ``device``: "cpu", or "cuda"
        (the maps of ``rffbench.cuda.MAPS``; ``pip install -e '.[gpu]'``).  ``fit`` draws
        the parameters on the host either way, so one random_state gives the same features
        on both up to rounding.  Not a constructor parameter: scikit-learn's ``clone`` of
        the map transforms on the CPU."""
        require(device in DEVICES, "device", device, f"use one of {', '.join(DEVICES)}")
        if device != "cpu":  # the CPU path never imports rffbench.cuda
            from ..cuda import MAPS

            require(self.name in MAPS, "device", device,
                    f"features={self.name} has no CUDA transform; maps with one: "
                    f"{', '.join(MAPS)}")
            from ..cuda import require as require_cuda

            require_cuda(device)  # here, not at the first transform's driver error
        self.device = device
        return self

    def _chunks(self, X):
        """Row slices of X for transform: about CHUNK_ELEMENTS outputs each (and dense
        inputs, when a sparse X is densified chunk by chunk)."""
        rows = self.chunk_rows or max(1, CHUNK_ELEMENTS // self.n_components)
        densify = sp.issparse(X) and not self.tags.sparse_input
        if densify:
            rows = min(rows, max(1, CHUNK_ELEMENTS // X.shape[1]))
        for s in range(0, X.shape[0], rows):
            Xc = X[s:s + rows]
            yield slice(s, s + rows), (Xc.toarray() if densify else Xc)

    def transform(self, X, out=None):
        """Features of X (dense or scipy.sparse), shape (n_samples, n_components), in X's
        float dtype.  ``out``: a preallocated C-contiguous array of that shape and dtype
        to write them into (returned), e.g. to time the transform without the allocation
        and first-touch page faults of a fresh output, as a peer reusing its buffer.

        Parameters
        ----------
        X : array or scipy.sparse matrix of shape (n_samples, n_features)
            Rows to map.
        out : ndarray of shape (n_samples, n_components) or None, default None
            Where to write the features (C-contiguous, X's float dtype).

        Returns
        -------
        ndarray or scipy.sparse matrix of shape (n_samples, n_components)
            ``out`` when given; CSR for a map tagged ``sparse_output``.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        self.kernel_.check_values_on(X, what="the data given to transform")
        shape = (X.shape[0], self._n_features_out)
        if out is None:
            out = np.empty(shape, dtype=X.dtype)
        elif not (isinstance(out, np.ndarray) and out.shape == shape and out.dtype == X.dtype
                  and out.flags.c_contiguous and out.flags.writeable):
            got = (f"{type(out).__name__} {getattr(out, 'shape', '')} "
                   f"{getattr(out, 'dtype', '')}").strip()
            raise ValueError(f"out must be a writeable C-contiguous {X.dtype} array of shape "
                             f"{shape}, got {got}")
        into = self._transform_into if self.device == "cpu" else self._cuda_into
        for rows, Xc in self._chunks(X):
            into(Xc, out[rows])
        return out

    def _cuda_into(self, X, out):
        """The features of the rows X on the GPU (rffbench.cuda.maps), copied into out."""
        from ..cuda.device_code import to_host
        from ..cuda.maps import transform

        to_host(transform(self, X.toarray() if sp.issparse(X) else X), out)

    def kernel_estimate(self, X, Y=None):
        """The kernel estimate z(x).z(y) + ``kernel_offset_`` for the rows of X and Y
        (Y None: X), a dense float64 matrix (n_X, n_Y).

        Parameters
        ----------
        X : array of shape (n_X, n_features)
            Rows x.
        Y : array of shape (n_Y, n_features) or None, default None
            Rows y (None: X).

        Returns
        -------
        ndarray of shape (n_X, n_Y), float64
        """
        ZX = self.transform(X)
        ZY = ZX if Y is None else self.transform(Y)
        G = ZX @ ZY.T
        G = np.asarray(G.toarray() if sp.issparse(G) else G, dtype=np.float64)
        if self.kernel_offset_:
            G += self.kernel_offset_
        return G

    def sampler_input(self, X):
        """What a wrapped scikit-learn sampler (``sampler_``) is given for X (peers)."""
        return X

    def _as(self, name, dtype):
        """Fitted array ``name`` in ``dtype`` (cast once, then kept)."""
        key = (name, np.dtype(dtype))
        arr = self._cast_cache.get(key)
        if arr is None:
            arr = self._cast_cache[key] = np.ascontiguousarray(getattr(self, name), dtype=dtype)
        return arr

    @property
    def _n_features_out(self):
        return self.n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = True
        # kernels of non-negative data (chi2): scikit-learn's checks then feed positive data
        from ..kernels import KERNELS as KERNEL_REGISTRY

        kernel = self.kernel if not isinstance(self.kernel, str) else \
            KERNEL_REGISTRY.find(self.kernel)
        if kernel is not None and (kernel() if isinstance(kernel, type) else kernel) \
                .input_floor() > -math.inf:
            tags.input_tags.positive_only = True
        return tags

    def _fit(self, X, rng):
        raise NotImplementedError

    def _transform_into(self, X, out):
        raise NotImplementedError


class DenseRows:
    """A sparse X seen by a map's ``_fit`` that needs dense rows: ``X[rows]`` is dense,
    ``chunks()`` yields dense row blocks; shape and dtype as X."""

    def __init__(self, X):
        self.X = X
        self.shape, self.dtype = X.shape, X.dtype

    def __getitem__(self, rows):
        return self.X[rows].toarray()

    def chunks(self):
        rows = max(1, CHUNK_ELEMENTS // max(1, self.shape[1]))
        for s in range(0, self.shape[0], rows):
            yield self.X[s:s + rows].toarray()


def project_into(X, W, out):
    """out <- X @ W for dense X (BLAS writes into ``out``) or scipy.sparse X."""
    if sp.issparse(X):
        out[...] = X @ W
    else:
        nbk.matmul(X, W, out=out)


def maps_for_kernel(kname):
    """Names of the registered maps that can represent kernel ``kname`` (the registry of
    rffbench.features, found through rffbench.registry: this module is below it)."""
    from ..registry import registry

    maps = registry("rffbench.feature_maps")
    kcls = kernel_class(kname)
    shift_invariant = kcls is not None and kcls.shift_invariant
    out = []
    for name in maps:
        cls = maps.find(name)
        if cls is not None and (kname in (cls.KERNELS or ()) or (
                cls.KERNELS is None and (not cls.SHIFT_INVARIANT_ONLY or shift_invariant
                                         or kname in cls.EXTRA_KERNELS))) \
                and not cls.kernel_lacks(kname):
            out.append(name)
    return out


def kernel_class(kernel):
    """The class of a kernel given by name, class or instance (None: unknown name)."""
    if kernel is None or isinstance(kernel, type):
        return kernel
    if isinstance(kernel, Kernel):
        return type(kernel)
    from ..kernels import KERNELS as KERNEL_REGISTRY

    return KERNEL_REGISTRY.find(kernel)


def trig_kernel(kernel):
    """True unless ``kernel`` (name, class or instance) is not shift-invariant: the Gaussian-
    direction maps then apply the arc-cosine activations instead of cos/sin."""
    kcls = kernel_class(kernel)
    return kcls is None or kcls.shift_invariant


def check_even(map_name, n_components):
    if n_components % 2:
        raise ConfigError.not_allowed("D", int(n_components),
                                      f" for features={map_name} with cos/sin "
                          "pairs: D (the output dimension, cos and sin) must be even")
