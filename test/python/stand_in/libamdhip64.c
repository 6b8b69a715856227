/* A stand-in for the HIP runtime (libamdhip64.so) on a machine without a
 * GPU: the device queries of fuel_mlir.gpu.rocm_devices() for two GPUs, the
 * first with 304 compute units (hipDeviceAttribute_t's
 * hipDeviceAttributeMultiprocessorCount, 63), the second declining the
 * query. STUB_COUNT=<n> sets the GPUs. */

#include <stdlib.h>

int hipGetDeviceCount(int *count) {
  const char *s = getenv("STUB_COUNT");
  *count = s ? atoi(s) : 2;
  return 0;
}

int hipDeviceGetAttribute(int *value, int attribute, int device) {
  if (attribute == 63 && device == 0) {
    *value = 304;
    return 0;
  }
  return 1; /* hipErrorInvalidValue */
}
