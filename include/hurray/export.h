/*
 * hurray/export.h - symbol visibility for the public API.
 *
 * Every public function is declared with HURRAY_API. The library is compiled
 * with hidden visibility by default, so only HURRAY_API symbols are exported
 * from the shared library (CI checks that each one starts with "hurray_").
 */
#ifndef HURRAY_EXPORT_H
#define HURRAY_EXPORT_H

#if defined(_WIN32) && !defined(HURRAY_STATIC)
#  if defined(HURRAY_BUILDING_LIBRARY)
#    define HURRAY_API __declspec(dllexport)
#  else
#    define HURRAY_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define HURRAY_API __attribute__((visibility("default")))
#else
#  define HURRAY_API
#endif

#endif /* HURRAY_EXPORT_H */
