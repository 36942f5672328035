"""The named devices, each with standard memory and device id 0.

``hurray.device.cpu`` is the default device of every tensor (and
``Tensor.device is hurray.device.cpu`` for one built without a device).
"""

from ._hurray import Device, _device_table

globals().update(_device_table())

__all__ = sorted(_device_table()) + ["Device"]
