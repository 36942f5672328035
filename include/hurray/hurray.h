/*
 * hurray/hurray.h - umbrella header of libhurray, the C implementation of the
 * Hurray zero-copy tensor interchange format.
 *
 * Include this one header to get the whole public API. The C ABI version and
 * alignment constants of the reference implementation's hurray.h are here.
 */
#ifndef HURRAY_HURRAY_H
#define HURRAY_HURRAY_H

#include "hurray/export.h"
#include "hurray/status.h"
#include "hurray/alloc.h"
#include "hurray/dtype.h"
#include "hurray/convert.h"
#include "hurray/device.h"
#include "hurray/layout.h"
#include "hurray/quant.h"
#include "hurray/schema.h"
#include "hurray/descriptor.h"
#include "hurray/buffer.h"
#include "hurray/context.h"
#include "hurray/values.h"
#include "hurray/composite.h"
#include "hurray/file.h"
#include "hurray/stream.h"
#include "hurray/net.h"
#include "hurray/interop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the C ABI (4 = buffer lists + tensor contexts). */
#define HURRAY_C_ABI_VERSION 4

/* Library version. */
#define HURRAY_VERSION_MAJOR 0
#define HURRAY_VERSION_MINOR 1
#define HURRAY_VERSION_PATCH 0
#define HURRAY_VERSION_STRING "0.1.0"

/* Returns HURRAY_C_ABI_VERSION of the library actually linked. */
HURRAY_API uint32_t hurray_c_abi_version(void);

/* Returns HURRAY_VERSION_STRING of the library actually linked (static). */
HURRAY_API const char *hurray_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_HURRAY_H */
