/*
 * types/block_paged.h - the methods of hurray.BlockPagedLayout beyond its
 * fields (layer 2): validate_index_buffers and
 * validate_quantization_compatibility.
 */
#ifndef HURRAY_PY_TYPES_BLOCK_PAGED_H
#define HURRAY_PY_TYPES_BLOCK_PAGED_H

#include "util/state.h"

/* The class's extra methods (a static, NULL-terminated array). */
PyMethodDef *hrpy_block_paged_methods(void);

#endif /* HURRAY_PY_TYPES_BLOCK_PAGED_H */
