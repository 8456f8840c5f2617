//===- DmaQueues.cpp - DMA queues sharing the core's bandwidth -----------===//
//
// See DmaQueues.h.
//
//===----------------------------------------------------------------------===//

#include "sim/DmaQueues.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <limits>

namespace trnc::sim {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();

bool finished(double remaining, uint64_t bytes) {
  return remaining <= 1e-9 * double(bytes) + 1e-9;
}
} // namespace

void DmaQueues::begin(Active &a, double at) {
  a.startNs = std::max(a.t.dispatchNs, at);
  a.dataStartNs = a.startNs + (timed(a) ? 0.0 : fixedNs);
  a.remaining = double(a.t.bytes);
  a.rate = 0;
}

void DmaQueues::dispatch(unsigned queue, const DmaTransfer &transfer) {
  DmaTransfer t = transfer;
  t.core = uint8_t(t.core % (queues.size() / isa::kNumDmaQueues));
  std::deque<Active> &q =
      queues[size_t(t.core) * isa::kNumDmaQueues + queue % isa::kNumDmaQueues];
  q.push_back(Active{t});
  if (q.size() == 1) {
    begin(q.front(), t.dispatchNs);
    if (moving(q.front()))
      rerate();
  }
}

double DmaQueues::nextEventNs() const {
  double next = kNever;
  for (const std::deque<Active> &q : queues) {
    if (q.empty())
      continue;
    const Active &a = q.front();
    if (timed(a))
      next = std::min(next, a.startNs + a.t.fixedDurationNs);
    else if (!moving(a))
      next = std::min(next, a.dataStartNs);
    else if (finished(a.remaining, a.t.bytes))
      next = std::min(next, now);
    else if (a.rate > 0)
      next = std::min(next, now + a.remaining / a.rate);
  }
  return next;
}

void DmaQueues::rerate() {
  // Progressive filling: raise every unfrozen rate together until a
  // transfer reaches its own rate or a resource (a core's DMA, the shared
  // HBM) is full; freeze those; repeat. Each round freezes at least one
  // transfer.
  std::vector<Active *> open;
  for (std::deque<Active> &q : queues)
    if (!q.empty() && moving(q.front()) && !timed(q.front())) {
      q.front().rate = 0;
      open.push_back(&q.front());
    }
  const size_t cores = queues.size() / isa::kNumDmaQueues;
  // Small inline vectors: rerate runs at every DMA event.
  llvm::SmallVector<double, 2> usedDma(cores, 0.0);
  llvm::SmallVector<size_t, 2> perCore(cores, 0);
  double usedHbm = 0;
  while (!open.empty()) {
    size_t nHbm = 0;
    std::fill(perCore.begin(), perCore.end(), 0);
    double step = std::numeric_limits<double>::infinity();
    for (Active *a : open) {
      nHbm += a->t.hbmSides;
      ++perCore[a->t.core];
      step = std::min(step, a->t.aloneBytesPerNs - a->rate);
    }
    for (size_t c = 0; c < cores; ++c)
      if (perCore[c])
        step = std::min(step, (dmaCap - usedDma[c]) / double(perCore[c]));
    if (nHbm)
      step = std::min(step, (hbmCap - usedHbm) / double(nHbm));
    step = std::max(step, 0.0);
    for (Active *a : open)
      a->rate += step;
    for (size_t c = 0; c < cores; ++c)
      usedDma[c] += step * double(perCore[c]);
    usedHbm += step * double(nHbm);
    bool hbmFull = usedHbm >= hbmCap * (1 - 1e-12);
    std::vector<Active *> still;
    for (Active *a : open)
      if (!(usedDma[a->t.core] >= dmaCap * (1 - 1e-12) ||
            (a->t.hbmSides && hbmFull) ||
            a->rate >= a->t.aloneBytesPerNs * (1 - 1e-12)))
        still.push_back(a);
    if (still.size() == open.size()) // no progress possible (zero caps)
      break;
    open.swap(still);
  }
}

void DmaQueues::advanceTo(double ns, std::vector<DmaDone> &done) {
  for (;;) {
    double event = nextEventNs();
    double until = std::min(event, ns);
    if (until > now) {
      for (std::deque<Active> &q : queues)
        if (!q.empty() && moving(q.front()) && !timed(q.front()))
          q.front().remaining =
              std::max(0.0, q.front().remaining - q.front().rate * (until - now));
      now = until;
    }
    if (event > ns)
      return;
    // Transfers whose data phase is over end; their queues start the next.
    auto over = [&](const Active &a) {
      return timed(a) ? a.startNs + a.t.fixedDurationNs <= now
                      : moving(a) && finished(a.remaining, a.t.bytes);
    };
    for (std::deque<Active> &q : queues)
      while (!q.empty() && over(q.front())) {
        done.push_back({q.front().t, q.front().startNs, now});
        q.pop_front();
        if (!q.empty())
          begin(q.front(), now);
      }
    rerate();
  }
}

} // namespace trnc::sim
