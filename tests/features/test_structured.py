"""rffbench.features.structured: orf, sorf, fastfood and circulant against explicit matrices,
their statistics, layouts and memory."""
import math

import numpy as np
import pytest
from scipy.linalg import circulant, hadamard
from scipy.special import gammaln

from rffbench import memory
from rffbench.errors import ConfigError
from rffbench.experiment import main as run_main
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from rffbench.results import RECORDS_FILE
from tests.helpers import N_SEEDS, compose_config, pair_estimates, pairs_at

GAUSS = make_kernel("gaussian", lengthscale=1.0)


def _check_projection(f, X, W):
    m = f.n_freq_
    got = np.empty((X.shape[0], m))
    f._project(X, got, m)
    np.testing.assert_allclose(got, X @ W[:m].T, rtol=0, atol=1e-12)


def test_circulant_projection_is_the_signed_circulant_matrix(rng):
    X = rng.normal(size=(6, 5))
    f = FEATURE_MAPS["circulant"](kernel="linear", n_components=12, lengthscale=1.3,
                                  random_state=0).fit(X)
    g = np.fft.irfft(f.spectra_, n=5, axis=1)
    W = np.vstack([f.signs_[b][:, None] * circulant(g[b]) for b in range(3)])[:12] / 1.3
    np.testing.assert_allclose(f.transform(X), X @ W.T / math.sqrt(12), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["orf", "sorf", "fastfood", "circulant", "qmc", "srht",
                                  "gaussian_rp", "countsketch"])
def test_projections_of_the_linear_kernel_are_unbiased(name, rng):
    X = rng.normal(size=(5, 24)) / 5
    Y = X + rng.normal(size=(5, 24)) / 5
    R = 300
    est = pair_estimates(name, make_kernel("linear", lengthscale=0.8), X, Y, 16, R)
    exact = np.einsum("ij,ij->i", X, Y) / 0.8**2
    assert np.all(np.abs(est.mean(0) - exact) <= 4.5 * est.std(0, ddof=1) / math.sqrt(R)
                  + 1e-12)


def test_frame_layout_is_a_scaled_tight_frame(rng):
    """orf layout=frame: W l = diag(s) Q with Q^T Q = I (one m x d frame, m > d), s ~ chi_m;
    a row of Q has squared norm Beta(d/2, (m-d)/2), so |w|^2 l^2 is chi_d^2 (mean d,
    variance 2d), the law of a Gaussian row.  layout=blocks: orthonormal rows per block."""
    X = rng.normal(size=(20, 6))
    norms2 = []
    for s in range(300):
        f = FEATURE_MAPS["orf"](kernel="gaussian", n_components=2 * 30, lengthscale=2.0,
                                layout="frame", random_state=s).fit(X)
        W = f.random_weights_.T * 2.0
        Q = W / f.row_scales_[:, None]
        np.testing.assert_allclose(Q.T @ Q, np.eye(6), atol=1e-12)
        norms2.append(np.sum(W * W, axis=1))
    norms2 = np.concatenate(norms2)
    assert norms2.mean() == pytest.approx(6.0, abs=5 * np.sqrt(12.0 / norms2.size))
    assert norms2.var() == pytest.approx(12.0, rel=0.1)
    f = FEATURE_MAPS["orf"](kernel="gaussian", n_components=2 * 8, lengthscale=2.0,
                            random_state=0).fit(X)
    Q = f.random_weights_.T * 2.0 / f.row_scales_[:, None]
    np.testing.assert_allclose(Q[:6] @ Q[:6].T, np.eye(6), atol=1e-12)


@pytest.mark.parametrize("d,D", [(5, 40), (8, 16), (3, 10)])
def test_sorf_fast_transform_equals_explicit_matrix(d, D, rng):
    X = rng.normal(size=(6, d))
    f = FEATURE_MAPS["sorf"](kernel=make_kernel("gaussian", lengthscale=0.7), n_components=D,
                             random_state=1).fit(X)
    L = f.padded_dim_
    Hn = hadamard(L) / math.sqrt(L)
    blocks = [math.sqrt(L) / 0.7 * Hn @ np.diag(f.signs_[0, b]) @ Hn @ np.diag(f.signs_[1, b])
              @ Hn @ np.diag(f.signs_[2, b]) for b in range(f.signs_.shape[1])]
    W = np.vstack(blocks)[:, :d]
    _check_projection(f, X, W)
    # rows of each block are orthogonal with norm sqrt(L)/l
    full = np.vstack(blocks)
    np.testing.assert_allclose(full[:L] @ full[:L].T, (L / 0.49) * np.eye(L), atol=1e-9)


@pytest.mark.parametrize("d,D", [(5, 40), (8, 16), (3, 10)])
def test_fastfood_fast_transform_equals_explicit_matrix(d, D, rng):
    X = rng.normal(size=(6, d))
    f = FEATURE_MAPS["fastfood"](kernel=make_kernel("gaussian", lengthscale=0.7),
                                 n_components=D, random_state=2).fit(X)
    L = f.padded_dim_
    H = hadamard(L)
    blocks = []
    for b in range(f.gauss_.shape[0]):
        Pi = np.eye(L)[f.perm_[b]]  # (Pi v)[k] = v[perm[k]]
        V = np.diag(f.chi_scale_[b]) @ H @ np.diag(f.gauss_[b]) @ Pi @ H @ np.diag(f.sign_[b])
        blocks.append(V / (0.7 * math.sqrt(L)))
    W = np.vstack(blocks)
    _check_projection(f, X, W[:, :d])
    # row i of a block has norm s_i / l (s_i ~ chi_L): the Gaussian norm law
    s = f.chi_scale_[0] * np.linalg.norm(f.gauss_[0])
    np.testing.assert_allclose(np.linalg.norm(W[:L], axis=1), s / 0.7, rtol=1e-10)


def test_orf_rows_orthogonal_with_chi_norms():
    d, blocks = 8, 400
    X = np.zeros((2, d))
    f = FEATURE_MAPS["orf"](kernel=make_kernel("gaussian", lengthscale=2.0),
                            n_components=2 * d * blocks, random_state=0).fit(X)
    W = f.random_weights_.T * 2.0  # (m, d), lengthscale 2 removed
    G = W[:d] @ W[:d].T
    assert np.max(np.abs(G - np.diag(np.diag(G)))) < 1e-10  # orthogonal within a block
    norms = np.linalg.norm(W, axis=1)
    mean = math.sqrt(2) * math.exp(gammaln((d + 1) / 2) - gammaln(d / 2))  # E chi_d
    var = d - mean**2
    n = norms.size
    assert abs(norms.mean() - mean) < 5 * math.sqrt(var / n)
    assert abs(norms.var(ddof=1) - var) < 5 * var * math.sqrt(2 / (n - 1)) * 1.5


@pytest.mark.parametrize("name,params", [("orf", {}), ("orf", {"pairs": False}),
                                         ("fastfood", {}), ("qmc", {}),
                                         ("qmc", {"pairs": False, "sequence": "halton"})])
@pytest.mark.slow
def test_unbiased(name, params):
    X, Y = pairs_at(3, [0.3, 1.0, 2.0])
    est = pair_estimates(name, GAUSS, X, Y, 16, **params)
    k = GAUSS.k_of_delta(X - Y)
    se = est.std(0, ddof=1) / math.sqrt(N_SEEDS)
    assert np.all(np.abs(est.mean(0) - k) <= 5 * se + 1e-12), (est.mean(0), k, se)


def test_sorf_bias_is_small_and_shrinks_with_dimension():
    """Documented: SORF's frequencies are only approximately Gaussian.  At |delta| = 2 l the
    bias was measured at ~0.18 for L = 4, 0.04 for L = 16, 0.01 for L = 64."""
    bias = {}
    for d in (4, 64):
        X, Y = pairs_at(d, [2.0])
        est = pair_estimates("sorf", GAUSS, X, Y, 2 * d, seeds=800)
        bias[d] = abs(est.mean() - GAUSS.k_of_delta(X - Y)[0])
    assert bias[64] < 0.03 and bias[64] < bias[4] / 3, bias


def test_orf_variance_clearly_below_rff_at_D_equal_d():
    X, Y = pairs_at(16, [1.0])
    v_orf = pair_estimates("orf", make_kernel("gaussian", lengthscale=1.0), X, Y, 32,
                           seeds=1500).var()
    v_rff = pair_estimates("rff_pairs", make_kernel("gaussian", lengthscale=1.0), X, Y, 32,
                           seeds=1500).var()
    assert v_orf < 0.5 * v_rff, (v_orf, v_rff)


@pytest.mark.parametrize("name", ["sorf", "fastfood", "orf", "qmc"])
def test_dtype_chunks_and_numpy_cos_reference(name, rng, dtype):
    X = rng.normal(size=(97, 6)).astype(dtype)
    f = FEATURE_MAPS[name](kernel=GAUSS, n_components=24, random_state=5, chunk_rows=13).fit(X)
    Z = f.transform(X)
    assert Z.dtype == dtype and Z.shape == (97, 24)
    A = np.empty((97, f.n_freq_))
    f._project(X.astype(np.float64), A, f.n_freq_)
    ref = math.sqrt(2 / 24) * np.hstack([np.cos(A), np.sin(A)])
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(Z, ref, rtol=0, atol=tol)


@pytest.mark.parametrize("overrides,match", [
    (["features=orf", "kernel=laplacian"], "features=orf is not allowed with kernel=laplacian"),
    (["features=sorf", "kernel=matern"], "features=sorf is not allowed with kernel=matern"),
    (["features=binning", "kernel=gaussian"], "features=binning is not allowed with "
                                              "kernel=gaussian"),
    (["features=orf", "D=15"], "D=15 is not allowed for features=orf"),
    (["features=qmc", "features.sequence=latin"], "features.sequence='latin' is not allowed"),
    (["features=rff", "features.pairs=true"], "features.pairs=True is not allowed: it has no "
                                              "effect here (features=rff does not use "
                                              "features.pairs"),
])
def test_bad_map_config_one_line(tmp_path, capsys, overrides, match):
    assert run_main(compose_config(overrides), tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rffbench: error:") and match in err and "\n" not in err
    assert not (tmp_path / RECORDS_FILE).exists()


def test_padding_beyond_memory_is_refused(monkeypatch, rng):
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    with pytest.raises(ConfigError, match=r"dataset.d=600 is not allowed: features=sorf "
                                          r"\(kernel=gaussian\) pads d to 1024"):
        FEATURE_MAPS["sorf"](kernel=GAUSS, n_components=8).fit(rng.normal(size=(3, 600)))
