//===- NisaDialect.cpp - nisa dialect, attribute and type verifiers -------===//
#include "dialects/Nisa/NisaOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace trnc::nisa;

#include "dialects/Nisa/NisaDialect.cpp.inc"
#include "dialects/Nisa/NisaEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Nisa/NisaAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Nisa/NisaTypes.cpp.inc"

//===----------------------------------------------------------------------===//
// The target attribute
//===----------------------------------------------------------------------===//

std::optional<llvm::StringRef> trnc::nisa::moduleTarget(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto name =
            op->getAttrOfType<StringAttr>(NisaDialect::kTargetAttrName))
      return name.getValue();
  return std::nullopt;
}

const trnc::MachineModel &trnc::nisa::targetModelOf(Operation *op) {
  // Every known target's model, built once.
  static const std::vector<MachineModel> models = [] {
    std::vector<MachineModel> all;
    for (const std::string &name : knownTargets())
      all.push_back(*lookupMachineModel(name));
    return all;
  }();
  llvm::StringRef name = moduleTarget(op).value_or(kDefaultTarget);
  for (const MachineModel &m : models)
    if (m.name == name)
      return m;
  return models.front(); // the default target (knownTargets() lists it first)
}

LogicalResult NisaDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != kTargetAttrName)
    return op->emitError("unknown nisa attribute '")
           << attr.getName().getValue() << "'";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || !lookupMachineModel(name.getValue().str()))
    return op->emitError("'") << kTargetAttrName << "' must name a target ("
                              << knownTargetNames() << "), got "
                              << attr.getValue();
  if (!isa<ModuleOp>(op))
    return op->emitError("'") << kTargetAttrName << "' belongs on a module";
  return success();
}

void NisaDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Nisa/NisaAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Nisa/NisaTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Nisa/NisaOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// AccessPatternAttr
//===----------------------------------------------------------------------===//

LogicalResult
AccessPatternAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t offset, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> counts) {
  if (strides.size() != counts.size())
    return emitError() << "access pattern has " << strides.size()
                       << " strides but " << counts.size() << " counts";
  // ap_rank: one partition dim plus at most four free dims (NKI ISA).
  if (counts.empty() || counts.size() > 5)
    return emitError() << "access pattern must have 1 to 5 dims, got "
                       << counts.size();
  for (int64_t c : counts)
    if (c <= 0)
      return emitError() << "access pattern counts must be positive";
  if (offset < 0)
    return emitError() << "access pattern offset must be non-negative";
  return success();
}

int64_t AccessPatternAttr::getNumElements() const {
  int64_t n = 1;
  for (int64_t c : getCounts())
    n *= c;
  return n;
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

static unsigned elementBytes(Type t) {
  return (t.getIntOrFloatBitWidth() + 7) / 8;
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               MemorySpace space, int64_t partitions,
                               int64_t freeSize, Type elementType) {
  // tile_p: SBUF and PSUM have 128 partitions (NKI architecture guides).
  if (partitions < 1 || partitions > 128)
    return emitError() << "tile partitions must be in 1..128, got "
                       << partitions;
  if (freeSize < 1)
    return emitError() << "tile free size must be positive";
  if (!elementType.isF32() && !elementType.isBF16() && !elementType.isF16() &&
      !elementType.isInteger(32) && !elementType.isInteger(8) &&
      !elementType.isInteger(1)) // i1: bool, one byte (no i64 on chip)
    return emitError() << "tile element type must be f32, bf16, f16, i32, "
                          "i8 or i1, got "
                       << elementType;
  int64_t bytes = freeSize * elementBytes(elementType);
  // tile_psum: PSUM is 16 KiB per partition (8 banks x 2 KiB).
  if (space == MemorySpace::psum && bytes > 16 * 1024)
    return emitError() << "PSUM tile needs " << bytes
                       << " bytes per partition, more than 16384";
  return success();
}

int64_t TileType::getPartitionBytes() const {
  return getFreeSize() * elementBytes(getElementType());
}
