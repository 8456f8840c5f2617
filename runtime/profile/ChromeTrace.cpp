//===- ChromeTrace.cpp - A simulated run as Chrome/Perfetto trace JSON -----===//
//
// See ChromeTrace.h. Format: the Trace Event Format ("traceEvents" array of
// "M" metadata and "X" complete events, ts/dur in microseconds), as read by
// chrome://tracing and Perfetto.
//
//===----------------------------------------------------------------------===//

#include "profile/ChromeTrace.h"
#include "profile/ProfileFormat.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
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

/// The args of one slice: operands, synchronisation, source, amounts.
json sliceArgs(const Program &program, const InstructionRecord &r) {
  json args = json::object();
  args["engine"] = std::string(isa::engineName(r.engine));
  args["index"] = r.index;
  const auto &stream = program.streams[size_t(r.engine) % isa::kNumEngines];
  if (r.index < stream.size()) {
    const isa::Instruction &inst = stream[r.index];
    for (auto [name, ap] : {std::pair{"dst", &inst.dst}, std::pair{"src0", &inst.src0},
                            std::pair{"src1", &inst.src1}})
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

} // namespace

std::string writeChromeTrace(const Program &program, const Profile &profile, int pid,
                             const std::string &processName) {
  json events = json::array();
  std::string process = processName.empty()
                            ? (program.name.empty() ? "trnc program" : program.name) + " on " +
                                  (profile.target.empty() ? program.target : profile.target) +
                                  " (simulated)"
                            : processName;
  events.push_back(metadata("process_name", pid, 0, process));

  // Records in start order per track; lanes keep every tid non-overlapping.
  std::vector<const InstructionRecord *> order;
  order.reserve(profile.trace.size());
  for (const InstructionRecord &r : profile.trace)
    order.push_back(&r);
  // Ties keep record order (the pointers are in record order).
  std::sort(order.begin(), order.end(), [](const auto *a, const auto *b) {
    return a->startNs != b->startNs ? a->startNs < b->startNs : a < b;
  });

  std::map<int, std::vector<double>> laneEnds; // base track -> end time per lane
  std::map<int, std::string> tracks;           // tid -> name, in tid order
  json slices = json::array();
  for (const InstructionRecord *r : order) {
    int base = baseTrack(*r);
    std::vector<double> &ends = laneEnds[base];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > r->startNs)
      ++lane;
    if (lane == ends.size())
      ends.push_back(r->endNs);
    ends[lane] = std::max(r->startNs, r->endNs);
    int tid = base + kLaneStride * int(lane);
    if (!tracks.count(tid))
      tracks[tid] = trackName(base) + (lane ? " (lane " + std::to_string(lane + 1) + ")" : "");

    json e = {{"ph", "X"}, {"name", std::string(isa::opcodeName(r->opcode))},
              {"cat", std::string(isa::engineName(r->engine))},
              {"pid", pid}, {"tid", tid},
              {"ts", r->startNs / 1e3}, {"dur", std::max(0.0, r->endNs - r->startNs) / 1e3}};
    e["args"] = sliceArgs(program, *r);
    slices.push_back(std::move(e));
  }

  // Every compute engine gets a track even when idle, so traces line up.
  for (int e = 0; e < int(isa::Engine::Dma); ++e)
    tracks.emplace(e, trackName(e));
  for (const auto &[tid, name] : tracks) {
    events.push_back(metadata("thread_name", pid, tid, name));
    events.push_back(sortIndex(pid, tid));
  }
  for (json &s : slices)
    events.push_back(std::move(s));

  json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  trace["otherData"] = {{"generator", "trnc simulator (simulated time, not a measurement)"},
                        {"program", program.name},
                        {"target", profile.target.empty() ? program.target : profile.target},
                        {"total_us", profile.totalNs / 1e3}};
  return trace.dump();
}

} // namespace trnc::profile
