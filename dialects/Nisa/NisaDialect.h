//===- NisaDialect.h - nisa dialect, attributes, types ------------*- C++ -*-===//
//
// The instruction-level dialect. Enums mirror trnc::isa numerically so the
// emitter converts with a static_cast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Nisa/NisaEnums.h.inc"
#include "dialects/Nisa/NisaDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Nisa/NisaAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Nisa/NisaTypes.h.inc"

#include "machine/MachineModel.h"

#include <optional>

namespace trnc::nisa {

/// The `nisa.target` of the module enclosing `op` (or `op` itself), if set.
std::optional<llvm::StringRef> moduleTarget(mlir::Operation *op);

/// The machine model of the module enclosing `op`: its `nisa.target`'s, or
/// the default target's when unset (the attribute's verifier rejects an
/// unknown name).
const MachineModel &targetModelOf(mlir::Operation *op);

} // namespace trnc::nisa
