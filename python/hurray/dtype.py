"""Every named Hurray element type, as hurray.Dtype singletons.

``hurray.dtype.float32 is hurray.float32``; Tier 2 types (``int4``,
``float8_e4m3``, ...) are reachable only here. Private (extension) types have
no name: use ``hurray.Dtype.from_tag(0xF0..0xFE)``.
"""

from ._hurray import Dtype, _dtype_table

globals().update(_dtype_table())

__all__ = sorted(_dtype_table()) + ["Dtype"]
