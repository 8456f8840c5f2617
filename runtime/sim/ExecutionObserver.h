//===- ExecutionObserver.h - Hooks into a simulated run -----------*- C++ -*-===//
//
// Lets analyses (the race checker, future debuggers) watch a run without the
// engine loop knowing them. Callbacks come in happens-before-consistent
// order: an instruction's onExecute comes after the onSignal calls that
// satisfied its waits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "isa/Isa.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace trnc {

class ExecutionObserver {
public:
  virtual ~ExecutionObserver() = default;
  /// A run of `program` begins.
  virtual void onStart(const Program &program) {}
  /// Instruction `index` of `engine`'s stream on physical core `core` (0
  /// but at LNC=2) executes (its waits are met; it has not signalled yet).
  virtual void onExecute(unsigned core, isa::Engine engine, size_t index,
                         const isa::Instruction &inst) = 0;
  /// That instruction then raised semaphore `semaphore` of physical core
  /// `semaphoreCore` (its own, or the peer's for a barrier) to `value`.
  virtual void onSignal(unsigned core, isa::Engine engine, size_t index,
                        unsigned semaphoreCore, uint8_t semaphore,
                        uint32_t value) {}
  /// The run ended; return an error to fail it (e.g. races were found).
  virtual llvm::Error onFinish() { return llvm::Error::success(); }
};

} // namespace trnc
