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
// waits. SBUF, PSUM and the scratch arena (sim/ScratchArena.h: regions at
// the offsets the compiler packed them to, zeroed lazily at each run's
// first access) are allocated once per Simulator.
// At LNC=2 the loop runs both physical cores' streams as one simulation:
// agents are (core, engine), each core has its own SBUF, PSUM and
// semaphores, HBM regions are shared, and a Nop flagged kFlagSignalPeer
// raises a barrier semaphore of the other core (isa/Isa.h), barrierNs
// after it issues.
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
  uint8_t semaphoreCore; // whose semaphore (the peer's for a barrier)
  uint8_t core;          // the signalling instruction's core
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

namespace {

using Semaphores = std::array<uint32_t, kNumSemaphores>;
using Engines = std::array<EngineState, kNumEngines>;

/// One physical core's SBUF, PSUM and execution context.
struct CoreMemory {
  Buffer sbuf, psum;
  sim::ExecContext ctx;

  explicit CoreMemory(const MachineModel &model) {
    sbuf = allocZeroed(model.sbufBytes());
    psum = allocZeroed(model.psumBytes());
    ctx.sbuf = sbuf.get();
    ctx.psum = psum.get();
    ctx.sbufPartitionBytes = model.sbufPartitionBytes;
    ctx.psumPartitionBytes = model.psumPartitionBytes;
    ctx.exactTranspose = model.tensorTransposeBitExact;
    ctx.buf0.resize(sim::kChunk);
    ctx.buf1.resize(sim::kChunk);
    ctx.buf2.resize(sim::kChunk);
  }
};

} // namespace

struct Simulator::State {
  MachineModel model;
  sim::ScratchArena scratch;
  /// Physical cores: [0] always, [1] created for the first LNC=2 program.
  std::vector<std::unique_ptr<CoreMemory>> cores;
  std::vector<Semaphores> semaphores;
  std::vector<Engines> engines;
};

Simulator::Simulator(const MachineModel &model) : state(new State) {
  State &s = *state;
  s.model = model;
  s.cores.push_back(std::make_unique<CoreMemory>(model));
}

Simulator::~Simulator() = default;

namespace {

/// Bind every region to host memory: the caller's buffers, zeroed scratch
/// (in the arena), and the program's constant bytes.
llvm::Error bindRegions(const Program &program, llvm::ArrayRef<void *> inputs,
                        llvm::ArrayRef<void *> outputs,
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
  if (!scratch.bind(program, ctx))
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
    for (unsigned e = 0; e < kNumEngines; ++e) {
      stats->instructions[e] = 0;
      for (const Engines &core : state->engines)
        stats->instructions[e] += core[e].executed;
    }
  return llvm::Error::success();
}

namespace {

/// The deadlock report: every stuck instruction and what it waits for.
std::string deadlockMessage(const Program &program,
                            const std::vector<Engines> &engines,
                            const std::vector<Semaphores> &semaphores) {
  std::string msg = "deadlock in program '" + program.name +
                    "': no engine can make progress;";
  for (unsigned c = 0; c < program.lnc(); ++c) {
    const Semaphores &sems = semaphores[c];
    for (unsigned e = 0; e < kNumEngines; ++e) {
      const EngineState &es = engines[c][e];
      const auto &stream = program.coreStreams(c)[e];
      if (es.pc >= stream.size())
        continue;
      const Instruction &inst = stream[es.pc];
      msg += "\n  " + describeInstruction(program, c, Engine(e), es.pc) +
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
  }
  for (unsigned c = 0; c < program.lnc(); ++c) {
    const Semaphores &sems = semaphores[c];
    msg += program.lnc() > 1 ? "\n  core " + std::to_string(c) + " semaphores:"
                             : std::string("\n  semaphores:");
    bool any = false;
    for (unsigned i = 0; i < kNumSemaphores; ++i)
      if (sems[i]) {
        msg += " s" + std::to_string(i) + "=" + std::to_string(sems[i]);
        any = true;
      }
    if (!any)
      msg += " all 0";
  }
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
  // Everything below runs without bounds checks: the verifier proves them
  // (including lnc() <= the target's maxLnc).
  if (llvm::Error e = verifyProgram(program))
    return e;
  const unsigned lnc = program.lnc();
  while (s.cores.size() < lnc)
    s.cores.push_back(std::make_unique<CoreMemory>(s.model));
  sim::ExecContext &ctx0 = s.cores[0]->ctx;
  if (llvm::Error e = bindRegions(program, inputs, outputs,
                                  s.scratch, ctx0))
    return e;
  // HBM is shared: every core sees core 0's region bindings.
  for (unsigned c = 1; c < lnc; ++c)
    s.cores[c]->ctx.regions = ctx0.regions;

  s.semaphores.assign(lnc, Semaphores{});
  s.engines.assign(lnc, Engines{});
  // signalNs[core][sem][v - 1]: when semaphore `sem` of `core` reached value
  // v. Signals are raised in time order, so each list is sorted.
  std::vector<std::array<std::vector<double>, kNumSemaphores>> signalNs(lnc);
  std::priority_queue<Completion, std::vector<Completion>,
                      std::greater<Completion>>
      pending;
  uint64_t seq = 0;
  bool collectives = llvm::any_of(
      program.streams[size_t(Engine::Dma)],
      [](const Instruction &i) { return i.opcode == Opcode::Collective; });
  sim::TimingModel timing(s.model, options.recordTrace,
                          options.timed ? profile : nullptr, collectives, lnc);
  ExecutionObserver *observer = options.observer;
  if (observer)
    observer->onStart(program);

  // When the waits of `inst` (on `core`) were all met, or -1 if some are
  // not yet.
  auto waitsMetAt = [&](unsigned core, const Instruction &inst) {
    const Semaphores &sems = s.semaphores[core];
    double at = 0;
    for (unsigned w = 0; w < inst.numWaits; ++w) {
      const SemaphoreWait &sw = inst.waits[w];
      if (sems[sw.semaphore] < sw.value)
        return -1.0;
      if (sw.value)
        at = std::max(at, signalNs[core][sw.semaphore][sw.value - 1]);
    }
    return at;
  };

  for (;;) {
    // The ready instruction with the earliest start; ties to the lowest
    // core, then the lowest engine number.
    int bestCore = -1, best = -1;
    double bestNs = std::numeric_limits<double>::infinity();
    bool left = false;
    for (unsigned c = 0; c < lnc; ++c)
      for (unsigned e = 0; e < kNumEngines; ++e) {
        const EngineState &es = s.engines[c][e];
        const auto &stream = program.coreStreams(c)[e];
        if (es.pc >= stream.size())
          continue;
        left = true;
        double met = waitsMetAt(c, stream[es.pc]);
        if (met < 0)
          continue;
        double start = std::max(es.freeNs, met);
        if (start < bestNs) {
          bestCore = int(c);
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
      uint32_t value = ++s.semaphores[c.semaphoreCore][c.semaphore];
      signalNs[c.semaphoreCore][c.semaphore].push_back(c.ns);
      if (observer)
        observer->onSignal(c.core, c.engine, c.index, c.semaphoreCore,
                           c.semaphore, value);
      continue;
    }
    if (dmaNs <= bestNs && dmaNs < std::numeric_limits<double>::infinity()) {
      timing.advanceDmaTo(dmaNs);
      for (const sim::DmaDone &d : timing.takeDmaCompletions())
        if (d.transfer.inst->signal != kNoSemaphore)
          pending.push({d.endNs, seq++, d.transfer.inst->signal,
                        d.transfer.core, d.transfer.core, Engine::Dma,
                        d.transfer.index});
      continue;
    }
    if (best < 0) {
      if (!left)
        break;
      llvm::Error err =
          fail(deadlockMessage(program, s.engines, s.semaphores));
      if (observer)
        err = llvm::joinErrors(std::move(err), observer->onFinish());
      return err;
    }

    const unsigned core = unsigned(bestCore);
    EngineState &es = s.engines[core][best];
    Engine engine = Engine(best);
    uint32_t index = uint32_t(es.pc);
    const Instruction &inst = program.coreStreams(core)[best][es.pc];
    sim::ExecContext &ctx = s.cores[core]->ctx;
    if (observer)
      observer->onExecute(core, engine, index, inst);
    s.scratch.beforeExecute(inst, ctx);
    if (inst.opcode == Opcode::Collective) {
      if (llvm::Error err =
              runCollective(program, options.collectives, ctx, inst, index)) {
        if (observer)
          err = llvm::joinErrors(std::move(err), observer->onFinish());
        return err;
      }
    } else {
      execute(ctx, inst);
    }
    // A barrier's signal raises the peer core's semaphore (the verifier
    // allows kFlagSignalPeer on Nops of LNC=2 programs only).
    const bool peer = inst.flags & kFlagSignalPeer;
    const uint8_t semaphoreCore = uint8_t(peer ? (core + 1) % lnc : core);
    double endNs = bestNs;
    if (options.timed) {
      if (peer) {
        endNs = timing.signalPeer(core, engine, index, inst, es.freeNs, bestNs)
                    .endNs;
        es.freeNs = bestNs;
      } else if (engine == Engine::Dma) {
        // The Dma stream only dispatches to the queue; the queue runs it
        // and signals when time reaches its end (above).
        std::optional<sim::Timed> now =
            timing.dma(core, index, inst, es.freeNs, bestNs);
        es.freeNs = bestNs;
        if (!now) {
          ++seq;
          ++es.pc;
          ++es.executed;
          continue;
        }
        endNs = now->endNs;
      } else {
        endNs = timing.compute(core, engine, index, inst, es.freeNs, bestNs)
                    .endNs;
        es.freeNs = endNs;
      }
    }
    if (inst.signal != kNoSemaphore)
      pending.push({endNs, seq, inst.signal, semaphoreCore, uint8_t(core),
                    engine, index});
    ++seq;
    ++es.pc;
    ++es.executed;
  }

  if (options.timed)
    timing.finish();
  if (profile) {
    if (!options.timed) {
      *profile = Profile();
      profile->target = s.model.name;
      profile->lnc = lnc;
      profile->peerEngines.resize(lnc - 1);
    }
    for (unsigned c = 0; c < lnc; ++c)
      for (unsigned e = 0; e < kNumEngines; ++e)
        (c ? profile->peerEngines[c - 1][e] : profile->engines[e])
            .instructions = s.engines[c][e].executed;
  }
  if (observer)
    return observer->onFinish();
  return llvm::Error::success();
}

} // namespace trnc
