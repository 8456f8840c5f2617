//===- Simulator.h - Functional NeuronCore simulator ---------------*- C++ -*-===//
//
// Runs a verified Program: each engine's stream in order, engines interleaved
// as their semaphore waits allow, over SBUF, PSUM and HBM regions bound to the
// caller's buffers (inputs and outputs are zero copy). Functional today; the
// data structures leave room for the timed model (a later issue).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "artifact/Program.h"
#include "machine/MachineModel.h"
#include "sim/Collectives.h"
#include "sim/ExecutionObserver.h"
#include "sim/Profile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace trnc {

struct RunStats {
  std::array<uint64_t, isa::kNumEngines> instructions{};
};

struct RunOptions {
  /// Compute simulated time (the timed model). Off: functional only.
  bool timed = true;
  /// Keep one InstructionRecord per executed instruction in Profile::trace.
  bool recordTrace = false;
  /// Watches the run (e.g. the race checker); may fail it in onFinish.
  ExecutionObserver *observer = nullptr;
  /// Performs the program's collective instructions (sim/Collectives.h);
  /// a program with a collective fails to run without one.
  CollectiveHook *collectives = nullptr;
};

class Simulator {
public:
  explicit Simulator(const MachineModel &model);
  ~Simulator();

  /// Execute `program`. inputs[i] / outputs[j] point at the bytes of input i /
  /// output j, laid out as the program's Input/Output regions describe.
  /// A deadlock (a wait no engine can satisfy) is an error naming the stuck
  /// instructions, never a hang.
  llvm::Error run(const Program &program, llvm::ArrayRef<void *> inputs,
                  llvm::ArrayRef<void *> outputs, RunStats *stats = nullptr);

  /// As above, with options; fills `profile` (when non-null) with simulated
  /// time, utilisation and, if requested, the per-instruction trace.
  llvm::Error run(const Program &program, llvm::ArrayRef<void *> inputs,
                  llvm::ArrayRef<void *> outputs, const RunOptions &options,
                  Profile *profile);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace trnc
