//===- ProfileBindings.h - trnc._C.Profile: a timed run for Python -*- C++ -*-===//
//
// The Python face of a trnc::Profile (sim/Profile.h): totals, per-engine
// numbers, HFU/MFU/MBU, the DMA size histogram, the verdict, and the Chrome
// trace / human summary (runtime/profile). TrncModule.cpp's Executable.run
// wraps the profile of a run with wrapProfile().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "sim/Profile.h"

#include <pybind11/pybind11.h>

namespace trnc::python {

/// A trnc._C.Profile for one run of `program`. `owner` (the Executable that
/// holds `program`) is kept alive as long as the profile.
pybind11::object wrapProfile(pybind11::object owner, const Program &program, Profile profile);

/// Registers trnc._C.Profile.
void registerProfileBindings(pybind11::module_ &m);

} // namespace trnc::python
