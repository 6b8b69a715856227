//===- TrailingZeros.h - Known powers of two of index values ----*- C++ -*-===//
//
// What power of two an index or integer value is known to be a multiple
// of, from the ops that compute it: the alignment of a kernel's accesses
// (fuel-gpu-align-vector-accesses) and the reads that consecutive points
// of a quantized decode share (the GPU quantized schedule) both need it.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_CODEGEN_TRAILINGZEROS_H
#define FUEL_CODEGEN_TRAILINGZEROS_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace fuel {

/// A count of trailing zeros that stands for "any power of two" (a zero).
constexpr unsigned kAllTrailingZeros = 64;

/// The trailing zero bits of `c`: kAllTrailingZeros for 0.
unsigned trailingZerosOf(int64_t c);

/// The trailing zero bits `v` (an index or integer) is known to have: the
/// log2 of the greatest power of two known to divide it. Constants, sums
/// and differences, products, shifts by constants, floor-divisions and
/// remainders by constant powers of two, minima, maxima, selects, casts,
/// affine maps and `scf.for` induction variables (lower bound plus steps)
/// are looked through, a few levels deep; anything else is 0.
unsigned knownTrailingZeros(Value v);

/// knownTrailingZeros of an index value or attribute.
unsigned knownTrailingZeros(OpFoldResult v);

} // namespace fuel
} // namespace mlir

#endif // FUEL_CODEGEN_TRAILINGZEROS_H
