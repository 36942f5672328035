/*
 * Overlay member roles by position and by name (include/hurray/descriptor.h;
 * spec: layouts/composite.md): member 0 of an overlay is the base, the others
 * corrections. Calls nothing: the decoder, the validator and
 * hurray_composite_member_present (src/composite/present.c) all name roles here.
 */
#include "hurray/descriptor.h"

uint8_t hurray_overlay_member_role(uint32_t index) {
  return index == 0 ? HURRAY_MEMBER_ROLE_BASE : HURRAY_MEMBER_ROLE_CORRECTION;
}

const char *hurray_member_role_name(uint8_t role) {
  return role == HURRAY_MEMBER_ROLE_BASE         ? "base"
         : role == HURRAY_MEMBER_ROLE_CORRECTION ? "correction"
                                                 : NULL;
}
