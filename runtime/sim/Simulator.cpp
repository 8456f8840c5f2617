//===- Simulator.cpp - Engine loop, semaphores and memory binding ----------===//
//
// Binds HBM regions (inputs/outputs: the caller's buffers, zero copy;
// scratch: zeroed memory owned by the simulator; constants: the program's
// bytes, read-only), then runs the per-engine streams: repeatedly execute the
// next instruction of the lowest-numbered engine whose waits are all met,
// and increment its signal semaphore on completion. When no engine can move
// but some have instructions left, the run fails with a deadlock report
// instead of hanging. SBUF and PSUM are allocated once per Simulator.
//
// Each engine has an EngineState (PC today; the timed model adds a clock
// and busy intervals there) so the scheduling loop can later pick by
// simulated time instead of engine number.
//
//===----------------------------------------------------------------------===//

#include "sim/Simulator.h"

#include "artifact/Artifact.h"
#include "sim/Exec.h"

#include <cstdlib>
#include <string>

namespace trnc {

using namespace isa;

namespace {

struct FreeDeleter {
  void operator()(uint8_t *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t[], FreeDeleter>;

/// calloc: zeroed pages come lazily from the OS, so a Simulator is cheap to
/// create even with 28-32 MiB of SBUF.
Buffer allocZeroed(size_t bytes) {
  return Buffer(static_cast<uint8_t *>(std::calloc(bytes ? bytes : 1, 1)));
}

struct EngineState {
  size_t pc = 0;        // next instruction of this engine's stream
  uint64_t clock = 0;   // simulated cycles (reserved for the timed model)
  uint64_t executed = 0;
};

llvm::Error fail(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

struct Simulator::State {
  MachineModel model;
  Buffer sbuf, psum;
  std::vector<Buffer> scratch; // per region, freshly zeroed for every run
  sim::ExecContext ctx;
  std::array<uint32_t, kNumSemaphores> semaphores{};
  std::array<EngineState, kNumEngines> engines{};
};

Simulator::Simulator(const MachineModel &model) : state(new State) {
  State &s = *state;
  s.model = model;
  s.sbuf = allocZeroed(model.sbufBytes());
  s.psum = allocZeroed(model.psumBytes());
  s.ctx.sbuf = s.sbuf.get();
  s.ctx.psum = s.psum.get();
  s.ctx.sbufPartitionBytes = model.sbufPartitionBytes;
  s.ctx.psumPartitionBytes = model.psumPartitionBytes;
  s.ctx.buf0.resize(sim::kChunk);
  s.ctx.buf1.resize(sim::kChunk);
  s.ctx.buf2.resize(sim::kChunk);
}

Simulator::~Simulator() = default;

namespace {

/// Bind every region to host memory: the caller's buffers, fresh zeroed
/// scratch, and the program's constant bytes.
llvm::Error bindRegions(const Program &program, llvm::ArrayRef<void *> inputs,
                        llvm::ArrayRef<void *> outputs,
                        std::vector<Buffer> &scratch,
                        sim::ExecContext &ctx) {
  if (inputs.size() != program.numInputs())
    return fail("program '" + program.name + "' takes " +
                std::to_string(program.numInputs()) + " inputs, " +
                std::to_string(inputs.size()) + " given");
  if (outputs.size() != program.numOutputs())
    return fail("program '" + program.name + "' produces " +
                std::to_string(program.numOutputs()) + " outputs, " +
                std::to_string(outputs.size()) + " given");
  ctx.regions.assign(program.regions.size(), nullptr);
  scratch.clear();
  scratch.resize(program.regions.size());
  for (size_t i = 0; i < program.regions.size(); ++i) {
    const Region &r = program.regions[i];
    switch (r.kind) {
    case Region::Kind::Input:
    case Region::Kind::Output: {
      bool in = r.kind == Region::Kind::Input;
      void *p = (in ? inputs : outputs)[r.index];
      if (!p && r.bytes)
        return fail(std::string(in ? "input " : "output ") +
                    std::to_string(r.index) + " is a null pointer");
      ctx.regions[i] = static_cast<uint8_t *>(p);
      break;
    }
    case Region::Kind::Scratch:
      scratch[i] = allocZeroed(r.bytes);
      if (!scratch[i])
        return fail("cannot allocate " + std::to_string(r.bytes) +
                    " bytes of scratch for region " + std::to_string(i));
      ctx.regions[i] = scratch[i].get();
      break;
    case Region::Kind::Constant:
      // Read-only: the verifier refuses any write to a constant region.
      ctx.regions[i] = const_cast<uint8_t *>(r.data.data());
      break;
    }
  }
  return llvm::Error::success();
}

void execute(sim::ExecContext &ctx, const Instruction &inst) {
  switch (inst.opcode) {
  case Opcode::Nop: return;
  case Opcode::DmaCopy: return sim::execDmaCopy(ctx, inst);
  case Opcode::Matmul: return sim::execMatmul(ctx, inst);
  case Opcode::Activation: return sim::execActivation(ctx, inst);
  case Opcode::TensorTensor: return sim::execTensorTensor(ctx, inst);
  case Opcode::TensorScalar: return sim::execTensorScalar(ctx, inst);
  case Opcode::TensorReduce: return sim::execTensorReduce(ctx, inst);
  case Opcode::TensorCopy: return sim::execTensorCopy(ctx, inst);
  case Opcode::Memset: return sim::execMemset(ctx, inst);
  }
}

} // namespace

llvm::Error Simulator::run(const Program &program,
                           llvm::ArrayRef<void *> inputs,
                           llvm::ArrayRef<void *> outputs, RunStats *stats) {
  RunOptions options;
  options.timed = false;
  if (llvm::Error e = run(program, inputs, outputs, options, nullptr))
    return e;
  if (stats)
    for (unsigned e = 0; e < kNumEngines; ++e)
      stats->instructions[e] = state->engines[e].executed;
  return llvm::Error::success();
}

llvm::Error Simulator::run(const Program &program,
                           llvm::ArrayRef<void *> inputs,
                           llvm::ArrayRef<void *> outputs,
                           const RunOptions &options, Profile *profile) {
  State &s = *state;
  ExecutionObserver *observer = options.observer;
  if (program.target != s.model.name)
    return fail("program '" + program.name + "' targets " + program.target +
                " but this simulator models " + s.model.name);
  // Everything below runs without bounds checks: the verifier proves them.
  if (llvm::Error e = verifyProgram(program))
    return e;
  if (llvm::Error e = bindRegions(program, inputs, outputs, s.scratch, s.ctx))
    return e;

  s.semaphores.fill(0);
  s.engines.fill(EngineState());
  if (observer)
    observer->onStart(program);
  auto waitsMet = [&](const Instruction &inst) {
    for (unsigned w = 0; w < inst.numWaits; ++w)
      if (s.semaphores[inst.waits[w].semaphore] < inst.waits[w].value)
        return false;
    return true;
  };

  for (;;) {
    bool progressed = false, pending = false;
    for (unsigned e = 0; e < kNumEngines; ++e) {
      EngineState &es = s.engines[e];
      const auto &stream = program.streams[e];
      if (es.pc >= stream.size())
        continue;
      pending = true;
      const Instruction &inst = stream[es.pc];
      if (!waitsMet(inst))
        continue;
      if (observer)
        observer->onExecute(Engine(e), es.pc, inst);
      execute(s.ctx, inst);
      if (inst.signal != kNoSemaphore) {
        ++s.semaphores[inst.signal];
        if (observer)
          observer->onSignal(Engine(e), es.pc, inst.signal,
                             s.semaphores[inst.signal]);
      }
      ++es.pc;
      ++es.executed;
      progressed = true;
      break; // rescan from the lowest-numbered engine
    }
    if (progressed)
      continue;
    if (!pending)
      break;
    // Deadlock: name every stuck instruction and what it waits for.
    std::string msg = "deadlock in program '" + program.name +
                      "': no engine can make progress;";
    for (unsigned e = 0; e < kNumEngines; ++e) {
      const EngineState &es = s.engines[e];
      if (es.pc >= program.streams[e].size())
        continue;
      const Instruction &inst = program.streams[e][es.pc];
      msg += "\n  " + describeInstruction(program, Engine(e), es.pc) +
             " waits for";
      for (unsigned w = 0; w < inst.numWaits; ++w) {
        const SemaphoreWait &sw = inst.waits[w];
        if (s.semaphores[sw.semaphore] >= sw.value)
          continue;
        msg += " semaphore " + std::to_string(sw.semaphore) +
               " >= " + std::to_string(sw.value) + " (now " +
               std::to_string(s.semaphores[sw.semaphore]) + ")";
      }
    }
    msg += "\n  semaphores:";
    bool any = false;
    for (unsigned i = 0; i < kNumSemaphores; ++i)
      if (s.semaphores[i]) {
        msg += " s" + std::to_string(i) + "=" + std::to_string(s.semaphores[i]);
        any = true;
      }
    if (!any)
      msg += " all 0";
    // Races seen before the deadlock are reported with it.
    if (observer)
      return llvm::joinErrors(fail(msg), observer->onFinish());
    return fail(msg);
  }

  if (profile) {
    profile->target = s.model.name;
    for (unsigned e = 0; e < kNumEngines; ++e)
      profile->engines[e].instructions = s.engines[e].executed;
  }
  return observer ? observer->onFinish() : llvm::Error::success();
}

} // namespace trnc
