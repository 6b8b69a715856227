//===- Interfaces.cpp - What the Decompose library attaches ---------------===//
//
// The binding of ops to their hand-written decompositions, and
// `linalg::AggregatedOpInterface` on `fuel.fused`, attached as an external
// model so that the dialect does not link lowering code.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"
#include "FuelFused/Decompose/Decompose.h"
#include "FuelFused/IR/FuelDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::fuel;

namespace {
struct DecompositionBinding {
  uint32_t id;
  LogicalResult (*check)(FusedOp op, std::string &why);
  SmallVector<Value> (*build)(OpBuilder &b, FusedOp op);
};
using namespace mlir::fuel::decompositions;
#define GET_FUSED_OP_DECOMPOSITION_TABLE
#include "FusedOpDecompositions.inc"
} // namespace

std::optional<HandDecomposition>
mlir::fuel::lookupDecomposition(const FusedOpInfo &info) {
  if (!info.hasDecomposition)
    return std::nullopt;
  const DecompositionBinding *it = llvm::lower_bound(
      decompositionTable, info.id,
      [](const DecompositionBinding &b, uint32_t id) { return b.id < id; });
  if (it == std::end(decompositionTable) || it->id != info.id)
    return std::nullopt;
  return HandDecomposition{it->check, it->build};
}

namespace {
/// `decomposeOperation` decomposes the op as `--fuel-decompose` does; it
/// fails with a remark, creating nothing, when it cannot.
struct FusedOpAggregatedModel
    : public linalg::AggregatedOpInterface::ExternalModel<
          FusedOpAggregatedModel, FusedOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    std::string why;
    FailureOr<SmallVector<Value>> values =
        decomposeFusedOp(b, cast<FusedOp>(op), why);
    if (failed(values))
      op->emitRemark() << "cannot decompose: " << why;
    return values;
  }
};
} // namespace

void mlir::fuel::registerAggregatedOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FuelDialect *) {
    FusedOp::attachInterface<FusedOpAggregatedModel>(*ctx);
  });
}
