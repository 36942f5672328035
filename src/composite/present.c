/*
 * The descriptor an overlay member presents to its head
 * (include/hurray/composite.h, hurray_composite_member_present): its own plus
 * a composite member section of the role its position gives
 * (src/descriptor/member_role.c).
 */
#include "hurray/composite.h"
#include "internal/common.h"

#include <string.h>

HurrayStatus hurray_composite_member_present(const HurrayDescriptor *member, uint8_t rule,
                                             uint32_t index, HurrayDescriptor **out,
                                             HurrayError *err) {
  if (out != NULL) *out = NULL;
  if (member == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        member == NULL ? "member" : "out", "is NULL");
  if (rule != HURRAY_COMPOSITE_OVERLAY) return HURRAY_OK;
  HurrayDescriptorFields f;
  HURRAY_TRY(hurray_descriptor_fields(member, &f));
  if (f.composite_member != NULL) return HURRAY_OK; /* decoded with its role: kept */
  HurrayCompositeMember role;
  memset(&role, 0, sizeof role);
  role.role = hurray_overlay_member_role(index);
  f.composite_member = &role;
  /* the member was validated as it was built; permissive keeps a relayed
   * member (unknown tags) presentable */
  return hurray_descriptor_from_fields(&f, HURRAY_DECODE_PERMISSIVE, out, err);
}
