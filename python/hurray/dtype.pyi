from ._hurray import Dtype as Dtype

float16: Dtype
bfloat16: Dtype
float32: Dtype
float64: Dtype
int8: Dtype
uint8: Dtype
int16: Dtype
uint16: Dtype
int32: Dtype
uint32: Dtype
int64: Dtype
uint64: Dtype
bool: Dtype
float8_e4m3: Dtype
float8_e5m2: Dtype
float8_e8m0: Dtype
float4_e2m1: Dtype
float6_e2m3: Dtype
float6_e3m2: Dtype
float128: Dtype
int4: Dtype
uint4: Dtype
int2: Dtype
uint2: Dtype
complex64: Dtype
complex128: Dtype
