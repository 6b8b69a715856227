"""The `fuel` dialect: `fuel.fused` and a builder for every registry op.

Each op of the registry has a builder named after it, taking the operands
positionally and the params as keywords::

    from fuel_mlir.dialects import fuel
    y = fuel.rms_norm_last_dim(x, eps=1e-5)

and `fused` builds any registered op by name::

    y = fuel.fused("rms_norm_last_dim", [x], eps=1e-5)

Builders infer the result types, verify the new op against the registry and
raise `ValueError` (bad values, failed rules) or `TypeError` (wrong kinds of
arguments) instead of creating invalid IR.
"""

from ._fuel_ops_gen import *  # noqa: F401,F403
from ._fuel_ops_gen import _Dialect  # noqa: F401
from .._fuel_registry_gen import *  # noqa: F401,F403
from .._fuel_builder_support import fused  # noqa: F401
