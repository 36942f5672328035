/* The word naming a tag kind (include/hurray/dtype.h), for messages: the
 * validator's own (hurray__tag_kind_word), public. */
#include "descriptor_impl.h"

const char *hurray_tag_kind_name(HurrayTagKind kind) { return hurray__tag_kind_word(kind); }
