//===- LoweringContext.cpp - buffers, patterns and instruction builders ---===//
//
// The one place that knows the nisa builders' argument lists: every lowering
// goes through these helpers (queue 0, no semaphores: later passes set them).
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "passes/Tile/EngineBalance.h"
#include "passes/Tile/MatmulBlocking.h"

#include "dialects/Trn/TrnOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace trnc;
using namespace trnc::tile;

static int64_t elementBytes(Type t) {
  return (t.getIntOrFloatBitWidth() + 7) / 8;
}

int64_t LoweringContext::maxFree(ArrayRef<Type> types) const {
  int64_t widest = 1;
  for (Type t : types)
    widest = std::max(widest, elementBytes(t));
  return tileBytes() / widest;
}

bool trnc::tile::isViewOp(Operation *op) {
  return isa<trn::TransposeOp, trn::BroadcastOp, trn::SliceOp, trn::ReshapeOp>(
      op);
}

bool LoweringContext::resolveView(Value v) {
  if (views.count(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumOperands() != 1 || !resolveView(def->getOperand(0)))
    return false;
  const HbmView &in = views.find(def->getOperand(0))->second;
  std::optional<HbmView> view =
      TypeSwitch<Operation *, std::optional<HbmView>>(def)
          .Case([&](trn::TransposeOp t) {
            return transposeView(in, t.getPermutation());
          })
          .Case([&](trn::BroadcastOp b) {
            return broadcastView(in, b.getType().getShape());
          })
          .Case([&](trn::SliceOp s) {
            return sliceView(in, s.getStarts(), s.getSteps(),
                             s.getType().getShape());
          })
          .Case([&](trn::ReshapeOp r) {
            return reshapeView(in, r.getType().getShape());
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!view)
    return false;
  views[v] = *view;
  return true;
}

HbmView LoweringContext::allocScratch(Location loc, RankedTensorType type) {
  int64_t n = std::max<int64_t>(1, type.getNumElements());
  auto memref = MemRefType::get({n}, type.getElementType());
  Value root = b.create<nisa::DramAllocOp>(loc, memref, /*offset=*/IntegerAttr());
  return HbmView{root, 0, SmallVector<int64_t>(type.getShape()),
                 contiguousStrides(type.getShape())};
}

HbmView LoweringContext::destination(Location loc, Value result) {
  auto it = resultDest.find(result);
  if (it != resultDest.end())
    return it->second;
  return allocScratch(loc, cast<RankedTensorType>(result.getType()));
}

Value LoweringContext::allocTile(Location loc, nisa::MemorySpace space,
                                 int64_t parts, int64_t free, Type elt) {
  // Engines do not hold int64: an i64 tensor is computed as i32, the DMA
  // narrowing/widening at HBM (runtime/isa/Isa.h, DType).
  if (elt.isInteger(64))
    elt = b.getI32Type();
  auto type = nisa::TileType::get(b.getContext(), space, parts, free, elt);
  return b.create<nisa::AllocOp>(loc, type, IntegerAttr());
}

Value LoweringContext::identity(Location loc, Type elt) {
  auto it = identities.find(elt);
  if (it != identities.end())
    return it->second;
  int64_t p = partitions();
  Value ones = allocSbuf(loc, p, p, elt);
  memset(loc, ones, tileAp(ones), 1.0);
  // Keep ones[p, f] where f - p == 0, zero elsewhere.
  Value id = allocSbuf(loc, p, p, elt);
  b.create<nisa::AffineSelectOp>(
      loc, nisa::AluOpAttr::get(b.getContext(), nisa::AluOp::is_equal), id,
      tileAp(id), ones, tileAp(ones), b.getF32FloatAttr(0.0),
      b.getI32IntegerAttr(-1), b.getI32IntegerAttr(1), b.getF32FloatAttr(0.0),
      nisa::EngineAttr::get(b.getContext(), nisa::Engine::gpsimd),
      DenseI64ArrayAttr(), IntegerAttr());
  identities[elt] = id;
  return id;
}

nisa::AccessPatternAttr LoweringContext::ap(int64_t offset,
                                            ArrayRef<int64_t> strides,
                                            ArrayRef<int64_t> counts) {
  return nisa::AccessPatternAttr::get(b.getContext(), offset, strides, counts);
}

nisa::AccessPatternAttr LoweringContext::tileAp(Value tile, int64_t parts,
                                                int64_t free) {
  auto type = cast<nisa::TileType>(tile.getType());
  return ap(0, {type.getFreeSize(), 1}, {parts, free});
}

nisa::AccessPatternAttr LoweringContext::tileAp(Value tile) {
  auto type = cast<nisa::TileType>(tile.getType());
  return tileAp(tile, type.getPartitions(), type.getFreeSize());
}

void LoweringContext::dma(Location loc, Value dst,
                          nisa::AccessPatternAttr dstAp, Value src,
                          nisa::AccessPatternAttr srcAp) {
  b.create<nisa::DmaCopyOp>(loc, dst, dstAp, src, srcAp,
                            IntegerAttr(), DenseI64ArrayAttr(),
                            IntegerAttr());
}

void LoweringContext::matmul(Location loc, Value psum,
                             nisa::AccessPatternAttr psumAp, Value stationary,
                             nisa::AccessPatternAttr statAp, Value moving,
                             nisa::AccessPatternAttr movAp, bool accumulate,
                             bool transpose) {
  b.create<nisa::MatmulOp>(loc, psum, psumAp, stationary, statAp, moving,
                           movAp, accumulate ? b.getUnitAttr() : UnitAttr(),
                           transpose ? b.getUnitAttr() : UnitAttr(),
                           DenseI64ArrayAttr(), IntegerAttr());
}

/// The one ActivationOp builder: a bias tile (with its pattern) or an
/// immediate bias.
static void buildActivation(OpBuilder &b, Location loc, nisa::ActFunc func,
                            Value dst, nisa::AccessPatternAttr dstAp, Value src,
                            nisa::AccessPatternAttr srcAp, Value biasTile,
                            nisa::AccessPatternAttr biasAp, double scale,
                            double bias) {
  b.create<nisa::ActivationOp>(
      loc, nisa::ActFuncAttr::get(b.getContext(), func), dst, dstAp, src,
      srcAp, biasTile, biasAp, b.getF32FloatAttr(scale),
      b.getF32FloatAttr(bias), DenseI64ArrayAttr(), IntegerAttr());
}

void LoweringContext::activation(Location loc, nisa::ActFunc func, Value dst,
                                 nisa::AccessPatternAttr dstAp, Value src,
                                 nisa::AccessPatternAttr srcAp, double scale,
                                 double bias) {
  buildActivation(b, loc, func, dst, dstAp, src, srcAp, Value(),
                  nisa::AccessPatternAttr(), scale, bias);
}

void LoweringContext::activation(Location loc, nisa::ActFunc func, Value dst,
                                 nisa::AccessPatternAttr dstAp, Value src,
                                 nisa::AccessPatternAttr srcAp, Value bias,
                                 double scale) {
  buildActivation(b, loc, func, dst, dstAp, src, srcAp, bias, tileAp(bias),
                  scale, 0.0);
}

void LoweringContext::copyPredicated(Location loc, Value dst,
                                     nisa::AccessPatternAttr dstAp, Value pred,
                                     nisa::AccessPatternAttr predAp, Value src,
                                     nisa::AccessPatternAttr srcAp) {
  b.create<nisa::CopyPredicatedOp>(
      loc, dst, dstAp, pred, predAp, src, srcAp,
      nisa::EngineAttr::get(b.getContext(), nisa::Engine::vector),
      DenseI64ArrayAttr(), IntegerAttr());
}

void LoweringContext::load(Location loc, Value dst, Value src,
                           nisa::AccessPatternAttr srcAp) {
  constexpr int64_t kMaxGap = 4;
  ArrayRef<int64_t> strides = srcAp.getStrides(), counts = srcAp.getCounts();
  auto type = cast<nisa::TileType>(dst.getType());
  // The leading dims of the HBM pattern spread over the partitions.
  int64_t parts = 1;
  size_t first = 0;
  while (first < counts.size() && parts < type.getPartitions())
    parts *= counts[first++];
  size_t inner = counts.size() - 1;
  while (inner > first && counts[inner] == 1)
    --inner;
  int64_t gap = inner >= first && inner < counts.size() ? strides[inner] : 1;
  SmallVector<int64_t> denseCounts(counts), denseStrides(strides);
  int64_t free = 1, denseFree = 1;
  bool dense = parts == type.getPartitions() && inner >= first && gap >= 2 &&
               gap <= kMaxGap;
  if (dense) {
    denseCounts[inner] = (counts[inner] - 1) * gap + 1;
    denseStrides[inner] = 1;
    for (size_t d = first; d < counts.size(); ++d)
      free *= counts[d], denseFree *= denseCounts[d];
    int64_t elt = std::max<int64_t>(
        1, int64_t(type.getElementType().getIntOrFloatBitWidth()) / 8);
    // One descriptor per element, against runs of the span plus the copy.
    double stridedNs =
        double(parts * free * elt) / tile::dmaBytesPerNs(machine, elt);
    double copyCycles =
        machine.accessOverheadCycles +
        std::max<double>(machine.minInitiationCycles,
                         double(parts * free) / machine.vectorElemsPerCycleOther);
    double denseNs = double(parts * denseFree * elt) /
                         tile::dmaBytesPerNs(machine, denseCounts[inner] * elt) +
                     copyCycles / machine.vectorClockGHz;
    dense = denseFree * elt <= int64_t(machine.sbufPartitionBytes / 16) &&
            denseNs < stridedNs;
  }
  if (!dense) {
    dma(loc, dst, tileAp(dst), src, srcAp);
    return;
  }
  Value span = allocSbuf(loc, parts, denseFree, type.getElementType());
  dma(loc, span, tileAp(span), src,
      ap(srcAp.getOffset(), denseStrides, denseCounts));
  // Read back every gap-th element of the dense span: [partitions, the free
  // dims], row-major over the span's free dims.
  SmallVector<int64_t> readStrides{denseFree}, readCounts{parts};
  readStrides.resize(1 + counts.size() - first);
  for (size_t d = first; d < counts.size(); ++d)
    readCounts.push_back(counts[d]);
  for (int64_t d = counts.size() - 1, run = 1; d >= int64_t(first); --d) {
    readStrides[1 + d - first] = run * (size_t(d) == inner ? gap : 1);
    run *= denseCounts[d];
  }
  copyOnVector(loc, dst, tileAp(dst), span, ap(0, readStrides, readCounts));
}

/// dst = cast(src) on `engine`.
static nisa::TensorCopyOp copyOn(OpBuilder &b, Location loc, Value dst,
                                 nisa::AccessPatternAttr dstAp, Value src,
                                 nisa::AccessPatternAttr srcAp,
                                 nisa::Engine engine) {
  return b.create<nisa::TensorCopyOp>(
      loc, dst, dstAp, src, srcAp,
      nisa::EngineAttr::get(b.getContext(), engine), DenseI64ArrayAttr(),
      IntegerAttr());
}

void LoweringContext::copyOnVector(Location loc, Value dst,
                                   nisa::AccessPatternAttr dstAp, Value src,
                                   nisa::AccessPatternAttr srcAp) {
  copyOn(b, loc, dst, dstAp, src, srcAp, nisa::Engine::vector);
}

/// The [P, 1] pattern of a tile source that reads one element per partition
/// (every free dim has stride 0 or count 1), else null.
static nisa::AccessPatternAttr perPartition(Value tile,
                                            nisa::AccessPatternAttr ap) {
  if (cast<nisa::TileType>(tile.getType()).getSpace() ==
      nisa::MemorySpace::psum)
    return {};
  ArrayRef<int64_t> strides = ap.getStrides(), counts = ap.getCounts();
  for (unsigned d = 1; d < ap.getRank(); ++d)
    if (strides[d] != 0 && counts[d] != 1)
      return {};
  return nisa::AccessPatternAttr::get(ap.getContext(), ap.getOffset(),
                                      {strides[0], 1}, {counts[0], 1});
}

void LoweringContext::tensorTensor(Location loc, nisa::AluOp op, Value dst,
                                   nisa::AccessPatternAttr dstAp, Value a,
                                   nisa::AccessPatternAttr aAp, Value bv,
                                   nisa::AccessPatternAttr bAp) {
  // A per-row value read broadcast along the row (x - rowmax, x * rstd) is
  // tensor_scalar's per-partition operand: one pass of N instead of
  // tensor_tensor's 2N (HARDWARE.md "Instructions").
  if (dstAp.getNumElements() > dstAp.getCounts()[0]) {
    nisa::AccessPatternAttr aRow = perPartition(a, aAp),
                            bRow = perPartition(bv, bAp);
    if (bool(aRow) != bool(bRow)) {
      MLIRContext *ctx = b.getContext();
      b.create<nisa::TensorScalarOp>(
          loc, dst, dstAp, bRow ? a : bv, bRow ? aAp : bAp,
          nisa::AluOpAttr::get(ctx, op), b.getF32FloatAttr(0.0),
          nisa::AluOpAttr::get(ctx, nisa::AluOp::bypass),
          b.getF32FloatAttr(0.0), bRow ? UnitAttr() : b.getUnitAttr(),
          UnitAttr(), nisa::EngineAttr::get(ctx, nisa::Engine::vector),
          bRow ? bv : a, bRow ? bRow : aRow, Value(),
          nisa::AccessPatternAttr(), DenseI64ArrayAttr(), IntegerAttr());
      return;
    }
  }
  b.create<nisa::TensorTensorOp>(
      loc, nisa::AluOpAttr::get(b.getContext(), op), dst, dstAp, a, aAp, bv,
      bAp, nisa::EngineAttr::get(b.getContext(), nisa::Engine::vector),
      DenseI64ArrayAttr(), IntegerAttr());
}

void LoweringContext::tensorScalar(Location loc, Value dst,
                                   nisa::AccessPatternAttr dstAp, Value src,
                                   nisa::AccessPatternAttr srcAp,
                                   nisa::AluOp op0, double imm0,
                                   nisa::AluOp op1, double imm1) {
  MLIRContext *ctx = b.getContext();
  b.create<nisa::TensorScalarOp>(
      loc, dst, dstAp, src, srcAp, nisa::AluOpAttr::get(ctx, op0),
      b.getF32FloatAttr(imm0), nisa::AluOpAttr::get(ctx, op1),
      b.getF32FloatAttr(imm1), UnitAttr(), UnitAttr(),
      nisa::EngineAttr::get(ctx, nisa::Engine::vector), Value(),
      nisa::AccessPatternAttr(), Value(), nisa::AccessPatternAttr(),
      DenseI64ArrayAttr(), IntegerAttr());
}

void LoweringContext::tensorReduce(Location loc, nisa::AluOp op, Value dst,
                                   nisa::AccessPatternAttr dstAp, Value src,
                                   nisa::AccessPatternAttr srcAp) {
  b.create<nisa::TensorReduceOp>(
      loc, nisa::AluOpAttr::get(b.getContext(), op), dst, dstAp, src, srcAp,
      nisa::EngineAttr::get(b.getContext(), nisa::Engine::vector),
      DenseI64ArrayAttr(), IntegerAttr());
}

void LoweringContext::copyOnScalar(Location loc, Value dst,
                                   nisa::AccessPatternAttr dstAp, Value src,
                                   nisa::AccessPatternAttr srcAp) {
  copyOn(b, loc, dst, dstAp, src, srcAp, nisa::Engine::scalar);
}

void LoweringContext::copyAlternating(Location loc, Value dst,
                                      nisa::AccessPatternAttr dstAp, Value src,
                                      nisa::AccessPatternAttr srcAp,
                                      int64_t stream) {
  // Scalar until the `unroll` phase chooses (EngineBalance.h).
  copyOn(b, loc, dst, dstAp, src, srcAp, nisa::Engine::scalar)
      ->setAttr(kEngineAlternateAttr, b.getI64IntegerAttr(stream));
}

void LoweringContext::memset(Location loc, Value dst,
                             nisa::AccessPatternAttr dstAp, double value,
                             nisa::Engine engine) {
  b.create<nisa::MemsetOp>(loc, dst, dstAp, b.getF32FloatAttr(value),
                           nisa::EngineAttr::get(b.getContext(), engine),
                           DenseI64ArrayAttr(), IntegerAttr());
}

void LoweringContext::dmaGather(Location loc, Value dst,
                                nisa::AccessPatternAttr dstAp, Value table,
                                nisa::AccessPatternAttr tableAp, Value index,
                                nisa::AccessPatternAttr indexAp) {
  b.create<nisa::DmaGatherOp>(loc, dst, dstAp, table, tableAp, index, indexAp,
                              IntegerAttr(), DenseI64ArrayAttr(),
                              IntegerAttr());
}

void LoweringContext::dmaScatter(Location loc, Value table,
                                 nisa::AccessPatternAttr tableAp, Value src,
                                 nisa::AccessPatternAttr srcAp, Value index,
                                 nisa::AccessPatternAttr indexAp,
                                 ScatterMode mode) {
  auto flag = [&](bool on) { return on ? b.getUnitAttr() : UnitAttr(); };
  b.create<nisa::DmaScatterOp>(loc, table, tableAp, src, srcAp, index, indexAp,
                               flag(mode == ScatterMode::Accumulate),
                               flag(mode == ScatterMode::Idempotent),
                               IntegerAttr(), DenseI64ArrayAttr(),
                               IntegerAttr());
}
