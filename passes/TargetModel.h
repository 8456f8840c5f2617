//===- TargetModel.h - the machine model a pass compiles for ------*- C++ -*-===//
//
// The target is one module attribute, `nisa.target` (set by trnc-set-target,
// the first pass of every pipeline). A pass that needs the target's sizes or
// costs looks it up here; its own `target` option (for running it alone, as
// lit tests do) must agree with the attribute when both are set, and an
// unknown name fails the same way everywhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Nisa/NisaDialect.h"
#include "machine/MachineModel.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace trnc {

/// The machine model `op` compiles for: its module's `nisa.target`, else
/// `option`, else the default target. Nullopt after an error on `op` when
/// `option` names an unknown target or disagrees with the module's.
inline std::optional<MachineModel> targetModel(mlir::Operation *op,
                                               llvm::StringRef option) {
  std::optional<llvm::StringRef> module = nisa::moduleTarget(op);
  if (module && !option.empty() && option != *module) {
    op->emitError("target '") << option << "' differs from the module's "
                              << nisa::NisaDialect::kTargetAttrName << " '"
                              << *module << "'";
    return std::nullopt;
  }
  llvm::StringRef name =
      module ? *module : option.empty() ? llvm::StringRef(kDefaultTarget) : option;
  std::optional<MachineModel> model = lookupMachineModel(name.str());
  if (!model)
    op->emitError("unknown target '")
        << name << "' (known: " << knownTargetNames() << ")";
  return model;
}

} // namespace trnc
