# The one list of compiler warnings of the project (included by the top-level
# CMakeLists.txt). Every C target of the project takes it through an INTERFACE
# target, linked PRIVATE (so nothing of it reaches the installed package):
#
#   hurray_warnings              HURRAY_WARNING_FLAGS, -Werror when HURRAY_WERROR is ON,
#                                and HURRAY_CHECK_RESULTS (include/hurray/export.h: an
#                                ignored HurrayStatus is a warning). The library, the
#                                tests, the CLI, the examples, fuzz and bench use it.
#   hurray_warnings_no_pedantic  the same less -Wpedantic, for the CPython extension:
#                                CPython's type-slot API (PyType_Slot.pfunc) stores
#                                function pointers in a void *, which ISO C pedantry
#                                rejects. HURRAY_CHECK_RESULTS too.
#
# The lists themselves, for a target that wants the flags without the rest:
#   HURRAY_WARNING_FLAGS              with -Wpedantic
#   HURRAY_WARNING_FLAGS_NO_PEDANTIC  without it
# (empty for a compiler other than GCC or Clang; neither holds -Werror).

set(HURRAY_WARNING_FLAGS_NO_PEDANTIC "")
set(HURRAY_WARNING_FLAGS "")
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set(HURRAY_WARNING_FLAGS_NO_PEDANTIC
    -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion
    -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2 -Wundef)
  set(HURRAY_WARNING_FLAGS ${HURRAY_WARNING_FLAGS_NO_PEDANTIC} -Wpedantic)
endif()

function(hurray_add_warnings_target name)
  add_library(${name} INTERFACE)
  target_compile_options(${name} INTERFACE ${ARGN})
  if(HURRAY_WERROR AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${name} INTERFACE -Werror)
  endif()
  # An ignored HurrayStatus is a warning in the project's own code (export.h).
  target_compile_definitions(${name} INTERFACE HURRAY_CHECK_RESULTS=1)
endfunction()

hurray_add_warnings_target(hurray_warnings ${HURRAY_WARNING_FLAGS})
hurray_add_warnings_target(hurray_warnings_no_pedantic ${HURRAY_WARNING_FLAGS_NO_PEDANTIC})
