/* Version queries (include/hurray/hurray.h). */
#include "hurray/hurray.h"

uint32_t hurray_c_abi_version(void) { return HURRAY_C_ABI_VERSION; }

const char *hurray_version_string(void) { return HURRAY_VERSION_STRING; }
