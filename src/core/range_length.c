/* The length of a range (include/hurray/convert.h, hurray_arange_length):
 * NumPy's, from the quotient (stop - start) / step the caller computed (the
 * Python package with Python's true division, exact for integers). */
#include <math.h>

#include "hurray/convert.h"

bool hurray_arange_length(double quotient, bool span_nonzero, uint64_t *out) {
  if (span_nonzero && quotient == 0.0) { /* underflowed: one element when positive */
    *out = copysign(1.0, quotient) < 0.0 ? 0 : 1; /* -0.0 (MinGW's signbit warns) */
    return true;
  }
  double c = ceil(quotient);
  if (!(c < 9223372036854775808.0)) return false; /* 2**63; also inf and NaN */
  *out = c > 0.0 ? (uint64_t)c : 0;
  return true;
}
