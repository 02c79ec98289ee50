"""rffbench.features.base: what every map shares (its capabilities as one tags object)."""
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
