//===- DmaQueues.cpp - DMA queues sharing the core's bandwidth -----------===//
//
// See DmaQueues.h.
//
//===----------------------------------------------------------------------===//

#include "sim/DmaQueues.h"

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

void DmaQueues::dispatch(unsigned queue, const DmaTransfer &t) {
  std::deque<Active> &q = queues[queue % queues.size()];
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
  // transfer reaches its own rate or a resource (DMA, HBM) is full; freeze
  // those; repeat. Each round freezes at least one transfer.
  std::vector<Active *> open;
  for (std::deque<Active> &q : queues)
    if (!q.empty() && moving(q.front()) && !timed(q.front())) {
      q.front().rate = 0;
      open.push_back(&q.front());
    }
  double usedDma = 0, usedHbm = 0;
  while (!open.empty()) {
    size_t n = open.size(), nHbm = 0;
    double step = (dmaCap - usedDma) / double(n);
    for (Active *a : open) {
      nHbm += a->t.touchesHbm;
      step = std::min(step, a->t.aloneBytesPerNs - a->rate);
    }
    if (nHbm)
      step = std::min(step, (hbmCap - usedHbm) / double(nHbm));
    step = std::max(step, 0.0);
    for (Active *a : open)
      a->rate += step;
    usedDma += step * double(n);
    usedHbm += step * double(nHbm);
    bool dmaFull = usedDma >= dmaCap * (1 - 1e-12);
    bool hbmFull = usedHbm >= hbmCap * (1 - 1e-12);
    std::vector<Active *> still;
    for (Active *a : open)
      if (!(dmaFull || (a->t.touchesHbm && hbmFull) ||
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
