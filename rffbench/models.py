"""Models on random features (``MODELS``) and the shared target encoding.

A model is a :class:`FeatureModel` subclass in the registry ``MODELS`` (plug-ins:
entry-point group ``rffbench.models``): it is built from the ``model`` config block,
says what it fits to (one-hot scores or labels) and how its outputs become
predictions, declares its memory for the plan that refuses a run before it starts,
and fits on a fitted feature map chunk by chunk.

* ``ridge``: w = (Z_c^T Z_c + lam I)^{-1} Z_c^T Y_c, Z_c and Y_c centred with the training
  means, and the unpenalised intercept b = mean(y) - mean(z).w.  Z^T Z (syrk, in place),
  Z^T Y, sum z and sum y are accumulated over row chunks, so Z is never held whole
  (memory O(D^2 + chunk D)); centring is a rank-one update of those sums, and the system
  is solved by Cholesky.  With many lambdas (``lam=auto``) the accumulation is done once
  and only the D x D solve is repeated.
* ``sgd``: scikit-learn's ``SGDRegressor`` / ``SGDClassifier`` fed by
  ``partial_fit`` over shuffled feature chunks for ``epochs`` passes; alpha =
  lam / n (scikit-learn averages the loss over samples, ridge sums it).

Targets: regression y is one column; classification is "Fourier + LS" as in
Rahimi & Recht's Table 1: least squares on one-hot targets, argmax.  With
``center`` (the default) the model has an unpenalised intercept, as scikit-learn's
``Ridge(fit_intercept=True)``.

The intercept absorbs a kernel estimate's constant term: a map whose estimate is
z(x).z(y) + c (``kernel_offset_``, c >= 0) is the map [z(x), sqrt(c)] with a constant
column, and a constant column is centred to zero, so the fit and the predictions are
those of z alone (tested).  For any c, in the dual view (kernel ridge with K + c 1 1^T and
an unpenalised intercept) the constraint 1^T alpha = 0 cancels c 1 1^T alpha.  So ridge on
a map's features needs no offset column: ``kernel_offset_`` matters for the kernel
estimate (the approximation and bounds measurements), not for learning.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from .errors import ConfigError, RffbenchError
from .exact import solve_regularised, with_intercept
from .features import gram_of
from .plugins import output_dim
from .progress import Progress
from .registry import Registry, subclass_check

#: select_lambda's entry for a lambda at which the system is not positive definite
#: model.loss: the losses of scikit-learn's SGD estimators, per task
SGD_LOSSES = {
    "regression": ("squared_error", "huber", "epsilon_insensitive", "squared_epsilon_insensitive"),
    "classification": ("hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron",
                       "squared_error"),
}

NOT_PD = "not positive definite"

#: output elements per feature chunk when ``chunk_rows`` is null (32 MB float64)
CHUNK_ELEMENTS = 1 << 22


def encode_targets(y, task, n_classes):
    """Targets as a float64 matrix: one-hot (classification) or one column."""
    if task == "classification":
        Y = np.zeros((y.shape[0], n_classes))
        Y[np.arange(y.shape[0]), y] = 1.0
        return Y
    return np.asarray(y, dtype=np.float64)[:, None]


def decode(scores, task):
    """Predictions from model outputs: argmax class, or the single column."""
    return scores.argmax(axis=1) if task == "classification" else scores[:, 0]


#: rows whose features tell a sparse map's nonzeros per row (accumulate's chunking)
SPARSE_PROBE_ROWS = 256


def chunk_rows(n_features, chunk_rows=None):
    return chunk_rows or max(1, CHUNK_ELEMENTS // max(1, n_features))


class Timer:
    """Accumulates perf_counter seconds per named phase."""

    def __init__(self):
        self.s = {}

    def add(self, name, t0):
        now = time.perf_counter()
        self.s[name] = self.s.get(name, 0.0) + now - t0
        return now


class FeatureModel:
    """A model on random features (module docs).  Subclasses set :attr:`name` and
    implement ``fit(fmap, X, target)``, ``predict(X)``, ``select_lambda(fmap, X_fit,
    target_fit, X_val, grid)`` and the class methods below."""

    #: model.name
    name: str = None
    #: the keys of the model block it reads beyond lam, lam_grid, val_size and chunk_rows
    #: (among center, epochs, loss; exact KRR reads center too): the others are refused
    #: when set, as having no effect.  None: not declared (none is refused)
    KEYS = None
    #: its fit runs on backend=dask (the ridge accumulation): otherwise only exact KRR's
    #: cg does
    USES_BACKEND = False

    @classmethod
    def from_config(cls, m, task, seed, backend=None):
        """The model of the ``model`` block ``m`` for a ``task`` dataset."""
        raise NotImplementedError

    @classmethod
    def check(cls, m, task, where):
        """ConfigError when ``m`` cannot fit a ``task`` dataset (``where`` names it)."""

    def target(self, y, task, n_classes):
        """What :meth:`fit` takes for the training labels ``y`` (default: ``y``)."""
        return y

    def prediction(self, out, task):
        """Predicted labels or values from :meth:`predict`'s output (default: as is)."""
        return out

    @classmethod
    def memory(cls, D, n, rows, n_out, fmap_bytes, sparse_map, columns=None):
        """(what, bytes) of fitting on ``n`` rows of D features in chunks of ``rows``;
        ``fmap_bytes(r)`` is the map's memory to transform r rows; ``columns``: a sparse
        map's output columns once it is fitted (None before)."""
        raise NotImplementedError


# --------------------------------------------------------------------------
# ridge on features
# --------------------------------------------------------------------------
class NormalEquations:
    """Sums of a row set: Z^T Z (upper triangle, Fortran order), Z^T Y, sum z, sum y, n."""

    def __init__(self, D, n_out):
        self.G = np.zeros((D, D), order="F")
        self.b = np.zeros((D, n_out))
        self.zsum = np.zeros(D)
        self.ysum = np.zeros(n_out)
        self.n = 0

    def add_chunk(self, Z, Y):
        if sp.issparse(Z):  # a sparse map (binning): the sparse product, full symmetric
            Z64 = Z.tocsr().astype(np.float64)
            self.G += (Z64.T @ Z64).toarray()
        else:
            Z64 = np.asarray(Z, dtype=np.float64)
            # G += Z^T Z: syrk on Z^T (a Fortran view of C-ordered Z: no copy), in place
            self.G = blas.dsyrk(1.0, Z64.T, beta=1.0, c=self.G, trans=0, lower=0,
                                overwrite_c=1)
        self.b += np.asarray(Z64.T @ Y)
        self.zsum += np.asarray(Z64.sum(axis=0)).ravel()
        self.ysum += Y.sum(axis=0)
        self.n += Z.shape[0]

    def solve(self, lam, center=True):
        """(weights D x n_out, intercept n_out, factor + solve seconds).  ``center``: the
        normal equations of the centred features and targets, Z_c^T Z_c = Z^T Z - n zbar
        zbar^T and Z_c^T Y_c = Z^T Y - n zbar ybar^T, and the unpenalised intercept
        ybar - zbar^T W."""
        # Cholesky reads only the upper triangle that syrk wrote: factor a Fortran copy
        # of it (its transpose is the C-order matrix solve_regularised takes).  The full
        # symmetric copy this replaces was half of the solve's time at D = 1024
        A = self.G.copy(order="F")
        b = self.b
        if center:
            zbar, ybar = self.zsum / self.n, self.ysum / self.n
            A = blas.dsyr(-float(self.n), zbar, a=A, lower=0, overwrite_a=1)  # upper only
            b = b - self.n * np.outer(zbar, ybar)
        W, f_s, s_s = solve_regularised(A.T, b, lam)
        intercept = ybar - zbar @ W if center else np.zeros_like(self.ysum)
        return W, intercept, f_s + s_s


def block_sums(fmap, X, Y):
    """The sums of one block of rows (a Dask task): (Z^T Z upper triangle, Z^T Y, sum z,
    sum y, n) of its features Z."""
    ne = NormalEquations(output_dim(fmap), Y.shape[1])
    ne.add_chunk(fmap.transform(X), Y)
    return ne.G, ne.b, ne.zsum, ne.ysum, ne.n


def accumulate(fmap, X, Y, rows=None, timer=None, backend=None):
    """NormalEquations of the ``fmap`` features of X, chunk by chunk (``backend``: a
    rffbench.backends backend that does it elsewhere, None: here)."""
    timer = timer or Timer()
    if backend is not None:
        t0 = time.perf_counter()
        ne = backend.accumulate(fmap, X, Y, chunk_rows(output_dim(fmap), rows))
        timer.add("accumulate_time_s", t0)  # features + sums, on the workers
        return ne
    ne = NormalEquations(output_dim(fmap), Y.shape[1])
    width = output_dim(fmap)
    if fmap.tags.sparse_output and rows is None:
        # a chunk's cost is its nonzeros, and each chunk adds a dense D x D product: chunk
        # by the nonzeros per row (binning: one per grid), not by the columns
        probe = fmap.transform(X[:SPARSE_PROBE_ROWS])
        width = max(1, -(-probe.nnz // max(1, probe.shape[0])))
    rows = chunk_rows(width, rows)
    progress = Progress("ridge: accumulating Z^T Z", -(-X.shape[0] // rows), "chunks")
    for s in range(0, X.shape[0], rows):
        t0 = time.perf_counter()
        Z = fmap.transform(X[s:s + rows])
        t0 = timer.add("map_time_s", t0)
        ne.add_chunk(Z, Y[s:s + rows])
        timer.add("accumulate_time_s", t0)
        progress.step()
    return ne


def _dual(fmap, X):
    """Whether ridge on ``fmap``'s features of the rows X is solved in the dual: a sparse
    map with more columns than rows (its n x n Gram is the smaller system).  A sparse map
    with fewer columns (binning at a large lengthscale: 1,354 columns for 32,561 Adult
    rows) accumulates Z^T Z from the sparse products, as a dense map does."""
    return bool(fmap.tags.sparse_output) and output_dim(fmap) > X.shape[0]


class FeatureRidge(FeatureModel):
    """Ridge regression / least-squares classifier on a fitted feature map.

    Parameters
    ----------
    lam : float
        Ridge parameter (> 0), on the features' normal equations.
    center : bool, default True
        The targets' training mean as an unpenalised intercept.
    chunk_rows : int or None, default None
        Rows per feature chunk (None: about 4M elements).
    backend : None or a rffbench.backends backend, default None
        Where the normal equations are accumulated (None: this process).
    """

    name = "ridge"
    KEYS = ("center",)
    USES_BACKEND = True

    @classmethod
    def from_config(cls, m, task, seed, backend=None):
        return cls(m.lam, m.center, m.chunk_rows, backend=backend)

    def target(self, y, task, n_classes):
        return encode_targets(y, task, n_classes)  # one-hot: least squares on classes

    def prediction(self, out, task):
        return decode(out, task)

    @classmethod
    def memory(cls, D, n, rows, n_out, fmap_bytes, sparse_map, columns=None):
        """Z^T Z, its symmetric copy and the factor (3 D x D) and one feature chunk, D the
        output columns; a sparse map with more columns than training rows is solved in
        the dual (an n x n Gram and its factor).  A sparse map's columns are known once it
        is fitted (``columns``): before, only the feature chunk is counted, and the run
        plans again with them before any measurement (rffbench.experiment)."""
        if sparse_map and columns is None:
            return ("ridge on sparse features (planned again once their columns are "
                    "known)", fmap_bytes(rows))
        if sparse_map and columns > n:
            return (f"ridge in the dual: n_train x n_train ({columns:.0f} columns > "
                    f"{n} rows)", 16.0 * n * n + fmap_bytes(n))
        C = D if columns is None else columns
        return ("ridge on features: 3 D x D matrices" if columns is None else
                f"ridge on features: 3 x {C:.0f}^2 (the sparse map's columns)",
                8.0 * (3 * C * C + rows * C + C * n_out) + fmap_bytes(rows))

    def __init__(self, lam, center=True, chunk_rows=None, backend=None):
        self.lam = lam
        self.center = center
        self.chunk_rows = chunk_rows
        self.backend = backend

    def fit(self, fmap, X, Y):
        if _dual(fmap, X):
            return self._fit_dual(fmap, X, Y)
        timer = Timer()
        ne = accumulate(fmap, X, Y, self.chunk_rows, timer, self.backend)
        t0 = time.perf_counter()
        self.coef_, self.offset_, _ = ne.solve(self.lam, self.center)
        timer.add("solve_time_s", t0)
        self.fmap_, self.times_ = fmap, timer.s
        return self

    def _fit_dual(self, fmap, X, Y):
        """Sparse features with more columns than rows (binning at a small lengthscale):
        solve the dual, w = Z^T alpha with the bordered system of the unpenalised
        intercept (rffbench.exact.with_intercept); memory O(n^2)."""
        timer = Timer()
        t0 = time.perf_counter()
        Z = fmap.transform(X)
        t0 = timer.add("map_time_s", t0)
        K = np.asarray(gram_of(Z), dtype=np.float64)
        t0 = timer.add("accumulate_time_s", t0)
        alpha, self.offset_ = with_intercept(lambda B: solve_regularised(K, B, self.lam)[0],
                                             Y, self.center)
        self.coef_ = np.asarray(Z.T @ alpha)
        timer.add("solve_time_s", t0)
        self.fmap_, self.times_ = fmap, timer.s
        return self

    def predict(self, X):
        out = np.empty((X.shape[0], self.coef_.shape[1]))
        rows = chunk_rows(output_dim(self.fmap_), self.chunk_rows)
        for s in range(0, X.shape[0], rows):
            out[s:s + rows] = self.fmap_.transform(X[s:s + rows]) @ self.coef_
        return out + self.offset_

    def select_lambda(self, fmap, X_fit, Y_fit, X_val, grid):
        """Validation predictions (one matrix per lambda; the reason, a str, where the
        system is not positive definite) from one accumulation pass over X_fit and one
        transform pass over X_val."""
        if _dual(fmap, X_fit):
            preds = []
            for lam in grid:
                try:
                    preds.append(FeatureRidge(lam, self.center).fit(fmap, X_fit, Y_fit)
                                 .predict(X_val))
                except RffbenchError:  # not positive definite at this lambda
                    preds.append(NOT_PD)
            return preds
        ne = accumulate(fmap, X_fit, Y_fit, self.chunk_rows, backend=self.backend)
        sols = []
        for lam in grid:
            try:
                sols.append(ne.solve(lam, self.center)[:2])
            except RffbenchError:  # not positive definite at this lambda: no prediction
                sols.append(NOT_PD)
        preds = [sol if isinstance(sol, str) else np.empty((X_val.shape[0], Y_fit.shape[1]))
                 for sol in sols]
        rows = chunk_rows(output_dim(fmap), self.chunk_rows)
        for s in range(0, X_val.shape[0], rows):
            Z = fmap.transform(X_val[s:s + rows])
            for sol, P in zip(sols, preds):
                if not isinstance(sol, str):
                    P[s:s + rows] = Z @ sol[0] + sol[1]
        return preds


# --------------------------------------------------------------------------
# SGD on features (scikit-learn)
# --------------------------------------------------------------------------
class FeatureSGD(FeatureModel):
    """scikit-learn SGD fed with feature chunks by ``partial_fit``.

    Parameters
    ----------
    lam : float
        scikit-learn's alpha (L2 penalty).
    task : {"regression", "classification"}
        Which SGD estimator.
    loss : str or None, default None
        scikit-learn's loss (None: squared_error, or hinge for classes).
    epochs : int, default 5
        Passes over the training rows.
    random_state : int, default 0
        Seeds the SGD's shuffling.
    chunk_rows : int or None, default None
        Rows per feature chunk (None: about 4M elements).
    """

    name = "sgd"
    KEYS = ("epochs", "loss")

    @classmethod
    def from_config(cls, m, task, seed, backend=None):
        return cls(m.lam, task, m.loss, m.epochs, seed, m.chunk_rows)

    @classmethod
    def check(cls, m, task, where):
        if m.loss is not None and m.loss not in SGD_LOSSES[task]:
            raise ConfigError(f"model.loss={m.loss!r} is not allowed for the {task} {where}: "
                              f"use one of {', '.join(SGD_LOSSES[task])}")

    @classmethod
    def memory(cls, D, n, rows, n_out, fmap_bytes, sparse_map, columns=None):
        """One feature chunk, its float64 copy and the weights."""
        return ("sgd on feature chunks", 8.0 * (2 * rows * D + D * n_out) + fmap_bytes(rows))

    def __init__(self, lam, task, loss=None, epochs=5, random_state=0, chunk_rows=None):
        self.lam = lam
        self.task = task
        self.loss = loss
        self.epochs = epochs
        self.random_state = random_state
        self.chunk_rows = chunk_rows

    def _estimator(self, lam, n):
        from sklearn.linear_model import SGDClassifier, SGDRegressor

        alpha = lam / n
        if self.task == "classification":
            return SGDClassifier(loss=self.loss or "hinge", alpha=alpha,
                                 random_state=self.random_state)
        return SGDRegressor(loss=self.loss or "squared_error", alpha=alpha,
                            random_state=self.random_state)

    def _passes(self, fmap, X, y, estimators, timer):
        rng = np.random.default_rng(self.random_state)
        rows = chunk_rows(output_dim(fmap), self.chunk_rows)
        classes = np.unique(y) if self.task == "classification" else None
        for _ in range(self.epochs):
            order = rng.permutation(X.shape[0])
            for s in range(0, X.shape[0], rows):
                idx = np.sort(order[s:s + rows])
                t0 = time.perf_counter()
                Z = fmap.transform(X[idx])
                t0 = timer.add("map_time_s", t0)
                for est in estimators:
                    if classes is not None:
                        est.partial_fit(Z, y[idx], classes=classes)
                    else:
                        est.partial_fit(Z, y[idx])
                timer.add("accumulate_time_s", t0)

    def fit(self, fmap, X, y):
        timer = Timer()
        self.est_ = self._estimator(self.lam, X.shape[0])
        self._passes(fmap, X, y, [self.est_], timer)
        self.fmap_, self.times_ = fmap, timer.s
        return self

    def predict(self, X):
        rows = chunk_rows(output_dim(self.fmap_), self.chunk_rows)
        parts = [self.est_.predict(self.fmap_.transform(X[s:s + rows]))
                 for s in range(0, X.shape[0], rows)]
        return np.concatenate(parts)

    def select_lambda(self, fmap, X_fit, y_fit, X_val, grid):
        """Validation predictions per lambda; every lambda's model sees the same chunks."""
        ests = [self._estimator(lam, X_fit.shape[0]) for lam in grid]
        self._passes(fmap, X_fit, y_fit, ests, Timer())
        rows = chunk_rows(output_dim(fmap), self.chunk_rows)
        parts = [[] for _ in grid]
        for s in range(0, X_val.shape[0], rows):
            Z = fmap.transform(X_val[s:s + rows])
            for est, P in zip(ests, parts):
                P.append(est.predict(Z))
        return [np.concatenate(P) for P in parts]


MODELS = Registry("rffbench.models", "model", {"ridge": FeatureRidge, "sgd": FeatureSGD},
                  subclass_check(FeatureModel, "a model on features"))
