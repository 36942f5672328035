// The public headers seen by a C++ program: they must compile cleanly as C++
// (-std=c++11 -Wall -Wextra -Werror -pedantic), and their extern "C" blocks
// must let the program link against the C library. Built only when CMake
// finds a C++ compiler (tests/c/CMakeLists.txt).
#include "hurray/hurray.h"

#include <cstdio>
#include <cstring>

namespace {

int releases = 0;

extern "C" void on_release(void *, void *) { ++releases; }

int owner_releases = 0;

extern "C" void on_owner(void *) { ++owner_releases; }

int fail(const char *what) {
  std::fprintf(stderr, "C++ header check: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  if (hurray_c_abi_version() != HURRAY_C_ABI_VERSION || HURRAY_C_ABI_VERSION != 4)
    return fail("ABI version");

  alignas(64) static unsigned char bytes[128];
  HurrayBuffer *buffer = nullptr;
  HurrayStatus st = hurray_buffer_from_ptr(bytes, sizeof bytes, HURRAY_MIN_BUFFER_ALIGNMENT,
                                           HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                                           HURRAY_MEMORY_STANDARD, on_release, nullptr, &buffer);
  if (st != HURRAY_OK) return fail(hurray_status_name(st));
  if (hurray_buffer_handoff_producer_synced(buffer) != HURRAY_OK) return fail("handoff");

  HurrayBufferList *list = nullptr;
  if (hurray_buffer_list_new(1, &list) != HURRAY_OK) return fail("list_new");
  if (hurray_buffer_list_push(list, buffer) != HURRAY_OK) return fail("push");
  uint64_t len = 0;
  if (hurray_buffer_list_len(list, &len) != HURRAY_OK || len != 1) return fail("len");
  HurrayBuffer *borrowed = nullptr;
  uint64_t size = 0;
  if (hurray_buffer_list_get(list, 0, &borrowed) != HURRAY_OK ||
      hurray_buffer_byte_size(borrowed, &size) != HURRAY_OK || size != sizeof bytes)
    return fail("get");

  static const uint8_t descriptor[] = {'H', 'R', 'R', 'Y'};
  HurrayTensorContext *ctx = nullptr;
  if (hurray_tensor_context_new(HURRAY_C_ABI_VERSION, descriptor, sizeof descriptor, nullptr,
                                on_owner, &ctx) != HURRAY_OK)
    return fail("context_new");
  const uint8_t *out = nullptr;
  uint64_t out_len = 0;
  if (hurray_tensor_context_descriptor(ctx, &out, &out_len) != HURRAY_OK || out_len != 4 ||
      std::memcmp(out, descriptor, 4) != 0)
    return fail("descriptor");

  // The opaque handles of the reference header exist as types.
  HurrayReader *reader = nullptr;
  HurrayWriter *writer = nullptr;
  HurrayDescriptor *decoded = nullptr;
  (void)reader;
  (void)writer;
  (void)decoded;

  if (hurray_tensor_context_destroy(&ctx) != HURRAY_OK || ctx != nullptr) return fail("ctx");
  if (hurray_buffer_list_destroy(&list) != HURRAY_OK || list != nullptr) return fail("list");
  if (releases != 1 || owner_releases != 1) return fail("release counts");
  return 0;
}
