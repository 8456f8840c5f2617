//===- RaceChecker.cpp - Vector clocks and footprint maps -----------------===//
//
// Agents: the ordered agents of isa/Isa.h, i.e. each compute engine and
// each DMA queue; an agent completes its instructions in order, and its
// instructions are numbered by their position in it (a compute engine's
// stream index; a DMA's position among the transfers of its queue). The DMA
// stream only issues in order: a DMA inherits every wait of the DMAs issued
// before it (kept in `dmaIssue`), but not their completion.
//
// At LNC=2 every agent, signaller and semaphore is per physical core (agent
// id = core x kNumOrderedAgents + agent); a barrier's Nop signals the peer
// core's semaphore, which is how one core's clock joins the other's. SBUF
// and PSUM are per core; HBM regions are shared by both.
//
// Clocks: clock[a][f] is the number of instructions of agent f known to
// have completed before agent a's current instruction. Each signal stores
// the signaller's clock (as of that instruction) per semaphore and
// signaller; signallers complete in order, so a wait for s >= v proves that
// signaller a signalled s at least v - (signals of s by all others in the
// whole program) times and joins the clock of that signal. With one
// signaller per semaphore (trnc's scheme) this is exactly "the v-th
// signal"; several signallers (e.g. every DMA queue signalling one
// semaphore) prove less, which is the point. Instruction (f, i) happens
// before the current instruction of a iff clock[a][f] > i.
//
// Footprints live in one segment map per memory space (SBUF, PSUM, each
// HBM region): disjoint byte segments, each holding the access records
// (engine, index, partition range, read/write) that may still race. An
// access splits the segments at its ends, checks the records of the
// segments it covers, then updates them FastTrack-style:
//   - a write drops every record whose partitions it covers (each is either
//     ordered before it or was just reported), since a later access that
//     conflicts with the dropped one conflicts with the write too;
//   - a read drops covered reads of its own engine or ordered before it;
//   - an idempotent scatter's write (Isa.h kFlagIdempotent) does not race
//     with another one and keeps those it is not ordered after, so what
//     follows both is checked against both.
// Periodically, records that every still-running engine has in its past are
// pruned. Cost per access: O(log S + segments covered x records per
// segment), both small because of superseding and pruning.
//
//===----------------------------------------------------------------------===//

#include "sim/RaceChecker.h"

#include "isa/StridedRuns.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trnc {

using namespace isa;

namespace {

/// Ordered agents of every physical core: core x kNumOrderedAgents + agent.
constexpr unsigned kNumAgents = kMaxLnc * kNumOrderedAgents;
using Clock = std::array<uint32_t, kNumAgents>;
/// Signallers of one core: its ordered agents, plus its DMA stream's own
/// Nops (which complete when issued, in issue order). Globally core x
/// kSignallersPerCore + signaller.
constexpr unsigned kDmaIssuer = kNumOrderedAgents;
constexpr unsigned kSignallersPerCore = kNumOrderedAgents + 1;
constexpr unsigned kNumSignallers = kMaxLnc * kSignallersPerCore;
/// Semaphores of every core: core x kNumSemaphores + semaphore.
constexpr unsigned kAllSemaphores = kMaxLnc * kNumSemaphores;
constexpr uint32_t kNoPosition = std::numeric_limits<uint32_t>::max();

void join(Clock &into, const Clock &other) {
  for (unsigned f = 0; f < kNumAgents; ++f)
    into[f] = std::max(into[f], other[f]);
}

/// Memory spaces: 2 x core = its SBUF, 2 x core + 1 = its PSUM, then
/// kFirstHbmSpace + r = HBM region r (shared by the cores), then the
/// scratch arena every scratch region lies in (Impl::scratchSpace()).
constexpr unsigned kSbufSpace = 0, kPsumSpace = 1,
                   kFirstHbmSpace = 2 * kMaxLnc;

struct Footprint {
  unsigned space;
  uint32_t pBegin, pEnd; // partitions (HBM: always 0..1)
  uint64_t begin, end;   // bytes within each partition (HBM: the region)
  bool write;
  /// The rows an idempotent scatter writes (Isa.h kFlagIdempotent): two
  /// such writes store equal bytes, so they do not race with each other.
  bool idempotent = false;
};

/// The bytes an on-chip access pattern can touch: its extent within each
/// partition, the same conservative footprint the compiler's semaphore
/// scheduler uses. The program is verified, so every sum below stays far
/// inside 64 bits.
Footprint footprintOf(const AccessPattern &ap, bool write, unsigned core) {
  int64_t lo = 0, hi = 0;
  for (unsigned i = 0; i < ap.numDims; ++i) {
    int64_t reach = ap.stride[i] * int64_t(ap.count[i] - 1);
    (reach < 0 ? lo : hi) += reach;
  }
  Footprint fp;
  fp.write = write;
  fp.space = 2 * core + (ap.mem == MemKind::SBUF ? kSbufSpace : kPsumSpace);
  fp.pBegin = ap.partitionStart;
  fp.pEnd = uint32_t(ap.partitionStart) + ap.partitionCount;
  int64_t eb = dtypeBytes(ap.dtype);
  fp.begin = uint64_t(int64_t(ap.offset) + lo * eb);
  fp.end = uint64_t(int64_t(ap.offset) + (hi + 1) * eb);
  return fp;
}

/// The byte runs of an HBM access pattern (rows x runs, not one range: two
/// cores storing the two column halves of the same rows do not conflict).
void hbmRuns(const AccessPattern &ap, std::vector<Run> &runs) {
  int64_t strides[kMaxFreeDims + 1], counts[kMaxFreeDims + 1];
  strides[0] = ap.partitionStride;
  counts[0] = ap.partitionCount;
  for (unsigned i = 0; i < ap.numDims; ++i) {
    strides[i + 1] = ap.stride[i];
    counts[i + 1] = ap.count[i];
  }
  stridedRuns(0, strides, counts, ap.numDims + 1, kMaxHbmRuns, runs);
  int64_t eb = dtypeBytes(ap.dtype);
  for (Run &r : runs)
    r = {int64_t(ap.offset) + r.first * eb, int64_t(ap.offset) + r.second * eb};
}

std::string spaceName(unsigned space, bool manyCores, size_t numRegions) {
  if (space == kFirstHbmSpace + numRegions)
    return "the HBM scratch arena";
  if (space >= kFirstHbmSpace)
    return "HBM region " + std::to_string(space - kFirstHbmSpace);
  std::string core = manyCores ? "core " + std::to_string(space / 2) + " " : "";
  return core + (space % 2 == kSbufSpace ? "SBUF" : "PSUM");
}

/// One access that may still race with a later one: `index` is the
/// position within `agent`.
struct Record {
  uint32_t index;
  uint32_t pBegin, pEnd;
  uint8_t agent;
  bool write;
  bool idempotent;
};

struct Segment {
  uint64_t end;
  llvm::SmallVector<Record, 4> records;
};
using SegmentMap = std::map<uint64_t, Segment>; // keyed by segment begin

struct Race {
  unsigned firstCore, secondCore;
  Engine firstEngine, secondEngine;
  uint32_t firstIndex, secondIndex;
  bool firstWrites, secondWrites;
  unsigned space;
  uint32_t pBegin, pEnd;
  uint64_t begin, end;
};

uint64_t instructionKey(unsigned core, unsigned engine, uint32_t index) {
  return (uint64_t(core) << 40) | (uint64_t(engine) << 32) | index;
}

/// An instruction by its core, engine and stream position.
struct Where {
  unsigned core;
  Engine engine;
  uint32_t index;
};

/// Distinct pairs remembered for de-duplication; past it, repeats count again.
constexpr size_t kMaxRememberedPairs = 1 << 20;

} // namespace

struct RaceChecker::Impl {
  RaceCheckerOptions options;
  const Program *program = nullptr;
  unsigned scratchSpace() const {
    return kFirstHbmSpace + unsigned(program->regions.size());
  }
  std::array<Clock, kNumAgents> clocks{};
  // Per core: what every later DMA of its stream knows (the waits before it).
  std::array<Clock, kMaxLnc> dmaIssue{};
  std::array<size_t, kNumAgents> remaining{}; // instructions not yet run
  // Per core and DMA stream index: its position in its queue (kNoPosition
  // for a Nop), and its clock while it runs (until its signal; keyed by
  // core << 32 | index).
  std::array<std::vector<uint32_t>, kMaxLnc> dmaPosition;
  llvm::DenseMap<uint64_t, Clock> dmaRunning;
  std::array<std::array<std::vector<uint32_t>, kNumDmaQueues>, kMaxLnc>
      queueToStream;
  // signalled[s][a][k]: clock of signaller a's (k+1)-th signal of s;
  // signals[s][a]: how many the whole program has, and their total
  // (global semaphore and signaller ids).
  std::array<std::array<std::vector<Clock>, kNumSignallers>, kAllSemaphores>
      signalled;
  std::array<std::array<uint32_t, kNumSignallers>, kAllSemaphores> signals{};
  std::array<uint64_t, kAllSemaphores> totalSignals{};
  std::vector<SegmentMap> spaces;
  std::vector<Run> runs; // scratch for an HBM access's byte runs
  size_t live = 0, pruneAt = 0, peakLive = 0;

  llvm::DenseMap<std::pair<uint64_t, uint64_t>, unsigned> pairs; // -> races[i]
  std::vector<Race> races; // the first options.maxReported
  size_t numRaces = 0;

  // Scratch is undefined until written (a packed region's bytes held
  // another region's data before): per scratch region, the byte ranges
  // this run has written ([begin, end) by begin, merged), and the reads of
  // bytes outside them.
  std::vector<std::map<uint64_t, uint64_t>> written;
  struct UnwrittenRead {
    Where at;
    uint32_t region;
    uint64_t begin, end;
  };
  std::vector<UnwrittenRead> unwrittenReads; // the first options.maxReported
  size_t numUnwrittenReads = 0;
  void markWritten(uint32_t region, uint64_t begin, uint64_t end);
  /// The first bytes of [begin, end) of `region` this run has not written.
  std::optional<std::pair<uint64_t, uint64_t>>
  unwritten(uint32_t region, uint64_t begin, uint64_t end) const;
  /// Scratch operand `ap` of an instruction with exact HBM patterns, whose
  /// byte runs are in `runs`: a write marks them written, a read reports
  /// its first unwritten bytes.
  void trackScratch(const AccessPattern &ap, bool write, unsigned agent,
                    uint32_t index);

  void reset(const Program &p);
  void access(const Footprint &fp, unsigned agent, uint32_t index,
              const Clock &clock);
  void wait(unsigned core, const SemaphoreWait &w, Clock &clock) const;
  Where instructionOf(unsigned agent, uint32_t index) const;
  void splitAt(SegmentMap &map, uint64_t at);
  void report(const Record &r, unsigned agent, uint32_t index,
              const Footprint &fp, uint64_t segBegin, uint64_t segEnd);
  void prune();
  std::string describe(const Race &race) const;
  void accessAll(unsigned core, const Instruction &inst, unsigned agent,
                 uint32_t index, const Clock &clock) {
    // dma_indirect: its HBM pattern spans the table's N rows, so the
    // footprint is every row the index tile could name (conservative).
    const std::pair<const AccessPattern *, bool> operands[] = {
        {&inst.src0, false}, {&inst.src1, false}, {&inst.src2, false},
        {&inst.dst, true}};
    for (auto [ap, write] : operands) {
      if (!ap->present())
        continue;
      if (ap->mem != MemKind::HBM) {
        access(footprintOf(*ap, write, core), agent, index, clock);
        continue;
      }
      // Scratch regions share the packed arena: one space, arena bytes.
      const Region &region = program->regions[ap->region];
      bool scratch = region.kind == Region::Kind::Scratch;
      unsigned space = scratch ? scratchSpace() : kFirstHbmSpace + ap->region;
      uint64_t base = scratch ? region.arenaOffset : 0;
      hbmRuns(*ap, runs);
      bool idempotent = write && (inst.flags & kFlagIdempotent) &&
                        inst.opcode == Opcode::DmaIndirect;
      for (const Run &r : runs)
        access({space, 0, 1, base + uint64_t(r.first),
                base + uint64_t(r.second), write, idempotent},
               agent, index, clock);
      // dma_indirect's runs are every row it could name: not tracked.
      if (scratch && (inst.opcode == Opcode::DmaCopy ||
                      inst.opcode == Opcode::Collective))
        trackScratch(*ap, write, agent, index);
    }
  }
};

void RaceChecker::Impl::markWritten(uint32_t region, uint64_t begin,
                                    uint64_t end) {
  std::map<uint64_t, uint64_t> &ranges = written[region];
  auto it = ranges.upper_bound(begin);
  if (it != ranges.begin() && std::prev(it)->second >= begin)
    --it;
  while (it != ranges.end() && it->first <= end) { // merge what touches
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = ranges.erase(it);
  }
  ranges[begin] = end;
}

std::optional<std::pair<uint64_t, uint64_t>>
RaceChecker::Impl::unwritten(uint32_t region, uint64_t begin,
                             uint64_t end) const {
  const std::map<uint64_t, uint64_t> &ranges = written[region];
  auto it = ranges.upper_bound(begin);
  if (it != ranges.begin() && std::prev(it)->second > begin)
    begin = std::prev(it)->second; // covered up to there
  if (begin >= end)
    return std::nullopt;
  uint64_t stop = it != ranges.end() ? std::min(end, it->first) : end;
  return std::make_pair(begin, stop);
}

void RaceChecker::Impl::trackScratch(const AccessPattern &ap, bool write,
                                     unsigned agent, uint32_t index) {
  for (const Run &r : runs) {
    if (write) {
      markWritten(ap.region, uint64_t(r.first), uint64_t(r.second));
      continue;
    }
    auto gap = unwritten(ap.region, uint64_t(r.first), uint64_t(r.second));
    if (!gap)
      continue;
    if (unwrittenReads.size() < options.maxReported)
      unwrittenReads.push_back(
          {instructionOf(agent, index), ap.region, gap->first, gap->second});
    ++numUnwrittenReads;
    return; // one report per operand
  }
}

void RaceChecker::Impl::reset(const Program &p) {
  program = &p;
  written.assign(p.regions.size(), {});
  unwrittenReads.clear();
  numUnwrittenReads = 0;
  for (Clock &c : clocks)
    c.fill(0);
  for (Clock &c : dmaIssue)
    c.fill(0);
  remaining.fill(0);
  for (auto &perSem : signalled)
    for (auto &list : perSem)
      list.clear();
  for (auto &perSem : signals)
    perSem.fill(0);
  totalSignals.fill(0);
  dmaRunning.clear();
  for (unsigned c = 0; c < kMaxLnc; ++c) {
    dmaPosition[c].clear();
    for (auto &q : queueToStream[c])
      q.clear();
  }
  const unsigned lnc = std::min(p.lnc(), kMaxLnc);
  for (unsigned c = 0; c < lnc; ++c)
    for (unsigned e = 0; e < kNumEngines; ++e) {
      const auto &stream = p.coreStreams(c)[e];
      for (size_t i = 0; i < stream.size(); ++i) {
        const Instruction &inst = stream[i];
        unsigned signaller = orderedAgent(Engine(e), inst.dmaQueue);
        if (Engine(e) == Engine::Dma) {
          if (isDmaTransfer(inst.opcode)) {
            auto &q = queueToStream[c][inst.dmaQueue % kNumDmaQueues];
            dmaPosition[c].push_back(uint32_t(q.size()));
            q.push_back(uint32_t(i));
          } else {
            dmaPosition[c].push_back(kNoPosition);
            signaller = kDmaIssuer;
          }
        }
        if (signaller < kNumOrderedAgents)
          ++remaining[c * kNumOrderedAgents + signaller];
        if (inst.signal < kNumSemaphores) {
          // A barrier's Nop raises the peer core's semaphore.
          unsigned target = inst.flags & kFlagSignalPeer ? (c + 1) % lnc : c;
          unsigned sem = target * kNumSemaphores + inst.signal;
          ++signals[sem][c * kSignallersPerCore + signaller];
          ++totalSignals[sem];
        }
      }
    }
  spaces.assign(kFirstHbmSpace + p.regions.size() + 1, SegmentMap());
  live = peakLive = 0;
  pruneAt = 4096;
  pairs.clear();
  races.clear();
  numRaces = 0;
}

void RaceChecker::Impl::splitAt(SegmentMap &map, uint64_t at) {
  auto it = map.upper_bound(at);
  if (it == map.begin())
    return;
  --it;
  if (it->first >= at || it->second.end <= at)
    return;
  Segment tail = it->second;
  it->second.end = at;
  live += tail.records.size();
  map.emplace_hint(std::next(it), at, std::move(tail));
}

void RaceChecker::Impl::access(const Footprint &fp, unsigned agent,
                               uint32_t index, const Clock &clock) {
  if (fp.begin >= fp.end)
    return;
  SegmentMap &map = spaces[fp.space];
  splitAt(map, fp.begin);
  splitAt(map, fp.end);
  auto covers = [&](const Record &r) {
    return fp.pBegin <= r.pBegin && r.pEnd <= fp.pEnd;
  };
  uint64_t cursor = fp.begin;
  auto it = map.lower_bound(fp.begin);
  while (cursor < fp.end) {
    if (it == map.end() || it->first > cursor) {
      uint64_t gapEnd = it == map.end() ? fp.end : std::min(it->first, fp.end);
      it = map.emplace_hint(it, cursor, Segment{gapEnd, {}});
    }
    Segment &seg = it->second;
    for (const Record &r : seg.records) {
      if (r.pBegin >= fp.pEnd || fp.pBegin >= r.pEnd || r.agent == agent ||
          !(r.write || fp.write) || (r.idempotent && fp.idempotent) ||
          clock[r.agent] > r.index)
        continue;
      report(r, agent, index, fp, it->first, seg.end);
    }
    size_t before = seg.records.size();
    llvm::erase_if(seg.records, [&](const Record &r) {
      if (!covers(r))
        return false;
      bool before = r.agent == agent || clock[r.agent] > r.index;
      // An idempotent write may be unordered with an earlier one: that one
      // stays, for the accesses after both to be checked against.
      if (fp.write)
        return !(fp.idempotent && r.idempotent) || before;
      return !r.write && before;
    });
    live -= before - seg.records.size();
    seg.records.push_back(
        {index, fp.pBegin, fp.pEnd, uint8_t(agent), fp.write, fp.idempotent});
    ++live;
    cursor = seg.end;
    ++it;
  }
  peakLive = std::max(peakLive, live);
  if (live >= pruneAt)
    prune();
}

Where RaceChecker::Impl::instructionOf(unsigned agent, uint32_t index) const {
  unsigned core = agent / kNumOrderedAgents, local = agent % kNumOrderedAgents;
  unsigned first = orderedAgent(Engine::Dma, 0);
  if (local < first)
    return {core, Engine(local), index};
  return {core, Engine::Dma, queueToStream[core][local - first][index]};
}

void RaceChecker::Impl::report(const Record &r, unsigned agent,
                               uint32_t index, const Footprint &fp,
                               uint64_t segBegin, uint64_t segEnd) {
  uint32_t pBegin = std::max(r.pBegin, fp.pBegin);
  uint32_t pEnd = std::min(r.pEnd, fp.pEnd);
  Where first = instructionOf(r.agent, r.index);
  Where second = instructionOf(agent, index);
  auto key = std::make_pair(
      instructionKey(first.core, unsigned(first.engine), first.index),
      instructionKey(second.core, unsigned(second.engine), second.index));
  auto found = pairs.find(key);
  if (found != pairs.end()) {
    // The same pair over more segments: widen the reported overlap.
    if (found->second < races.size()) {
      Race &race = races[found->second];
      if (race.space == fp.space) {
        race.pBegin = std::min(race.pBegin, pBegin);
        race.pEnd = std::max(race.pEnd, pEnd);
        race.begin = std::min(race.begin, segBegin);
        race.end = std::max(race.end, segEnd);
      }
    }
    return;
  }
  ++numRaces;
  unsigned slot = unsigned(races.size());
  if (races.size() < options.maxReported)
    races.push_back({first.core, second.core, first.engine, second.engine,
                     first.index, second.index, r.write, fp.write, fp.space,
                     pBegin, pEnd, segBegin, segEnd});
  else
    slot = std::numeric_limits<unsigned>::max();
  if (pairs.size() < kMaxRememberedPairs)
    pairs[key] = slot;
}

void RaceChecker::Impl::prune() {
  // A record every still-running agent has in its past can never race
  // again (a DMA's clock only grows from its queue's).
  Clock frontier;
  frontier.fill(std::numeric_limits<uint32_t>::max());
  for (unsigned a = 0; a < kNumAgents; ++a)
    if (remaining[a])
      for (unsigned f = 0; f < kNumAgents; ++f)
        frontier[f] = std::min(frontier[f], clocks[a][f]);
  for (SegmentMap &map : spaces) {
    for (auto it = map.begin(); it != map.end();) {
      auto &recs = it->second.records;
      size_t before = recs.size();
      llvm::erase_if(recs, [&](const Record &r) {
        return frontier[r.agent] > r.index;
      });
      live -= before - recs.size();
      it = recs.empty() ? map.erase(it) : std::next(it);
    }
  }
  pruneAt = std::max<size_t>(4096, 2 * live);
}

std::string RaceChecker::Impl::describe(const Race &race) const {
  auto verb = [](bool write) { return write ? " writes" : " reads"; };
  std::string s =
      describeInstruction(*program, race.firstCore, race.firstEngine,
                          race.firstIndex) +
      verb(race.firstWrites) + " and " +
      describeInstruction(*program, race.secondCore, race.secondEngine,
                          race.secondIndex) +
      verb(race.secondWrites) + " " +
      spaceName(race.space, program->lnc() > 1, program->regions.size());
  if (race.space < kFirstHbmSpace)
    s += " partitions " + std::to_string(race.pBegin) + ".." +
         std::to_string(race.pEnd) + ", bytes " + std::to_string(race.begin) +
         ".." + std::to_string(race.end) + " of each partition";
  else
    s += " bytes " + std::to_string(race.begin) + ".." +
         std::to_string(race.end);
  return s + ", with no semaphore ordering between them";
}

RaceChecker::RaceChecker(RaceCheckerOptions options) : impl(new Impl) {
  impl->options = options;
}

RaceChecker::~RaceChecker() = default;

void RaceChecker::onStart(const Program &program) { impl->reset(program); }

void RaceChecker::Impl::wait(unsigned core, const SemaphoreWait &w,
                             Clock &clock) const {
  if (w.value == 0 || w.semaphore >= kNumSemaphores)
    return; // met from the start: orders nothing
  unsigned sem = core * kNumSemaphores + w.semaphore; // a core waits on its own
  for (unsigned a = 0; a < kNumSignallers; ++a) {
    uint64_t mine = signals[sem][a];
    uint64_t others = totalSignals[sem] - mine;
    if (!mine || w.value <= others)
      continue; // the others alone could have raised it that far
    uint64_t k = w.value - others; // signals of `a` proven done
    const auto &list = signalled[sem][a];
    if (k <= list.size())
      join(clock, list[k - 1]);
  }
}

void RaceChecker::onExecute(unsigned core, Engine engine, size_t index,
                            const Instruction &inst) {
  Impl &s = *impl;
  if (core >= kMaxLnc)
    return;
  uint32_t i = uint32_t(index);
  unsigned waits = std::min<unsigned>(inst.numWaits, kMaxWaits);
  const unsigned base = core * kNumOrderedAgents;
  if (engine != Engine::Dma) {
    unsigned e = base + unsigned(engine);
    Clock &clock = s.clocks[e];
    clock[e] = std::max(clock[e], i);
    for (unsigned w = 0; w < waits; ++w)
      s.wait(core, inst.waits[w], clock);
    s.accessAll(core, inst, e, i, clock);
    if (s.remaining[e])
      --s.remaining[e];
    return;
  }
  // The DMA stream: waits hold back this and every later DMA's issue.
  Clock &issue = s.dmaIssue[core];
  for (unsigned w = 0; w < waits; ++w)
    s.wait(core, inst.waits[w], issue);
  const auto &positions = s.dmaPosition[core];
  uint32_t pos = index < positions.size() ? positions[index] : kNoPosition;
  bool signals = inst.signal < kNumSemaphores;
  uint64_t key = (uint64_t(core) << 32) | i;
  if (pos == kNoPosition) { // a Nop: no accesses, done when issued
    if (signals)
      s.dmaRunning[key] = issue;
    return;
  }
  unsigned a = base + orderedAgent(Engine::Dma, inst.dmaQueue);
  Clock &clock = s.clocks[a];
  join(clock, issue);
  clock[a] = std::max(clock[a], pos);
  s.accessAll(core, inst, a, pos, clock);
  if (signals) {
    Clock done = clock;
    done[a] = std::max(done[a], pos + 1);
    s.dmaRunning[key] = done;
  }
  if (s.remaining[a])
    --s.remaining[a];
}

void RaceChecker::onSignal(unsigned core, Engine engine, size_t index,
                           unsigned semaphoreCore, uint8_t semaphore,
                           uint32_t value) {
  Impl &s = *impl;
  if (semaphore >= kNumSemaphores || value == 0 || core >= kMaxLnc ||
      semaphoreCore >= kMaxLnc)
    return;
  unsigned signaller;
  Clock clock;
  if (engine != Engine::Dma) {
    unsigned agent = core * kNumOrderedAgents + unsigned(engine);
    signaller = unsigned(engine);
    Clock &mine = s.clocks[agent];
    mine[agent] = std::max(mine[agent], uint32_t(index + 1));
    clock = mine;
  } else {
    auto it = s.dmaRunning.find((uint64_t(core) << 32) | uint32_t(index));
    if (it == s.dmaRunning.end())
      return;
    clock = it->second;
    s.dmaRunning.erase(it);
    const Instruction &inst =
        s.program->coreStreams(core)[size_t(Engine::Dma)][index];
    signaller = isDmaTransfer(inst.opcode)
                    ? orderedAgent(Engine::Dma, inst.dmaQueue)
                    : kDmaIssuer;
  }
  s.signalled[semaphoreCore * kNumSemaphores + semaphore]
             [core * kSignallersPerCore + signaller]
                 .push_back(clock);
}

llvm::Error RaceChecker::onFinish() {
  Impl &s = *impl;
  std::string name = s.program ? s.program->name : "";
  llvm::Error unwritten = llvm::Error::success();
  if (s.numUnwrittenReads) {
    std::string msg = "scratch check of program '" + name + "' failed: " +
                      std::to_string(s.numUnwrittenReads) +
                      (s.numUnwrittenReads == 1 ? " instruction reads"
                                                : " instructions read") +
                      " HBM scratch bytes nothing wrote before in this run "
                      "(scratch is undefined until written):";
    for (const Impl::UnwrittenRead &u : s.unwrittenReads)
      msg += "\n  " +
             describeInstruction(*s.program, u.at.core, u.at.engine,
                                 u.at.index) +
             " reads bytes " + std::to_string(u.begin) + ".." +
             std::to_string(u.end) + " of scratch region " +
             std::to_string(u.region);
    if (s.numUnwrittenReads > s.unwrittenReads.size())
      msg += "\n  ... and " +
             std::to_string(s.numUnwrittenReads - s.unwrittenReads.size()) +
             " more";
    unwritten = llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  }
  if (!s.numRaces)
    return unwritten;
  std::string msg = "race check of program '" + name + "' failed: " +
                    std::to_string(s.numRaces) +
                    (s.numRaces == 1 ? " race" : " races") +
                    " between instructions on different engines or DMA queues:";
  for (const Race &race : s.races)
    msg += "\n  " + s.describe(race);
  if (s.numRaces > s.races.size())
    msg += "\n  ... and " + std::to_string(s.numRaces - s.races.size()) +
           " more";
  return llvm::joinErrors(
      llvm::createStringError(llvm::inconvertibleErrorCode(), msg),
      std::move(unwritten));
}

size_t RaceChecker::numRaces() const { return impl->numRaces; }
size_t RaceChecker::peakLiveAccesses() const { return impl->peakLive; }

} // namespace trnc
