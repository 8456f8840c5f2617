//===- Simulators.h - One simulator per target for a fuzzing session -*- C++ -*-===//
//
// The fuzz targets reuse a Simulator per target for the whole session, as a
// caller would (its SBUF/PSUM come lazily from calloc), instead of paying
// for one per execution.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "machine/MachineModel.h"
#include "sim/Simulator.h"

#include <map>
#include <memory>
#include <string>

namespace trnc::fuzz {

inline Simulator &simulatorFor(const std::string &target) {
  static std::map<std::string, std::unique_ptr<Simulator>> sims;
  auto &sim = sims[target];
  if (!sim)
    sim = std::make_unique<Simulator>(*lookupMachineModel(target));
  return *sim;
}

} // namespace trnc::fuzz
