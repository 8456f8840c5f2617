//===- Summary.cpp - A short human summary of a simulated run --------------===//
//
// See Summary.h. The text is meant to fit one screen: a table of engines,
// a few lines of totals, two short top-5 lists and the verdict with its rule.
//
//===----------------------------------------------------------------------===//

#include "profile/Summary.h"
#include "machine/MachineModel.h"
#include "profile/Occupancy.h"
#include "profile/ProfileFormat.h"

#include <algorithm>
#include <cstdio>
#include <array>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace trnc::profile {
namespace {

constexpr size_t kTopN = 5;

std::string pad(std::string s, size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s;
}

std::string lpad(std::string s, size_t width) {
  if (s.size() < width)
    s.insert(0, width - s.size(), ' ');
  return s;
}

/// Time by a key over the trace records, largest first, at most kTopN.
struct Bucket {
  std::string label;
  uint64_t count = 0;
  double ns = 0;
};

std::vector<Bucket> top(std::map<std::string, Bucket> byKey) {
  std::vector<Bucket> v;
  for (auto &[key, b] : byKey)
    v.push_back(std::move(b));
  std::sort(v.begin(), v.end(), [](const Bucket &a, const Bucket &b) {
    return a.ns != b.ns ? a.ns > b.ns : a.label < b.label;
  });
  if (v.size() > kTopN)
    v.resize(kTopN);
  return v;
}

void printTop(std::ostringstream &os, const char *title, const std::vector<Bucket> &v,
              double totalBusy) {
  os << "  " << title << "\n";
  for (const Bucket &b : v)
    os << "    " << lpad(formatNs(b.ns), 9) << "  " << lpad(formatPercent(totalBusy > 0 ? b.ns / totalBusy : 0), 6)
       << "  " << b.count << "x " << b.label << "\n";
}

/// Physical core `core`'s engines (LNC=2: the profile has one set per core).
const std::array<EngineProfile, isa::kNumEngines> &coreEngines(const Profile &p, unsigned core) {
  return core ? p.peerEngines[core - 1] : p.engines;
}

unsigned profileCores(const Profile &p) { return 1 + unsigned(p.peerEngines.size()); }

void printEngines(std::ostringstream &os, const Profile &p) {
  const unsigned cores = profileCores(p);
  os << (cores > 1 ? "  core engine      instrs        busy    util    sem wait\n"
                   : "  engine      instrs        busy    util    sem wait\n");
  for (unsigned c = 0; c < cores; ++c)
    for (unsigned e = 0; e < isa::kNumEngines; ++e) {
      const EngineProfile &ep = coreEngines(p, c)[e];
      os << "  " << (cores > 1 ? pad(std::to_string(c), 5) : std::string())
         << pad(std::string(isa::engineName(isa::Engine(e))), 8) << lpad(std::to_string(ep.instructions), 10)
         << lpad(formatNs(ep.busyNs), 12) << lpad(formatPercent(ep.utilisation), 8)
         << lpad(formatNs(ep.semaphoreWaitNs), 12) << "\n";
    }
}

/// "per core", or at LNC=2 "per logical core (2 physical cores)".
std::string perCore(const Profile &p) {
  return p.lnc > 1 ? "per logical core (" + std::to_string(p.lnc) + " physical cores)"
                   : std::string("per core");
}

/// "bf16 4.19 MFLOP at 78.6 TFLOP/s peak, f32 ..." for the dtypes matmuls ran at.
std::string matmulDTypesText(const Profile &p) {
  std::string s;
  for (unsigned d = 0; d < isa::kNumDTypes; ++d) {
    const MatmulDTypeProfile &m = p.matmulByDType[d];
    if (m.instructions)
      s += (s.empty() ? "" : ", ") + std::string(isa::dtypeName(isa::DType(d))) + " " +
           formatCount(m.tensorFlops, "FLOP") + " at " + formatCount(m.peakFlopsPerSecond, "FLOP/s") +
           " peak";
  }
  return s;
}

void printTensorEngine(std::ostringstream &os, const Profile &p) {
  os << "  Tensor Engine: " << formatCount(p.tensorFlops, "FLOP") << " ("
     << formatCount(p.usefulMatmulFlops, "FLOP") << " useful matmul); HFU " << formatPercent(p.hfu)
     << ", MFU " << formatPercent(p.mfu);
  std::string dtypes = matmulDTypesText(p);
  if (dtypes.empty())
    os << " (no matmuls; peak " << perCore(p) << " " << formatCount(p.peakFlopsPerSecond, "FLOP/s")
       << " bf16)\n";
  else
    os << " against the peak of each matmul dtype: " << dtypes << " " << perCore(p) << "\n";
}

std::string histogramText(const Profile &p) {
  std::string s;
  for (unsigned i = 0; i < p.dmaSizeHistogram.size(); ++i)
    if (uint64_t n = p.dmaSizeHistogram[i])
      s += (s.empty() ? "" : "  ") + bucketLabel(i) + "-" + bucketLabel(i + 1) + ":" + std::to_string(n);
  return s.empty() ? "(no DMA transfers)" : s;
}

std::string sourceLabel(const Program &program, uint32_t sourceIndex) {
  const SourceLoc *loc = sourceOf(program, sourceIndex);
  return loc ? sourceText(*loc) : "(no source: compiler-generated)";
}

/// Each DMA queue's transfers, as indices into the DMA stream (in order:
/// a queue's k-th completion is its k-th transfer).
using QueueTransfers = std::array<std::vector<uint32_t>, isa::kNumDmaQueues>;

QueueTransfers queueTransfers(const EngineStreams &streams) {
  QueueTransfers queues;
  const auto &dma = streams[size_t(isa::Engine::Dma)];
  for (uint32_t i = 0; i < dma.size(); ++i)
    queues[dma[i].dmaQueue % isa::kNumDmaQueues].push_back(i);
  return queues;
}

using RecordsByPlace = std::map<std::tuple<unsigned, unsigned, uint32_t>, const InstructionRecord *>;

/// The trace record of the instruction whose completion released `r`: of
/// the instructions its semaphore waits name (an engine's k-th instruction,
/// or a DMA queue's k-th transfer), the one that ended last; null when it
/// waited on nothing in the trace.
const InstructionRecord *releasedBy(const EngineStreams &streams, const QueueTransfers &queues,
                                    const InstructionRecord &r, const RecordsByPlace &records) {
  const auto &stream = streams[size_t(r.engine)];
  if (r.index >= stream.size())
    return nullptr;
  const InstructionRecord *latest = nullptr;
  for (const isa::SemaphoreWait &w : stream[r.index].waits) {
    if (w.semaphore == isa::kNoSemaphore || w.value == 0)
      continue;
    // Which agent signals it, and that agent's w.value-th instruction.
    std::optional<std::pair<isa::Engine, uint32_t>> producer;
    if (w.semaphore < unsigned(isa::Engine::Dma)) {
      producer = {isa::Engine(w.semaphore), w.value - 1};
    } else if (w.semaphore >= isa::kDmaQueueSemaphoreBase &&
               w.semaphore < isa::kDmaQueueSemaphoreBase + isa::kNumDmaQueues) {
      const std::vector<uint32_t> &queue = queues[w.semaphore - isa::kDmaQueueSemaphoreBase];
      if (w.value <= queue.size())
        producer = {isa::Engine::Dma, queue[w.value - 1]};
    }
    if (!producer)
      continue;
    auto it = records.find({r.core, unsigned(producer->first), producer->second});
    if (it != records.end() && (!latest || it->second->endNs > latest->endNs))
      latest = it->second;
  }
  return latest;
}

/// Where the Tensor Engine starves: each stretch it is idle is filed under
/// the source op of the matmul that ends it and the source op of the
/// instruction that released that matmul (its semaphore wait that was
/// satisfied last: the load or the computation it was waiting for), the
/// stretch after a core's last matmul under its own label. Shares are of
/// the total time (of every core's, at LNC=2). Nothing for a program
/// without matmuls.
void printTensorIdle(std::ostringstream &os, const Program &program, const Profile &p) {
  std::vector<std::vector<const InstructionRecord *>> byCore(profileCores(p));
  RecordsByPlace byPlace;
  for (const InstructionRecord &r : p.trace) {
    byPlace[{r.core, unsigned(r.engine), r.index}] = &r;
    if (r.engine == isa::Engine::Tensor && r.core < byCore.size())
      byCore[r.core].push_back(&r);
  }
  std::map<std::string, Bucket> idle;
  auto file = [&](const std::string &label, double ns) {
    Bucket &b = idle[label];
    b.label = label;
    ++b.count;
    b.ns += ns;
  };
  for (unsigned core = 0; core < byCore.size(); ++core) {
    std::vector<const InstructionRecord *> &records = byCore[core];
    if (records.empty())
      continue;
    const EngineStreams &streams = core ? program.peerStreams[core - 1] : program.streams;
    const QueueTransfers queues = queueTransfers(streams);
    std::sort(records.begin(), records.end(),
              [](const InstructionRecord *a, const InstructionRecord *b) {
                return a->startNs < b->startNs;
              });
    double freeAt = 0;
    for (const InstructionRecord *r : records) {
      if (r->startNs > freeAt) {
        std::string label = sourceLabel(program, r->sourceIndex);
        if (const InstructionRecord *by = releasedBy(streams, queues, *r, byPlace))
          label += ", waiting for " + std::string(isa::engineName(by->engine)) + " " +
                   std::string(isa::opcodeName(by->opcode)) + " of " +
                   (by->sourceIndex == r->sourceIndex ? std::string("the same op")
                                                      : sourceLabel(program, by->sourceIndex));
        file(label, r->startNs - freeAt);
      }
      freeAt = std::max(freeAt, r->endNs);
    }
    if (p.totalNs > freeAt)
      file("(after the last matmul)", p.totalNs - freeAt);
  }
  if (idle.empty())
    return;
  printTop(os, "Tensor Engine idle, by the matmul's source op and what it waited for (share of the total time):",
           top(idle), p.totalNs * double(byCore.size()));
}

void printBreakdown(std::ostringstream &os, const Program &program, const Profile &p) {
  if (p.trace.empty()) {
    os << "  (time by instruction and source op: run with trace recording on)\n";
    return;
  }
  std::map<std::string, Bucket> byKind, bySource;
  double busy = 0;
  for (const InstructionRecord &r : p.trace) {
    double ns = r.endNs - r.startNs;
    busy += ns;
    std::string kind = std::string(isa::engineName(r.engine)) + " " + std::string(isa::opcodeName(r.opcode));
    Bucket &k = byKind[kind];
    k.label = kind;
    ++k.count;
    k.ns += ns;
    const SourceLoc *loc = sourceOf(program, r.sourceIndex);
    std::string src = loc ? sourceText(*loc) : "(no source: compiler-generated)";
    Bucket &s = bySource[src];
    s.label = src;
    ++s.count;
    s.ns += ns;
  }
  printTop(os, "time by instruction kind (share of all busy time):", top(byKind), busy);
  printTop(os, "top source ops by instruction time:", top(bySource), busy);
  printTensorIdle(os, program, p);
}

/// The allocator's peak bytes per partition in SBUF and PSUM against each
/// partition's capacity (nothing for a program without an allocation table);
/// with trace records also the peak over simulated time, which can be higher:
/// engines run concurrently, so tiles the allocator saw one after the other
/// (at different addresses) can be live at the same time.
void printOnChipMemory(std::ostringstream &os, const Program &program, const Profile &p) {
  std::optional<MachineModel> model = lookupMachineModel(program.target);
  if (program.allocations.empty() || !model)
    return;
  os << "  on-chip memory (peak live, per partition):";
  const char *sep = " ";
  for (auto [space, capacity] :
       {std::pair{Allocation::Space::Sbuf, model->sbufPartitionBytes},
        std::pair{Allocation::Space::Psum, model->psumPartitionBytes}}) {
    uint64_t peak = peakAllocatedBytes(program, space);
    os << sep << spaceName(space) << " " << formatBytes(double(peak)) << " of "
       << formatBytes(double(capacity)) << " (" << formatPercent(double(peak) / double(capacity));
    if (!p.trace.empty())
      os << "; " << formatBytes(peakOfSteps(occupancySteps(program, p, space)))
         << " at once in simulated time";
    os << ")";
    sep = ", ";
  }
  os << "\n";
}

} // namespace

const char *verdictName(Verdict::Kind kind) {
  switch (kind) {
  case Verdict::Kind::ComputeBound: return "compute-bound";
  case Verdict::Kind::MemoryBound: return "memory-bound";
  case Verdict::Kind::LatencyBound: return "latency-bound";
  }
  return "?";
}

Verdict classify(const Profile &p) {
  Verdict v;
  for (unsigned c = 0; c < profileCores(p); ++c)
    for (unsigned e = 0; e < unsigned(isa::Engine::Dma); ++e)
      if (coreEngines(p, c)[e].utilisation > v.busiestUtilisation) {
        v.busiestUtilisation = coreEngines(p, c)[e].utilisation;
        v.busiestEngine = isa::Engine(e);
      }
  std::string busiest = std::string(isa::engineName(v.busiestEngine)) + " engine " +
                        formatPercent(v.busiestUtilisation) + " busy";
  std::string memory = "HBM traffic at " + formatPercent(p.mbu) + " of bandwidth";
  const std::string rule = " (rule, after the AWS performance guide: compute-bound when an engine is "
                           ">= 90% busy; memory-bound when >= 60% of memory bandwidth is used; "
                           "otherwise latency-bound)";
  if (v.busiestUtilisation >= kComputeBoundUtilisation) {
    v.kind = Verdict::Kind::ComputeBound;
    v.reason = "compute-bound: " + busiest + ", " + memory +
               (p.mbu >= kMemoryBoundBandwidth ? " (memory is near its limit too)" : "") + rule;
  } else if (p.mbu >= kMemoryBoundBandwidth) {
    v.kind = Verdict::Kind::MemoryBound;
    v.reason = "memory-bound: " + memory + ", busiest " + busiest + rule;
  } else if (double dma = coreEngines(p, 0)[size_t(isa::Engine::Dma)].utilisation;
             dma >= kComputeBoundUtilisation) {
    // The queues are what the engines wait on, yet bandwidth is not the limit:
    // per-transfer fixed costs (many small transfers) are.
    v.kind = Verdict::Kind::LatencyBound;
    v.reason = "latency-bound, waiting on DMA: DMA transfers in flight " + formatPercent(dma) +
               " of the time while " + memory + " (< 60%) and no compute engine is >= 90% busy "
               "(busiest: " + busiest + "), so the fixed cost of each transfer dominates (see DMA sizes)" +
               rule;
  } else {
    v.kind = Verdict::Kind::LatencyBound;
    v.reason = "latency-bound: no engine >= 90% busy (busiest: " + busiest + ") and " + memory +
               " (< 60%), so fixed costs, semaphore waits and dependency chains dominate" + rule;
  }
  return v;
}

std::string summarize(const Program &program, const Profile &p) {
  std::ostringstream os;
  std::string target = p.target.empty() ? program.target : p.target;
  os << "trnc profile of '" << (program.name.empty() ? "program" : program.name) << "' on " << target
     << " (simulated estimate from public hardware facts, not a measurement)\n";
  os << "  total simulated time: " << formatNs(p.totalNs) << "\n";
  printEngines(os, p);
  printTensorEngine(os, p);
  os << "  memory: " << formatBytes(double(p.dmaBytes)) << " moved by DMA, " << formatBytes(double(p.hbmBytes))
     << " to/from HBM; MBU " << formatPercent(p.mbu) << " of "
     << formatCount(p.peakHbmBytesPerSecond, "B/s") << " " << perCore(p) << "\n";
  printOnChipMemory(os, program, p);
  os << "  semaphore wait: " << formatNs(p.semaphoreWaitNs) << " summed over engines\n";
  if (p.collectives)
    os << "  collectives: " << p.collectives << " ("
       << formatBytes(double(p.collectiveBytes)) << "), " << formatNs(p.collectiveNs)
       << " on the collective queue, " << formatNs(p.exposedCollectiveNs())
       << " of it exposed (not hidden behind other work)\n";
  os << "  DMA sizes: " << histogramText(p) << "\n";
  printBreakdown(os, program, p);
  Verdict v = classify(p);
  os << "  busiest engine: " << isa::engineName(v.busiestEngine) << " ("
     << formatPercent(v.busiestUtilisation) << " busy)\n";
  os << "  verdict: " << v.reason << "\n";
  return os.str();
}

} // namespace trnc::profile
