from ._hurray import Device as Device

cpu: Device
cuda: Device
rocm: Device
metal: Device
vulkan: Device
webgpu: Device
hexagon: Device
level_zero: Device
opencl: Device
