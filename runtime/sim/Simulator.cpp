//===- Simulator.cpp - Engine loop, semaphores and memory binding ----------===//
//
// Binds HBM regions (inputs/outputs: the caller's buffers, zero copy;
// scratch: zeroed memory owned by the simulator; constants: the program's
// bytes, read-only), then runs the per-engine streams as a discrete-event
// simulation: each engine issues in order; the next instruction to run is
// the one with the earliest possible start (engine free, waits met at the
// time the waited-for signals were raised; ties to the lowest engine), and
// its signal is raised at its end, in time order. Instructions execute
// functionally at their start, which is a happens-before order: every
// signal an instruction waits for comes from one that started (and ran)
// earlier. Untimed runs use the same loop with zero durations, which is the
// old "lowest-numbered ready engine first" order. When no engine can move
// and no signal is pending, the run fails with a deadlock report instead of
// hanging. The Dma stream issues in order too (a DMA whose waits are unmet
// holds back every later DMA) and hands each transfer to its queue; queues
// overlap, so DMAs end, and signal, out of order across queues (hence one
// semaphore per queue, isa/Isa.h). Nop costs nothing: it only carries
// waits. SBUF, PSUM and the scratch arena (sim/ScratchArena.h: zeroed for
// every run, lazily; packed by lifetime after a program's first run) are
// allocated once per Simulator.
// Durations come from sim/Timing.cpp and sim/CostModel.cpp.
//
//===----------------------------------------------------------------------===//

#include "sim/Simulator.h"

#include "artifact/Artifact.h"
#include "sim/Exec.h"
#include "sim/ScratchArena.h"
#include "sim/Timing.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdlib>
#include <functional>
#include <limits>
#include <queue>
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
  size_t pc = 0;      // next instruction of this engine's stream
  double freeNs = 0;  // when the engine can issue its next instruction
  uint64_t executed = 0;
};

/// A signal raised when an instruction ends (simulated time).
struct Completion {
  double ns;
  uint64_t seq; // issue order: ties resolve deterministically
  uint8_t semaphore;
  Engine engine;
  uint32_t index;
  bool operator>(const Completion &o) const {
    return ns != o.ns ? ns > o.ns : seq > o.seq;
  }
};

llvm::Error fail(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

struct Simulator::State {
  MachineModel model;
  Buffer sbuf, psum;
  sim::ScratchArena scratch;
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
  s.ctx.exactTranspose = model.tensorTransposeBitExact;
  s.ctx.buf0.resize(sim::kChunk);
  s.ctx.buf1.resize(sim::kChunk);
  s.ctx.buf2.resize(sim::kChunk);
}

Simulator::~Simulator() = default;

namespace {

/// Bind every region to host memory: the caller's buffers, zeroed scratch
/// (in the arena), and the program's constant bytes.
llvm::Error bindRegions(const Program &program, llvm::ArrayRef<void *> inputs,
                        llvm::ArrayRef<void *> outputs, bool timed,
                        sim::ScratchArena &scratch, sim::ExecContext &ctx) {
  if (inputs.size() != program.numInputs())
    return fail("program '" + program.name + "' takes " +
                std::to_string(program.numInputs()) + " inputs, " +
                std::to_string(inputs.size()) + " given");
  if (outputs.size() != program.numOutputs())
    return fail("program '" + program.name + "' produces " +
                std::to_string(program.numOutputs()) + " outputs, " +
                std::to_string(outputs.size()) + " given");
  ctx.regions.assign(program.regions.size(), nullptr);
  if (!scratch.bind(program, timed, ctx))
    return fail("cannot allocate " + std::to_string(scratch.bytes()) +
                " bytes of scratch for program '" + program.name + "'");
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
    case Region::Kind::Scratch: // bound by the arena
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
  case Opcode::CopyPredicated: return sim::execCopyPredicated(ctx, inst);
  case Opcode::Iota: return sim::execIota(ctx, inst);
  case Opcode::AffineSelect: return sim::execAffineSelect(ctx, inst);
  case Opcode::TensorScan: return sim::execTensorScan(ctx, inst);
  case Opcode::DmaIndirect: return sim::execDmaIndirect(ctx, inst);
  case Opcode::Random: return sim::execRandom(ctx, inst);
  case Opcode::Collective: return; // runCollective: it can fail
  }
}

/// A collective instruction: the host moves the bytes (Collectives.h).
llvm::Error runCollective(const Program &program, CollectiveHook *hook,
                          const sim::ExecContext &ctx,
                          const Instruction &inst, uint32_t index) {
  CollectiveCall call = sim::describeCollective(ctx, inst);
  std::string what = std::string(collectiveKindName(call.kind)) + " over " +
                     std::to_string(call.groupSize) + " ranks (" +
                     describeInstruction(program, Engine::Dma, index) + ")";
  if (!hook)
    return fail("program '" + program.name + "' runs a collective, " + what +
                ", but no process group was given to run it through (run "
                "it from a torch.distributed process, e.g. under torchrun)");
  if (llvm::Error e = hook->run(call))
    return fail("collective " + what + " of program '" + program.name +
                "' failed: " + llvm::toString(std::move(e)));
  return llvm::Error::success();
}

} // namespace

llvm::Error Simulator::run(const Program &program,
                           llvm::ArrayRef<void *> inputs,
                           llvm::ArrayRef<void *> outputs, RunStats *stats) {
  // Functional only: the callers of this overload want results and counts.
  RunOptions options;
  options.timed = false;
  if (llvm::Error e = run(program, inputs, outputs, options, nullptr))
    return e;
  if (stats)
    for (unsigned e = 0; e < kNumEngines; ++e)
      stats->instructions[e] = state->engines[e].executed;
  return llvm::Error::success();
}

namespace {

/// The deadlock report: every stuck instruction and what it waits for.
std::string deadlockMessage(const Program &program,
                            const std::array<EngineState, kNumEngines> &engines,
                            const std::array<uint32_t, kNumSemaphores> &sems) {
  std::string msg = "deadlock in program '" + program.name +
                    "': no engine can make progress;";
  for (unsigned e = 0; e < kNumEngines; ++e) {
    const EngineState &es = engines[e];
    if (es.pc >= program.streams[e].size())
      continue;
    const Instruction &inst = program.streams[e][es.pc];
    msg += "\n  " + describeInstruction(program, Engine(e), es.pc) +
           " waits for";
    for (unsigned w = 0; w < inst.numWaits; ++w) {
      const SemaphoreWait &sw = inst.waits[w];
      if (sems[sw.semaphore] >= sw.value)
        continue;
      msg += " semaphore " + std::to_string(sw.semaphore) + " >= " +
             std::to_string(sw.value) + " (now " +
             std::to_string(sems[sw.semaphore]) + ")";
    }
  }
  msg += "\n  semaphores:";
  bool any = false;
  for (unsigned i = 0; i < kNumSemaphores; ++i)
    if (sems[i]) {
      msg += " s" + std::to_string(i) + "=" + std::to_string(sems[i]);
      any = true;
    }
  if (!any)
    msg += " all 0";
  return msg;
}

} // namespace

llvm::Error Simulator::run(const Program &program,
                           llvm::ArrayRef<void *> inputs,
                           llvm::ArrayRef<void *> outputs,
                           const RunOptions &options, Profile *profile) {
  State &s = *state;
  if (program.target != s.model.name)
    return fail("program '" + program.name + "' targets " + program.target +
                " but this simulator models " + s.model.name);
  // Everything below runs without bounds checks: the verifier proves them.
  if (llvm::Error e = verifyProgram(program))
    return e;
  if (llvm::Error e = bindRegions(program, inputs, outputs, options.timed,
                                  s.scratch, s.ctx))
    return e;

  s.semaphores.fill(0);
  s.engines.fill(EngineState());
  // signalNs[sem][v - 1]: when semaphore `sem` reached value v. Signals are
  // raised in time order, so each list is sorted.
  std::array<std::vector<double>, kNumSemaphores> signalNs;
  std::priority_queue<Completion, std::vector<Completion>,
                      std::greater<Completion>>
      pending;
  uint64_t seq = 0;
  bool collectives = llvm::any_of(
      program.streams[size_t(Engine::Dma)],
      [](const Instruction &i) { return i.opcode == Opcode::Collective; });
  sim::TimingModel timing(s.model, options.recordTrace,
                          options.timed ? profile : nullptr, collectives);
  ExecutionObserver *observer = options.observer;
  if (observer)
    observer->onStart(program);

  // When the waits of `inst` were all met, or -1 if some are not yet.
  auto waitsMetAt = [&](const Instruction &inst) {
    double at = 0;
    for (unsigned w = 0; w < inst.numWaits; ++w) {
      const SemaphoreWait &sw = inst.waits[w];
      if (s.semaphores[sw.semaphore] < sw.value)
        return -1.0;
      if (sw.value)
        at = std::max(at, signalNs[sw.semaphore][sw.value - 1]);
    }
    return at;
  };

  for (;;) {
    // The ready instruction with the earliest start; ties to the lowest
    // engine number.
    int best = -1;
    double bestNs = std::numeric_limits<double>::infinity();
    bool left = false;
    for (unsigned e = 0; e < kNumEngines; ++e) {
      const EngineState &es = s.engines[e];
      if (es.pc >= program.streams[e].size())
        continue;
      left = true;
      double met = waitsMetAt(program.streams[e][es.pc]);
      if (met < 0)
        continue;
      double start = std::max(es.freeNs, met);
      if (start < bestNs) {
        best = int(e);
        bestNs = start;
      }
    }
    // The next DMA event (a transfer ending or starting to move bytes):
    // DMA end times are known only as time advances to them.
    double dmaNs = options.timed ? timing.nextDmaEventNs()
                                 : std::numeric_limits<double>::infinity();
    double horizon = std::min(bestNs, dmaNs);
    // Raise signals due no later than that first: they may only enable
    // instructions starting at or after their own time.
    if (!pending.empty() && pending.top().ns <= horizon) {
      Completion c = pending.top();
      pending.pop();
      uint32_t value = ++s.semaphores[c.semaphore];
      signalNs[c.semaphore].push_back(c.ns);
      if (observer)
        observer->onSignal(c.engine, c.index, c.semaphore, value);
      continue;
    }
    if (dmaNs <= bestNs && dmaNs < std::numeric_limits<double>::infinity()) {
      timing.advanceDmaTo(dmaNs);
      for (const sim::DmaDone &d : timing.takeDmaCompletions())
        if (d.transfer.inst->signal != kNoSemaphore)
          pending.push({d.endNs, seq++, d.transfer.inst->signal, Engine::Dma,
                        d.transfer.index});
      continue;
    }
    if (best < 0) {
      if (!left)
        break;
      llvm::Error err = fail(deadlockMessage(program, s.engines, s.semaphores));
      if (observer)
        err = llvm::joinErrors(std::move(err), observer->onFinish());
      return err;
    }

    EngineState &es = s.engines[best];
    Engine engine = Engine(best);
    uint32_t index = uint32_t(es.pc);
    const Instruction &inst = program.streams[best][es.pc];
    if (observer)
      observer->onExecute(engine, index, inst);
    s.scratch.beforeExecute(inst, s.ctx);
    if (inst.opcode == Opcode::Collective) {
      if (llvm::Error err =
              runCollective(program, options.collectives, s.ctx, inst, index)) {
        if (observer)
          err = llvm::joinErrors(std::move(err), observer->onFinish());
        return err;
      }
    } else {
      execute(s.ctx, inst);
    }
    double endNs = bestNs;
    if (options.timed) {
      if (engine == Engine::Dma) {
        // The Dma stream only dispatches to the queue; the queue runs it
        // and signals when time reaches its end (above).
        std::optional<sim::Timed> now =
            timing.dma(index, inst, es.freeNs, bestNs);
        es.freeNs = bestNs;
        if (!now) {
          ++seq;
          ++es.pc;
          ++es.executed;
          continue;
        }
        endNs = now->endNs;
      } else {
        endNs = timing.compute(engine, index, inst, es.freeNs, bestNs).endNs;
        es.freeNs = endNs;
      }
    }
    if (inst.signal != kNoSemaphore)
      pending.push({endNs, seq, inst.signal, engine, index});
    ++seq;
    ++es.pc;
    ++es.executed;
  }

  if (llvm::Error err = s.scratch.finishRun()) {
    if (observer)
      err = llvm::joinErrors(std::move(err), observer->onFinish());
    return err;
  }
  if (options.timed)
    timing.finish();
  if (profile) {
    if (!options.timed) {
      *profile = Profile();
      profile->target = s.model.name;
    }
    for (unsigned e = 0; e < kNumEngines; ++e)
      profile->engines[e].instructions = s.engines[e].executed;
  }
  if (observer)
    return observer->onFinish();
  return llvm::Error::success();
}

} // namespace trnc
