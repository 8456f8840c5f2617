//===- RaceChecker.cpp - Vector clocks and footprint maps -----------------===//
//
// Clocks: clock[e][f] is the number of instructions of engine f known to
// have completed before engine e's current instruction. Each signal stores
// the signaller's clock under (semaphore, value); a wait for s >= v joins
// the clock stored under (s, v). Instruction (f, i) happens before the
// current instruction of e iff clock[e][f] > i.
//
// Footprints live in one segment map per memory space (SBUF, PSUM, each
// HBM region): disjoint byte segments, each holding the access records
// (engine, index, partition range, read/write) that may still race. An
// access splits the segments at its ends, checks the records of the
// segments it covers, then updates them FastTrack-style:
//   - a write drops every record whose partitions it covers (each is either
//     ordered before it or was just reported), since a later access that
//     conflicts with the dropped one conflicts with the write too;
//   - a read drops covered reads of its own engine or ordered before it.
// Periodically, records that every still-running engine has in its past are
// pruned. Cost per access: O(log S + segments covered x records per
// segment), both small because of superseding and pruning.
//
//===----------------------------------------------------------------------===//

#include "sim/RaceChecker.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace trnc {

using namespace isa;

namespace {

using Clock = std::array<uint32_t, kNumEngines>;

/// Memory spaces: 0 = SBUF, 1 = PSUM, 2 + r = HBM region r.
constexpr unsigned kSbufSpace = 0, kPsumSpace = 1, kFirstHbmSpace = 2;

struct Footprint {
  unsigned space;
  uint32_t pBegin, pEnd; // partitions (HBM: always 0..1)
  uint64_t begin, end;   // bytes within each partition (HBM: the region)
  bool write;
};

/// The bytes an access pattern can touch: its extent, the same conservative
/// footprint the compiler's semaphore scheduler uses. The program is
/// verified, so every sum below stays far inside 64 bits.
Footprint footprintOf(const AccessPattern &ap, bool write) {
  int64_t lo = 0, hi = 0;
  for (unsigned i = 0; i < ap.numDims; ++i) {
    int64_t reach = ap.stride[i] * int64_t(ap.count[i] - 1);
    (reach < 0 ? lo : hi) += reach;
  }
  Footprint fp;
  fp.write = write;
  if (ap.mem == MemKind::HBM) {
    int64_t rows = ap.partitionStride * int64_t(ap.partitionCount - 1);
    (rows < 0 ? lo : hi) += rows;
    fp.space = kFirstHbmSpace + ap.region;
    fp.pBegin = 0;
    fp.pEnd = 1;
  } else {
    fp.space = ap.mem == MemKind::SBUF ? kSbufSpace : kPsumSpace;
    fp.pBegin = ap.partitionStart;
    fp.pEnd = uint32_t(ap.partitionStart) + ap.partitionCount;
  }
  int64_t eb = dtypeBytes(ap.dtype);
  fp.begin = uint64_t(int64_t(ap.offset) + lo * eb);
  fp.end = uint64_t(int64_t(ap.offset) + (hi + 1) * eb);
  return fp;
}

std::string spaceName(unsigned space) {
  if (space == kSbufSpace)
    return "SBUF";
  if (space == kPsumSpace)
    return "PSUM";
  return "HBM region " + std::to_string(space - kFirstHbmSpace);
}

/// One access that may still race with a later one.
struct Record {
  uint32_t index;
  uint32_t pBegin, pEnd;
  uint8_t engine;
  bool write;
};

struct Segment {
  uint64_t end;
  llvm::SmallVector<Record, 4> records;
};
using SegmentMap = std::map<uint64_t, Segment>; // keyed by segment begin

struct Race {
  Engine firstEngine, secondEngine;
  uint32_t firstIndex, secondIndex;
  bool firstWrites, secondWrites;
  unsigned space;
  uint32_t pBegin, pEnd;
  uint64_t begin, end;
};

uint64_t instructionKey(unsigned engine, uint32_t index) {
  return (uint64_t(engine) << 32) | index;
}

/// Distinct pairs remembered for de-duplication; past it, repeats count again.
constexpr size_t kMaxRememberedPairs = 1 << 20;

} // namespace

struct RaceChecker::Impl {
  RaceCheckerOptions options;
  const Program *program = nullptr;
  std::array<Clock, kNumEngines> clocks{};
  std::array<size_t, kNumEngines> remaining{}; // instructions not yet run
  std::array<std::vector<Clock>, kNumSemaphores> signalled; // [s][v - 1]
  std::vector<SegmentMap> spaces;
  size_t live = 0, pruneAt = 0, peakLive = 0;

  llvm::DenseMap<std::pair<uint64_t, uint64_t>, unsigned> pairs; // -> races[i]
  std::vector<Race> races; // the first options.maxReported
  size_t numRaces = 0;

  void reset(const Program &p);
  void access(const Footprint &fp, unsigned engine, uint32_t index,
              const Clock &clock);
  void splitAt(SegmentMap &map, uint64_t at);
  void report(const Record &r, unsigned engine, uint32_t index,
              const Footprint &fp, uint64_t segBegin, uint64_t segEnd);
  void prune();
  std::string describe(const Race &race) const;
};

void RaceChecker::Impl::reset(const Program &p) {
  program = &p;
  for (Clock &c : clocks)
    c.fill(0);
  for (unsigned e = 0; e < kNumEngines; ++e)
    remaining[e] = p.streams[e].size();
  for (auto &s : signalled)
    s.clear();
  spaces.assign(kFirstHbmSpace + p.regions.size(), SegmentMap());
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

void RaceChecker::Impl::access(const Footprint &fp, unsigned engine,
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
      if (r.pBegin >= fp.pEnd || fp.pBegin >= r.pEnd || r.engine == engine ||
          !(r.write || fp.write) || clock[r.engine] > r.index)
        continue;
      report(r, engine, index, fp, it->first, seg.end);
    }
    size_t before = seg.records.size();
    llvm::erase_if(seg.records, [&](const Record &r) {
      if (!covers(r))
        return false;
      if (fp.write)
        return true;
      return !r.write && (r.engine == engine || clock[r.engine] > r.index);
    });
    live -= before - seg.records.size();
    seg.records.push_back(
        {index, fp.pBegin, fp.pEnd, uint8_t(engine), fp.write});
    ++live;
    cursor = seg.end;
    ++it;
  }
  peakLive = std::max(peakLive, live);
  if (live >= pruneAt)
    prune();
}

void RaceChecker::Impl::report(const Record &r, unsigned engine,
                               uint32_t index, const Footprint &fp,
                               uint64_t segBegin, uint64_t segEnd) {
  uint32_t pBegin = std::max(r.pBegin, fp.pBegin);
  uint32_t pEnd = std::min(r.pEnd, fp.pEnd);
  auto key = std::make_pair(instructionKey(r.engine, r.index),
                            instructionKey(engine, index));
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
    races.push_back({Engine(r.engine), Engine(engine), r.index, index, r.write,
                     fp.write, fp.space, pBegin, pEnd, segBegin, segEnd});
  else
    slot = std::numeric_limits<unsigned>::max();
  if (pairs.size() < kMaxRememberedPairs)
    pairs[key] = slot;
}

void RaceChecker::Impl::prune() {
  // A record every still-running engine has in its past can never race again.
  Clock frontier;
  frontier.fill(std::numeric_limits<uint32_t>::max());
  for (unsigned e = 0; e < kNumEngines; ++e)
    if (remaining[e])
      for (unsigned f = 0; f < kNumEngines; ++f)
        frontier[f] = std::min(frontier[f], clocks[e][f]);
  for (SegmentMap &map : spaces) {
    for (auto it = map.begin(); it != map.end();) {
      auto &recs = it->second.records;
      size_t before = recs.size();
      llvm::erase_if(recs, [&](const Record &r) {
        return frontier[r.engine] > r.index;
      });
      live -= before - recs.size();
      it = recs.empty() ? map.erase(it) : std::next(it);
    }
  }
  pruneAt = std::max<size_t>(4096, 2 * live);
}

std::string RaceChecker::Impl::describe(const Race &race) const {
  auto verb = [](bool write) { return write ? " writes" : " reads"; };
  std::string s = describeInstruction(*program, race.firstEngine, race.firstIndex) +
                  verb(race.firstWrites) + " and " +
                  describeInstruction(*program, race.secondEngine,
                                      race.secondIndex) +
                  verb(race.secondWrites) + " " + spaceName(race.space);
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

void RaceChecker::onExecute(Engine engine, size_t index,
                            const Instruction &inst) {
  Impl &s = *impl;
  unsigned e = unsigned(engine);
  Clock &clock = s.clocks[e];
  clock[e] = std::max(clock[e], uint32_t(index));
  for (unsigned w = 0; w < inst.numWaits && w < kMaxWaits; ++w) {
    const SemaphoreWait &wait = inst.waits[w];
    if (wait.value == 0 || wait.semaphore >= kNumSemaphores)
      continue; // met from the start: orders nothing
    const auto &values = s.signalled[wait.semaphore];
    if (wait.value > values.size())
      continue; // not reported as signalled: assume no ordering
    const Clock &from = values[wait.value - 1];
    for (unsigned f = 0; f < kNumEngines; ++f)
      clock[f] = std::max(clock[f], from[f]);
  }
  const std::pair<const AccessPattern *, bool> operands[] = {
      {&inst.src0, false}, {&inst.src1, false}, {&inst.dst, true}};
  for (auto [ap, write] : operands)
    if (ap->present())
      s.access(footprintOf(*ap, write), e, uint32_t(index), clock);
  if (s.remaining[e])
    --s.remaining[e];
}

void RaceChecker::onSignal(Engine engine, size_t index, uint8_t semaphore,
                           uint32_t value) {
  Impl &s = *impl;
  if (semaphore >= kNumSemaphores || value == 0)
    return;
  unsigned e = unsigned(engine);
  s.clocks[e][e] = std::max(s.clocks[e][e], uint32_t(index + 1));
  auto &values = s.signalled[semaphore];
  if (values.size() < value)
    values.resize(value, Clock{});
  values[value - 1] = s.clocks[e];
}

llvm::Error RaceChecker::onFinish() {
  Impl &s = *impl;
  if (!s.numRaces)
    return llvm::Error::success();
  std::string name = s.program ? s.program->name : "";
  std::string msg = "race check of program '" + name + "' failed: " +
                    std::to_string(s.numRaces) +
                    (s.numRaces == 1 ? " race" : " races") +
                    " between instructions on different engines:";
  for (const Race &race : s.races)
    msg += "\n  " + s.describe(race);
  if (s.numRaces > s.races.size())
    msg += "\n  ... and " + std::to_string(s.numRaces - s.races.size()) +
           " more";
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

size_t RaceChecker::numRaces() const { return impl->numRaces; }
size_t RaceChecker::peakLiveAccesses() const { return impl->peakLive; }

} // namespace trnc
