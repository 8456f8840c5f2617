//===- MatmulBlocking.cpp - the matmul lowering's planner -----------------===//
//
// See MatmulBlocking.h. The estimate of a plan is the time its DMAs need at
// the bandwidth their contiguous runs reach (sim::dmaEfficiency, capped by
// the core's HBM share) plus the Tensor Engine and PSUM copy-out time of its
// transposes; the multiplies themselves cost the same in every plan.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/MatmulBlocking.h"

#include "sim/CostModel.h"

#include <algorithm>
#include <limits>

using namespace trnc;
using namespace trnc::tile;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// Cost estimates on one target.
struct Costs {
  const MachineModel &m;
  int64_t eltBytes;

  double bandwidth(int64_t runBytes) const {
    return dmaBytesPerNs(m, runBytes);
  }
  /// A 128 x 128 transpose: its matmul (moving free size 128) plus a
  /// quarter of the [128, 512] fp32 PSUM copy-out shared by four of them.
  double transposeNs() const {
    double te = double(std::max<int64_t>(m.matmulMinCycles, m.tensorArrayCols));
    if (eltBytes != 2)
      te *= m.matmulFp32Slowdown;
    double copyWork = double(m.psumBankBytes / 4) * m.numPartitions /
                      double(m.vectorElemsPerCycleOther);
    double copy = (m.accessOverheadCycles +
                   std::max<double>(m.minInitiationCycles, copyWork)) /
                  m.vectorClockGHz;
    return te / m.tensorClockGHz + copy / 4;
  }
  /// What a dependent transpose chain adds once: array start-up and one
  /// copy-out's latency.
  double transposeLatencyNs() const {
    return m.matmulStartupCycles / m.tensorClockGHz + 4 * transposeNs();
  }
};

/// Contiguous k elements per row load feeding the transposes: the DMA
/// saturation size, a whole number of contraction tiles, at most K.
int64_t rowChunkFor(const MachineModel &m, int64_t k, int64_t tileK,
                    int64_t eltBytes) {
  int64_t want = roundUp(ceilDiv(int64_t(m.dmaSaturateRowBytes), eltBytes), tileK);
  return std::max<int64_t>(tileK, std::min(want, roundUp(k, tileK)));
}

/// Whether `count` [k, f] blocks are cheaper loaded as rows of `rowBytes`
/// contiguous bytes (f on partitions) and transposed on the Tensor Engine
/// than as element-granular DMAs straight into [k partitions, f free].
bool transposeBeatsGather(const Costs &c, int64_t k, int64_t f,
                          int64_t rowBytes, int64_t count) {
  double bytes = double(k) * f * c.eltBytes * count;
  double direct = bytes / c.bandwidth(c.eltBytes);
  double blocks = double(ceilDiv(k, 128)) * ceilDiv(f, 128) * count;
  double rows = bytes / c.bandwidth(rowBytes) + blocks * c.transposeNs() +
                c.transposeLatencyNs();
  return rows < direct;
}

/// Whether X[K, F] is cheaper as contiguous rows transposed on the Tensor
/// Engine than as a direct DMA into [k partitions, f free].
bool wantsTranspose(const Costs &c, const MatmulOperand &x, int64_t rowChunk) {
  if (x.k <= 1 || x.f <= 1 || x.strideF == 1 || x.strideK != 1)
    return false; // direct runs are contiguous, or rows are not either
  return transposeBeatsGather(c, x.k, x.f,
                              std::min(x.k, rowChunk) * c.eltBytes, 1);
}

/// Time to bring `bytes` of X to SBUF `times` over, by its chosen route.
double loadNs(const Costs &c, const MatmulOperand &x, bool transpose,
              int64_t rowChunk, double times) {
  double bytes = double(x.k) * x.f * c.eltBytes * times;
  int64_t run = transpose ? std::min(x.k, rowChunk) * c.eltBytes
                : x.strideF == 1 ? std::min<int64_t>(x.f, 512) * c.eltBytes
                                 : c.eltBytes;
  double ns = bytes / c.bandwidth(run);
  if (transpose)
    ns += times * double(ceilDiv(x.k, 128)) * ceilDiv(x.f, 128) *
          c.transposeNs();
  return ns;
}

int64_t transposesOf(const MatmulOperand &x, bool transpose, double times) {
  return transpose ? int64_t(times * ceilDiv(x.k, 128) * ceilDiv(x.f, 128)) : 0;
}

} // namespace

double trnc::tile::dmaBytesPerNs(const MachineModel &m, int64_t runBytes) {
  double engines = double(m.dmaEngines) * m.dmaEngineGBps *
                   sim::dmaEfficiency(m, uint64_t(std::max<int64_t>(1, runBytes)));
  return std::min(engines, m.hbmCoreBytesPerSecond() * 1e-9);
}

bool trnc::tile::transposedRowsBeatGather(const MachineModel &machine,
                                          int64_t eltBytes, int64_t k,
                                          int64_t f, int64_t rowBytes,
                                          int64_t count) {
  if (k <= 1 || f <= 1)
    return false;
  return transposeBeatsGather(Costs{machine, eltBytes}, k, f, rowBytes, count);
}

int64_t trnc::tile::residentBudgetBytes(const MachineModel &machine) {
  return int64_t(machine.sbufPartitionBytes / 2);
}

MatmulPlan trnc::tile::planMatmul(const MachineModel &machine,
                                  const MatmulProblem &p) {
  MatmulPlan base;
  base.tileK = std::min<int64_t>(machine.matmulMaxK, machine.numPartitions);
  base.tileM = std::min<int64_t>(machine.matmulMaxM, machine.numPartitions);
  base.tileN = std::min<int64_t>(machine.matmulMaxN,
                                 int64_t(machine.psumBankBytes / 4));
  base.rowChunk = rowChunkFor(machine, p.k, base.tileK, p.eltBytes);
  Costs c{machine, p.eltBytes};
  base.transposeA = wantsTranspose(c, p.a, base.rowChunk);
  base.transposeB = wantsTranspose(c, p.b, base.rowChunk);

  const int64_t e = p.eltBytes, kTiles = ceilDiv(p.k, base.tileK);
  const int64_t budget = residentBudgetBytes(machine);
  const double outNs = double(p.m) * p.n * p.outBytes /
                       c.bandwidth(std::min<int64_t>(p.n, base.tileN) * p.outBytes);
  auto finish = [&](MatmulPlan plan, double aTimes, double bTimes) {
    plan.hbmBytes = (double(p.m) * p.k * aTimes + double(p.k) * p.n * bTimes) * e +
                    double(p.m) * p.n * p.outBytes;
    plan.transposes = transposesOf(p.a, plan.transposeA, aTimes) +
                      transposesOf(p.b, plan.transposeB, bTimes);
    plan.costNs = loadNs(c, p.a, plan.transposeA, plan.rowChunk, aTimes) +
                  loadNs(c, p.b, plan.transposeB, plan.rowChunk, bTimes) + outNs;
    return plan;
  };

  MatmulPlan best;
  best.costNs = std::numeric_limits<double>::infinity();
  auto consider = [&](const MatmulPlan &plan) {
    if (plan.costNs < best.costNs)
      best = plan;
  };

  // A^T [K, blockM] resident: at most half the PSUM banks of m tiles.
  {
    int64_t maxTiles = std::max<int64_t>(1, machine.psumBanks / 2);
    int64_t blockM = std::min(roundUp(p.m, base.tileM), base.tileM * maxTiles);
    while (blockM > base.tileM && kTiles * blockM * e > budget)
      blockM -= base.tileM;
    if (kTiles * std::min(blockM, p.m) * e <= budget) {
      MatmulPlan plan = base;
      plan.order = MatmulOrder::StationaryResident;
      plan.block = blockM;
      consider(finish(plan, 1, double(ceilDiv(p.m, blockM))));
    }
  }
  // B [K, blockN] resident beside one m tile's A^T strip.
  {
    int64_t avail = budget - kTiles * std::min(p.m, base.tileM) * e;
    int64_t fitN = avail > 0 ? avail / (kTiles * e) : 0;
    int64_t blockN = p.n <= base.tileN
                         ? p.n
                         : std::min(roundUp(p.n, base.tileN),
                                    fitN / base.tileN * base.tileN);
    if (blockN > 0 && blockN <= fitN) {
      MatmulPlan plan = base;
      plan.order = MatmulOrder::MovingResident;
      plan.block = blockN;
      consider(finish(plan, double(ceilDiv(p.n, blockN)), 1));
    }
  }
  // Nothing resident: both operands per (m, n) tile, kChunk rows at a time.
  if (best.costNs == std::numeric_limits<double>::infinity()) {
    MatmulPlan plan = base;
    plan.order = MatmulOrder::Streamed;
    plan.kChunk = base.rowChunk;
    best = finish(plan, double(ceilDiv(p.n, base.tileN)),
                  double(ceilDiv(p.m, base.tileM)));
  }
  return best;
}
