# Cross-compiling for Windows x86_64 with MinGW-w64 GCC (Debian: gcc-mingw-w64-x86-64-posix).
#
#   cmake -S . -B build-win -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw64.cmake
#
# scripts/windows_cross.sh uses it to build the library and the C suite and run them under
# Wine. Override the tool prefix with -DHURRAY_MINGW_PREFIX=... (default x86_64-w64-mingw32).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)

if(NOT HURRAY_MINGW_PREFIX)
  set(HURRAY_MINGW_PREFIX x86_64-w64-mingw32)
endif()

# The -posix flavour of the compiler links winpthreads; the library itself does not use
# it (src/core/platform_win32.c uses Win32 primitives), only the C tests' threads might.
find_program(_hurray_mingw_cc NAMES ${HURRAY_MINGW_PREFIX}-gcc-posix ${HURRAY_MINGW_PREFIX}-gcc
             REQUIRED)
find_program(_hurray_mingw_cxx NAMES ${HURRAY_MINGW_PREFIX}-g++-posix ${HURRAY_MINGW_PREFIX}-g++)
set(CMAKE_C_COMPILER ${_hurray_mingw_cc})
if(_hurray_mingw_cxx)
  set(CMAKE_CXX_COMPILER ${_hurray_mingw_cxx})
endif()
find_program(CMAKE_RC_COMPILER NAMES ${HURRAY_MINGW_PREFIX}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${HURRAY_MINGW_PREFIX})
if(HURRAY_MINGW_SYSROOT_EXTRA)
  list(APPEND CMAKE_FIND_ROOT_PATH ${HURRAY_MINGW_SYSROOT_EXTRA})
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Executables are run through Wine by ctest (add_test with a target name as COMMAND).
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(_hurray_wine NAMES wine64 wine HINTS /usr/lib/wine /usr/lib64/wine)
  if(_hurray_wine)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${_hurray_wine})
  endif()
endif()

# The GCC runtime (libgcc, winpthreads) is linked statically so that the test
# executables run under Wine without a copy of the MinGW DLLs beside them.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc -static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static")
