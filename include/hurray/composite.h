/*
 * hurray/composite.h - validation of composite tensors (spec:
 * docs/spec/layouts/composite.md; docs/internals/decisions.md § Limits).
 *
 * A composite is a head descriptor (layout 0x0B) followed by member_count
 * members in stream / file order; a member may itself be a head (nested
 * composite, pre-order). The validator is incremental: feed it the head, then
 * each member as it arrives. It keeps only what the close-time checks need
 * (the members' boxes for a partition), never anything sized from a wire
 * count before the members exist.
 *
 * Rules checked (all failures are HURRAY_ERR_INVALID_COMPOSITE):
 *  head (at _new): layout 0x0B; composition rule 1/2/3 (private 0xF0-0xFE
 *    only with HURRAY_DECODE_PERMISSIVE, then no member rule applies);
 *    combine_op 0 for partition/group, 1 or 2 for overlay; member_count not
 *    0xFFFFFFFF, and >= 1 for an overlay; no buffers; byte_offset 0; no
 *    quantization; no composite member section; static shape for partition
 *    and overlay; nesting depth < HURRAY_MAX_COMPOSITE_DEPTH.
 *  each member: partition/overlay members carry a shard whose parent_shape
 *    equals the head's shape and whose box lies inside it, and have the head's
 *    type_tag (a quantized member's decoded type is not checked: the spec
 *    names no decoded type tag); overlay members carry a composite member
 *    section, member 0 with role base spanning the whole head (offset 0,
 *    shape = head shape), the others role correction; partition and group
 *    members carry no composite member section; no more than member_count.
 *  close (at the member_count-th member, or at _finish when it is 0):
 *    partition boxes do not overlap pairwise and their volumes add up to the
 *    head's volume (exact cover); _finish with fewer members: torn composite.
 *
 * The validator does not re-validate each member as a descriptor (decoding
 * did that) and does not open nested heads itself: when a member is a head,
 * push it here as a member, then start a validator for it with depth + 1
 * (or use hurray_composite_validate_preorder, which does exactly that).
 */
#ifndef HURRAY_COMPOSITE_H
#define HURRAY_COMPOSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/layout.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct HurrayCompositeValidator HurrayCompositeValidator;

/*
 * Starts validating the composite whose head is `head` (borrowed for the call
 * only; the shape is copied). `depth` is the head's nesting depth: 0 for an
 * outermost head, parent depth + 1 for a nested one; depth >=
 * HURRAY_MAX_COMPOSITE_DEPTH (8) is rejected. `options`: HURRAY_DECODE_*.
 * On success *out is owned: free with hurray_composite_validator_destroy.
 * On failure *out is NULL. HURRAY_ERR_OUT_OF_MEMORY if allocation fails.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_composite_validator_new(
    const HurrayDescriptorFields *head, uint32_t depth, uint32_t options,
    HurrayCompositeValidator **out, HurrayError *err);

/*
 * Checks the next member (borrowed for the call only). When it is the last
 * one (member_count reached), the close-time checks run too and their verdict
 * is returned. After any failure the validator is spent: later calls return
 * HURRAY_ERR_INVALID_STATE. A member beyond member_count:
 * HURRAY_ERR_INVALID_COMPOSITE. Field paths read "members[i]...".
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_composite_validator_push(
    HurrayCompositeValidator *v, const HurrayDescriptorFields *member, HurrayError *err);

/* Number of members still expected (0 once complete, and for NULL); v borrowed. */
HURRAY_API uint32_t hurray_composite_validator_remaining(const HurrayCompositeValidator *v);

/*
 * Ends validation: HURRAY_OK when all member_count members arrived and every
 * check passed; HURRAY_ERR_INVALID_COMPOSITE for a torn composite (fewer
 * members); HURRAY_ERR_INVALID_STATE after an earlier failure.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_composite_validator_finish(
    HurrayCompositeValidator *v, HurrayError *err);

/* Frees a validator (*v is moved) and sets the caller's *v to NULL. NULL and
 * *v == NULL are no-ops. */
HURRAY_API void hurray_composite_validator_destroy(HurrayCompositeValidator **v);

/*
 * Validates a whole tree given in pre-order (the order of a stream or file):
 * descs[0] is a head, followed by its members, each nested head followed by
 * its own members. descs has `count` borrowed entries; only the tree's own
 * entries are read. *consumed (may be NULL) receives the number of entries
 * the tree spans (1 when descs[0] is not a composite head: nothing to check).
 * A tree cut short by the end of descs is torn: HURRAY_ERR_INVALID_COMPOSITE.
 * Nesting deeper than HURRAY_MAX_COMPOSITE_DEPTH: HURRAY_ERR_INVALID_COMPOSITE.
 * HURRAY_ERR_NULL_POINTER when descs or descs[0] is NULL or count is 0.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_composite_validate_preorder(
    const HurrayDescriptorFields *const *descs, size_t count, uint32_t options, size_t *consumed,
    HurrayError *err);

/* ---- overlay member roles ------------------------------------------------- */

/*
 * The descriptor member `index` (borrowed) presents to a head of composition
 * rule `rule`: for an overlay, the member's own with a composite member
 * section of its role (hurray_overlay_member_role) in *out (owned: free with
 * hurray_descriptor_destroy); *out NULL when that is the member's own
 * descriptor unchanged (any other rule, or a member decoded with a role
 * section, which keeps it). The new descriptor is built permissively (the
 * member was checked when it was built; a relayed member stays presentable).
 * HURRAY_ERR_NULL_POINTER for a NULL `member` or `out`;
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_composite_member_present(
    const HurrayDescriptor *member, uint8_t rule, uint32_t index, HurrayDescriptor **out,
    HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_COMPOSITE_H */
