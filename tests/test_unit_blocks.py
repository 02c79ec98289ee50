"""rffbench/unit_blocks.py: the kernel, features and dataset blocks are the registered units'
declarations, and a unit's key set where the chosen unit does not read it is one line naming
the units that do."""
import inspect
import re

import pytest

from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.kernels import KERNELS
from rffbench.unit_blocks import KernelBlock, KernelConfig
from tests.helpers import compose_config


def test_the_kernel_block_is_the_kernels_declarations():
    """Every parameter a built-in kernel's constructor takes beyond the common ones is a key
    of the kernel block, with the class's default, constraint and numpydoc description."""
    fields = KernelConfig.__dataclass_fields__
    for name, cls in KERNELS.builtins().items():
        sig = inspect.signature(cls.__init__).parameters
        for k in set(cls._get_param_names()) - set(KernelBlock.COMMON):
            assert k in fields, (name, k)
            assert fields[k].default == sig[k].default, (name, k)
            assert KernelConfig.constraints[k] is cls.all_constraints()[k], (name, k)
            doc = KernelConfig.field_docs[k]  # "... (kernel=polynomial, anova)"
            assert name in doc[doc.rindex("(kernel="):].strip("()").split("=")[1].split(", ") \
                and len(doc) > 30, (name, k)


@pytest.mark.parametrize("overrides,says", [
    (["kernel=gaussian", "kernel.degree=3"], "kernel=gaussian does not use kernel.degree; "
                                             "kernel=polynomial or anova does"),
    (["features=rff", "features.pairs=true"], "features=rff does not use features.pairs (rff "
                                              "is cos + offset"),
    (["dataset=digits", "dataset.d=3"], "dataset=digits does not use dataset.d (d is fixed by "
                                        "the data); dataset=synthetic or friedman1 does"),
])
def test_a_units_key_that_the_chosen_unit_does_not_read_is_refused(overrides, says):
    """chosen_reads, the one rule behind the kernel's, the map's and the dataset's own keys:
    the key, its value, the unit chosen and the units that read it, in one line."""
    with pytest.raises(ConfigError, match=re.escape(says)) as info:
        validate(compose_config(overrides))
    assert len(str(info.value).splitlines()) == 1
    assert str(info.value).startswith(overrides[1].replace("true", "True") + " is not allowed")
    validate(compose_config(overrides[:1]))  # the same unit without the key: valid
