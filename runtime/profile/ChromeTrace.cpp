//===- ChromeTrace.cpp - A simulated run as Chrome/Perfetto trace JSON -----===//
//
// See ChromeTrace.h. Format: the Trace Event Format ("traceEvents" array of
// "M" metadata, "X" complete, "s"/"f" flow and "C" counter events, ts/dur in
// microseconds), as read by chrome://tracing and Perfetto. At LNC=2 each
// physical core is its own process row (pid, pid + 1), its engines, queues
// and SBUF/PSUM counters under it; HBM counters stay on the first row.
//
//===----------------------------------------------------------------------===//

#include "profile/ChromeTrace.h"
#include "machine/MachineModel.h"
#include "profile/Occupancy.h"
#include "profile/ProfileFormat.h"
#include "sim/CostModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace trnc::profile {
namespace {

using json = nlohmann::ordered_json;

int baseTrack(const InstructionRecord &r) {
  return r.engine == isa::Engine::Dma ? kDmaTrackBase + int(r.dmaQueue) : int(r.engine);
}

std::string trackName(int base) {
  if (base >= kDmaTrackBase)
    return "dma queue " + std::to_string(base - kDmaTrackBase);
  return std::string(isa::engineName(isa::Engine(base))) + " engine";
}

json metadata(const char *what, int pid, int tid, const std::string &name) {
  json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}};
  e["args"] = {{"name", name}};
  return e;
}

json sortIndex(int pid, int tid) {
  json e = {{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", tid}};
  e["args"] = {{"sort_index", tid}};
  return e;
}

/// The instruction a record executed, or nullptr if the program has none there.
const isa::Instruction *instructionOf(const Program &program, const InstructionRecord &r) {
  if (r.core >= program.lnc())
    return nullptr;
  const auto &stream = program.coreStreams(r.core)[size_t(r.engine) % isa::kNumEngines];
  return r.index < stream.size() ? &stream[r.index] : nullptr;
}

/// The semaphore a signal raises, as core x kNumSemaphores + id (a
/// barrier's Nop raises the peer core's).
unsigned raisedSemaphore(const Program &program, const InstructionRecord &r,
                         const isa::Instruction &inst) {
  unsigned core = inst.flags & isa::kFlagSignalPeer ? (r.core + 1) % program.lnc() : r.core;
  return core * isa::kNumSemaphores + inst.signal;
}

/// The args of one slice: operands, synchronisation, source, amounts.
json sliceArgs(const Program &program, const InstructionRecord &r) {
  json args = json::object();
  args["engine"] = std::string(isa::engineName(r.engine));
  if (program.lnc() > 1)
    args["core"] = r.core;
  args["index"] = r.index;
  if (const isa::Instruction *found = instructionOf(program, r)) {
    const isa::Instruction &inst = *found;
    for (auto [name, ap] : {std::pair{"dst", &inst.dst}, std::pair{"src0", &inst.src0},
                            std::pair{"src1", &inst.src1}, std::pair{"src2", &inst.src2}})
      if (ap->present())
        args[name] = operandText(*ap);
    if (inst.opcode == isa::Opcode::Matmul && (inst.flags & isa::kFlagTranspose))
      args["transpose"] = true; // layout work: its FLOPs are not model FLOPs
    if (std::string w = waitsText(inst); !w.empty())
      args["waits"] = w;
    if (std::string s = signalText(inst); !s.empty())
      args["signal"] = s;
  }
  if (r.startNs > r.issueNs)
    args["waited_us"] = (r.startNs - r.issueNs) / 1e3;
  if (r.bytes)
    args["bytes"] = r.bytes;
  if (r.flops > 0)
    args["flops"] = r.flops;
  if (const SourceLoc *loc = sourceOf(program, r.sourceIndex)) {
    args["source_op"] = loc->op;
    args["source_node"] = loc->node;
    if (!loc->file.empty())
      args["source_loc"] = loc->file + ":" + std::to_string(loc->line);
  }
  return args;
}

using TrackOf = std::unordered_map<const InstructionRecord *, int>;

/// One flow (an arrow from the signalling slice to the waiting one) per met
/// semaphore wait. The simulator raises a semaphore's signals in completion
/// order (ties in execution order) from zero, so the wait `s >= v` was met
/// by the v-th signal of s.
void addSemaphoreFlows(json &events, const Program &program, const Profile &profile, int pid,
                       const TrackOf &track) {
  std::vector<const InstructionRecord *> signals;
  for (const InstructionRecord &r : profile.trace)
    if (const isa::Instruction *inst = instructionOf(program, r); inst && inst->signal != isa::kNoSemaphore)
      signals.push_back(&r);
  std::stable_sort(signals.begin(), signals.end(),
                   [](const auto *a, const auto *b) { return a->endNs < b->endNs; });
  std::map<unsigned, std::vector<const InstructionRecord *>> bySemaphore;
  for (const InstructionRecord *r : signals)
    bySemaphore[raisedSemaphore(program, *r, *instructionOf(program, *r))].push_back(r);

  uint64_t id = 0;
  for (const InstructionRecord &r : profile.trace) {
    const isa::Instruction *inst = instructionOf(program, r);
    for (unsigned w = 0; inst && w < inst->numWaits && w < isa::kMaxWaits; ++w) {
      const isa::SemaphoreWait &sw = inst->waits[w];
      auto it = bySemaphore.find(r.core * isa::kNumSemaphores + sw.semaphore);
      if (sw.semaphore == isa::kNoSemaphore || sw.value == 0 || it == bySemaphore.end() ||
          sw.value > it->second.size())
        continue;
      const InstructionRecord *from = it->second[sw.value - 1];
      std::string name = "s" + std::to_string(sw.semaphore) + ">=" + std::to_string(sw.value);
      events.push_back({{"ph", "s"}, {"id", id}, {"name", name}, {"cat", "semaphore"},
                        {"pid", pid + from->core}, {"tid", track.at(from)},
                        {"ts", from->startNs / 1e3}});
      events.push_back({{"ph", "f"}, {"bp", "e"}, {"id", id}, {"name", name}, {"cat", "semaphore"},
                        {"pid", pid + r.core}, {"tid", track.at(&r)}, {"ts", r.startNs / 1e3}});
      ++id;
    }
  }
}

/// A counter track from (time ns, change) steps: the running sum after each
/// distinct time, as "C" events with one arg `unit`.
void addCounter(json &events, int pid, const std::string &name, const char *unit,
                std::vector<std::pair<double, double>> steps) {
  if (steps.empty())
    return;
  std::sort(steps.begin(), steps.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  double value = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    value += steps[i].second;
    if (i + 1 < steps.size() && steps[i + 1].first == steps[i].first)
      continue;
    json e = {{"ph", "C"}, {"name", name}, {"pid", pid}, {"ts", steps[i].first / 1e3}};
    e["args"] = {{unit, std::max(0.0, value)}};
    events.push_back(std::move(e));
  }
}

/// HBM bandwidth (each DMA's HBM bytes spread evenly over its duration) and
/// the number of DMA transfers in flight, over simulated time.
void addDmaCounters(json &events, const Program &program, const Profile &profile, int pid) {
  std::vector<std::pair<double, double>> bandwidth, inFlight;
  for (const InstructionRecord &r : profile.trace) {
    if (r.engine != isa::Engine::Dma || r.endNs <= r.startNs)
      continue;
    inFlight.push_back({r.startNs, 1});
    inFlight.push_back({r.endNs, -1});
    const isa::Instruction *inst = instructionOf(program, r);
    if (uint64_t bytes = inst ? sim::dmaHbmBytes(*inst) : 0) {
      double gbps = double(bytes) / (r.endNs - r.startNs); // bytes per ns = GB/s
      bandwidth.push_back({r.startNs, gbps});
      bandwidth.push_back({r.endNs, -gbps});
    }
  }
  addCounter(events, pid, "HBM bandwidth (GB/s)", "GB/s", std::move(bandwidth));
  addCounter(events, pid, "DMA transfers in flight", "transfers", std::move(inFlight));
}

/// Bytes per partition live in SBUF and in PSUM over simulated time, from
/// the program's allocation table; the name carries the capacity.
void addOccupancyCounters(json &events, const Program &program, const Profile &profile,
                          int pid) {
  std::optional<MachineModel> model = lookupMachineModel(program.target);
  for (Allocation::Space space : {Allocation::Space::Sbuf, Allocation::Space::Psum}) {
    uint64_t capacity = !model ? 0
                        : space == Allocation::Space::Psum ? model->psumPartitionBytes
                                                           : model->sbufPartitionBytes;
    std::string name = std::string(spaceName(space)) + " live (bytes per partition";
    name += capacity ? ", of " + std::to_string(capacity) + ")" : ")";
    for (unsigned core = 0; core < program.lnc(); ++core)
      addCounter(events, pid + int(core), name, "bytes",
                 occupancySteps(program, profile, space, core));
  }
}

} // namespace

std::string writeChromeTrace(const Program &program, const Profile &profile, int pid,
                             const std::string &processName) {
  json events = json::array();
  std::string process = processName.empty()
                            ? (program.name.empty() ? "trnc program" : program.name) + " on " +
                                  (profile.target.empty() ? program.target : profile.target) +
                                  " (simulated)"
                            : processName;
  const int cores = int(program.lnc());
  for (int c = 0; c < cores; ++c)
    events.push_back(metadata("process_name", pid + c, 0,
                              cores > 1 ? process + " core " + std::to_string(c) : process));

  // Records in start order per track; lanes keep every tid non-overlapping.
  std::vector<const InstructionRecord *> order;
  order.reserve(profile.trace.size());
  for (const InstructionRecord &r : profile.trace)
    order.push_back(&r);
  // Ties keep record order (the pointers are in record order).
  std::sort(order.begin(), order.end(), [](const auto *a, const auto *b) {
    return a->startNs != b->startNs ? a->startNs < b->startNs : a < b;
  });

  // Per core: base track -> end time per lane; tid -> name, in tid order.
  std::vector<std::map<int, std::vector<double>>> laneEndsOf(cores);
  std::vector<std::map<int, std::string>> tracksOf(cores);
  TrackOf trackOf;
  json slices = json::array();
  for (const InstructionRecord *r : order) {
    int base = baseTrack(*r);
    int core = std::min(int(r->core), cores - 1);
    std::map<int, std::string> &tracks = tracksOf[core];
    std::vector<double> &ends = laneEndsOf[core][base];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > r->startNs)
      ++lane;
    if (lane == ends.size())
      ends.push_back(r->endNs);
    ends[lane] = std::max(r->startNs, r->endNs);
    int tid = base + kLaneStride * int(lane);
    trackOf[r] = tid;
    if (!tracks.count(tid))
      tracks[tid] = trackName(base) + (lane ? " (lane " + std::to_string(lane + 1) + ")" : "");

    json e = {{"ph", "X"}, {"name", std::string(isa::opcodeName(r->opcode))},
              {"cat", std::string(isa::engineName(r->engine))},
              {"pid", pid + core}, {"tid", tid},
              {"ts", r->startNs / 1e3}, {"dur", std::max(0.0, r->endNs - r->startNs) / 1e3}};
    e["args"] = sliceArgs(program, *r);
    slices.push_back(std::move(e));
  }

  // Every compute engine gets a track even when idle, so traces line up.
  for (int c = 0; c < cores; ++c) {
    for (int e = 0; e < int(isa::Engine::Dma); ++e)
      tracksOf[c].emplace(e, trackName(e));
    for (const auto &[tid, name] : tracksOf[c]) {
      events.push_back(metadata("thread_name", pid + c, tid, name));
      events.push_back(sortIndex(pid + c, tid));
    }
  }
  for (json &s : slices)
    events.push_back(std::move(s));
  addSemaphoreFlows(events, program, profile, pid, trackOf);
  addDmaCounters(events, program, profile, pid);
  addOccupancyCounters(events, program, profile, pid);

  json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  trace["otherData"] = {{"generator", "trnc simulator (simulated time, not a measurement)"},
                        {"program", program.name},
                        {"target", profile.target.empty() ? program.target : profile.target},
                        {"total_us", profile.totalNs / 1e3}};
  return trace.dump();
}

} // namespace trnc::profile
