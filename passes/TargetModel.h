//===- TargetModel.h - the machine model a pass compiles for ------*- C++ -*-===//
//
// Every pass that needs the target's sizes or costs takes a `target` option
// and looks it up here, so an unknown name fails the same way everywhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "machine/MachineModel.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace trnc {

/// The machine model of `target`, or nullopt after an error on `op` naming
/// the unknown target and the known ones.
inline std::optional<MachineModel> targetModel(mlir::Operation *op,
                                               llvm::StringRef target) {
  std::optional<MachineModel> model = lookupMachineModel(target.str());
  if (!model) {
    std::string known;
    for (const std::string &name : knownTargets())
      known += (known.empty() ? "" : ", ") + name;
    op->emitError("unknown target '") << target << "' (known: " << known << ")";
  }
  return model;
}

} // namespace trnc
