//===- DmaQueues.h - DMA queues sharing the core's bandwidth ------*- C++ -*-===//
//
// The 16 DMA queues of a core (of each physical core of a logical core at
// LNC=2) as a fluid model. Each queue serialises its
// transfers: a transfer starts when it is dispatched and the queue's previous
// transfer has ended, spends the fixed ~1.3 us, then moves its bytes. The
// transfers moving bytes at one time share their core's DMA bandwidth (and,
// those touching HBM, the HBM share, which at LNC=2 both physical cores'
// transfers share: the pair's two shares of the chip's HBM bandwidth; an
// HBM -> HBM copy reads and writes HBM, so its rate counts twice there)
// max-min fairly, none above the rate it
// reaches alone; rates are recomputed whenever a transfer starts or ends its
// data phase, so a transfer slows while others run and speeds up when they
// end, and the rates in flight never sum above either cap. A job of fixed
// duration (a collective on its own queue) holds its queue without sharing
// the bandwidth. End times are
// known only as time advances (nextEventNs / advanceTo): the simulator's
// event loop asks for the next DMA event beside its engines' next starts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "isa/Isa.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace trnc::sim {

struct DmaTransfer {
  const isa::Instruction *inst = nullptr;
  uint8_t core = 0; ///< the physical core whose queue runs it
  uint32_t index = 0;
  double issueNs = 0, dispatchNs = 0;
  uint64_t bytes = 0;
  double aloneBytesPerNs = 0; ///< what it reaches with the core to itself
  /// HBM sides it touches (0, 1, or 2 for an HBM -> HBM copy, which reads
  /// and writes HBM: its rate counts twice against the HBM bandwidth).
  uint8_t hbmSides = 0;
  /// >= 0: a job of this duration from its start that takes no share of
  /// the bandwidth (a collective: its links are not the core's DMA).
  double fixedDurationNs = -1;
  /// The trace record reserved at dispatch (traces stay in issue order).
  size_t traceSlot = ~size_t(0);
};

struct DmaDone {
  DmaTransfer transfer;
  double startNs = 0, endNs = 0;
};

class DmaQueues {
public:
  /// `dmaBytesPerNs`: one core's DMA bandwidth (each of `cores` has its
  /// own); `hbmBytesPerNs`: the HBM bandwidth all cores' transfers share.
  DmaQueues(double fixedNs, double dmaBytesPerNs, double hbmBytesPerNs,
            unsigned cores = 1)
      : fixedNs(fixedNs), dmaCap(dmaBytesPerNs), hbmCap(hbmBytesPerNs),
        queues(size_t(cores ? cores : 1) * isa::kNumDmaQueues) {}

  /// Queues `t` on queue `queue` of core `t.core` at `t.dispatchNs` (call
  /// advanceTo(dispatchNs) first: dispatch times never go back).
  void dispatch(unsigned queue, const DmaTransfer &t);
  /// When the next transfer ends its fixed phase or its data phase, under
  /// the current rates (infinity when no transfer is queued).
  double nextEventNs() const;
  /// Advances to `ns`, appending the transfers that end by then, in order.
  void advanceTo(double ns, std::vector<DmaDone> &done);

private:
  struct Active {
    DmaTransfer t;
    double startNs = 0, dataStartNs = 0, remaining = 0, rate = 0;
  };
  bool moving(const Active &a) const { return a.dataStartNs <= now; }
  static bool timed(const Active &a) { return a.t.fixedDurationNs >= 0; }
  /// Max-min fair rates of the transfers in their data phase.
  void rerate();
  void begin(Active &a, double at);

  double fixedNs, dmaCap, hbmCap;
  double now = 0;
  std::vector<std::deque<Active>> queues; // core x kNumDmaQueues + queue
};

} // namespace trnc::sim
