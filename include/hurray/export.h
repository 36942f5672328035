/*
 * hurray/export.h - symbol visibility for the public API.
 *
 * Every public function is declared with HURRAY_API. The library is compiled
 * with hidden visibility by default, so only HURRAY_API symbols are exported
 * from the shared library (CI checks that each one starts with "hurray_").
 * A program linking the static library defines HURRAY_STATIC (the CMake target
 * hurray::hurray_static does it), which matters on Windows only.
 */
#ifndef HURRAY_EXPORT_H
#define HURRAY_EXPORT_H

#if defined(_WIN32) && !defined(HURRAY_STATIC)
#  if defined(HURRAY_BUILDING_LIBRARY)
/* The DLL's exports are listed in a module-definition file generated from
 * these headers (CMakeLists.txt), so the objects shared by the DLL and the
 * static library carry no dllexport. */
#    define HURRAY_API
#  else
#    define HURRAY_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define HURRAY_API __attribute__((visibility("default")))
#else
#  define HURRAY_API
#endif

/*
 * HURRAY_NODISCARD marks every function returning a HurrayStatus: with
 * HURRAY_CHECK_RESULTS defined (this project's own targets define it, through
 * the hurray_warnings CMake target), GCC and Clang warn when a caller ignores
 * the status. Without it the macro is empty, so a user is not forced to.
 * GCC warns even on a `(void)` cast; a caller that means to ignore a status
 * writes `(void)!f()` or stores it.
 */
#if defined(HURRAY_CHECK_RESULTS) && (defined(__GNUC__) || defined(__clang__))
#  define HURRAY_NODISCARD __attribute__((warn_unused_result))
#else
#  define HURRAY_NODISCARD
#endif

#endif /* HURRAY_EXPORT_H */
