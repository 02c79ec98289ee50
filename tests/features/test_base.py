"""rffbench.features.base: what every map shares (its capabilities as one tags object)."""
import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS, RandomFourierPairs


def test_map_capabilities_are_one_tags_object():
    """A subclass writes only the tags that differ (merged into its parent's); a class
    setting a flag the tags replaced is refused at its definition, naming the tag."""
    from rffbench.features import MapTags

    assert all(isinstance(cls.tags, MapTags) for cls in FEATURE_MAPS.builtins().values())
    assert FEATURE_MAPS["rff_pairs"].tags.variance == "pairs"
    assert FEATURE_MAPS["rff_pairs"].tags.sparse_input  # inherited from the Fourier maps
    assert FEATURE_MAPS["binning"].tags.sparse_output and FEATURE_MAPS["nystrom"].tags.bias

    class Child(RandomFourierPairs):
        tags = {"bias": "made up"}

    assert (Child.tags.variance, Child.tags.bias) == ("pairs", "made up")
    with pytest.raises(TypeError, match=r"Old sets BIAS, variance: declare them as tags = "
                                        r"\{'bias': \.\.\., 'variance': \.\.\.\}"):
        class Old(RandomFourierPairs):
            variance = None
            BIAS = "x"
    qmc = FEATURE_MAPS["qmc"]
    assert qmc(sequence="sobol").get_tags().bias is None
    assert "generalized_halton" in qmc(sequence="generalized_halton").get_tags().bias


def test_maps_for_kernel_lists_exactly_the_maps_that_accept_it():
    """maps_for_kernel(k) (the maps a refusal names, the conformance pairs) is the set of
    registered maps whose check_kernel accepts k, for every registered kernel: it left out
    the maps for any shift-invariant kernel (rff, rff_pairs, qmc) for every stationary one."""
    from rffbench.errors import ConfigError
    from rffbench.features import FEATURE_MAPS, maps_for_kernel
    from rffbench.kernels import KERNELS

    for kname in KERNELS:
        accepts = set()
        for mname in FEATURE_MAPS:
            try:
                FEATURE_MAPS[mname].check_kernel(kname)
            except ConfigError:
                continue
            accepts.add(mname)
        assert set(maps_for_kernel(kname)) == accepts, kname
    assert {"rff", "rff_pairs", "qmc"} <= set(maps_for_kernel("cauchy"))


def test_a_ready_array_is_used_as_it_is_and_anything_else_takes_sklearns_checks():
    """transform's validation takes a writeable C-contiguous float array of the fitted width,
    finite, as it is (no copy, no DataFrame probing: 0.3 ms a call at 1,348 x 64); anything
    else goes through scikit-learn's validate_data, with its copies, warnings and errors."""
    import warnings

    import pandas as pd

    from rffbench.features import feature_map_class

    X = np.random.default_rng(0).standard_normal((30, 4))
    f = feature_map_class("rff")(n_components=8, lengthscale=1.0, random_state=0).fit(X)
    assert f._validate(X, reset=False) is X
    assert f._validate(X.astype(np.float32), reset=False).dtype == np.float32
    want = f.transform(X)
    ro = X.copy()
    ro.setflags(write=False)
    for other in (ro, np.asfortranarray(X), X.tolist(), np.repeat(X, 2, axis=0)[::2]):
        got = f._validate(other, reset=False)
        assert got.flags.c_contiguous and got.flags.writeable
        np.testing.assert_array_equal(f.transform(other), want)
    assert f._validate(ro, reset=False) is not ro  # read-only: copied
    huge = np.full((3, 4), 1e308)  # finite, its sum is not: the long way, accepted
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no overflow warning from the sum
        assert np.array_equal(f._validate(huge, reset=False), huge)
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        f.transform(bad)
    with pytest.raises(ValueError, match="4 features"):
        f.transform(X[:, :3])
    with pytest.raises(ValueError, match="0 sample"):
        f.transform(X[:0])
    named = feature_map_class("rff")(n_components=8, lengthscale=1.0, random_state=0)
    named.fit(pd.DataFrame(X, columns=list("abcd")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        named.transform(X)  # fitted with feature names: scikit-learn's warning, as before
    assert any("feature names" in str(w.message) for w in caught)
