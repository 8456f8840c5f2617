//===- NisaOps.cpp - nisa instruction verifiers and interface -------------===//
//
// Each check names the hardware rule it enforces; the rule labels refer to
// shared/design/HARDWARE.md and the NKI ISA reference.
//
//===----------------------------------------------------------------------===//
#include "dialects/Nisa/NisaOps.h"

#include "isa/Isa.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace trnc::nisa;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

ElementExtent trnc::nisa::getElementExtent(AccessPatternAttr ap) {
  ElementExtent e{ap.getOffset(), ap.getOffset()};
  for (auto [stride, count] : llvm::zip(ap.getStrides(), ap.getCounts())) {
    int64_t span = stride * (count - 1);
    if (span < 0)
      e.min += span;
    else
      e.max += span;
  }
  return e;
}

TileAccessShape trnc::nisa::getTileAccessShape(TileType tile,
                                               AccessPatternAttr ap) {
  TileAccessShape s;
  s.partitionStart = ap.getOffset() / tile.getFreeSize();
  s.partitions = ap.getCounts()[0];
  s.freeElements = ap.getNumElements() / s.partitions;
  return s;
}

int64_t trnc::nisa::getBufferElements(Type type) {
  if (auto tile = dyn_cast<TileType>(type))
    return tile.getPartitions() * tile.getFreeSize();
  return cast<MemRefType>(type).getNumElements();
}

Engine trnc::nisa::detail::getExecutionEngine(Operation *op) {
  if (auto engine = op->getAttrOfType<EngineAttr>("engine"))
    return engine.getValue();
  if (llvm::isa<DmaCopyOp, DmaGatherOp, DmaScatterOp, CollectiveOp, PeerSignalOp,
          PeerWaitOp>(op))
    return Engine::dma;
  if (llvm::isa<MatmulOp>(op))
    return Engine::tensor;
  return Engine::scalar; // ActivationOp
}

SmallVector<Access, 3> trnc::nisa::detail::getAccesses(Operation *op) {
  SmallVector<Access, 3> accesses;
  unsigned operandIndex = 0;
  for (auto [slot, name] : llvm::enumerate(kAccessPatternNames)) {
    auto ap = op->getAttrOfType<AccessPatternAttr>(name);
    if (!ap)
      continue;
    accesses.push_back({op->getOperand(operandIndex++), ap,
                        /*isWrite=*/slot == 0, unsigned(slot)});
  }
  return accesses;
}

LogicalResult trnc::nisa::shiftAccessOffset(Operation *op,
                                            unsigned operandNumber,
                                            int64_t delta) {
  unsigned operandIndex = 0;
  for (const char *name : kAccessPatternNames) {
    auto ap = op->getAttrOfType<AccessPatternAttr>(name);
    if (!ap)
      continue;
    if (operandIndex++ != operandNumber)
      continue;
    op->setAttr(name, AccessPatternAttr::get(op->getContext(),
                                             ap.getOffset() + delta,
                                             ap.getStrides(), ap.getCounts()));
    return success();
  }
  return op->emitOpError("operand ")
         << operandNumber << " is not read or written through a pattern";
}

/// Checks one operand's pattern against its buffer. Compute engines also
/// obey the start-partition rule.
static LogicalResult verifyAccess(Operation *op, StringRef what, Value buffer,
                                  AccessPatternAttr ap, bool computeEngine) {
  ElementExtent extent = getElementExtent(ap);
  if (extent.min < 0)
    return op->emitOpError() << what << " pattern reaches before the buffer";
  if (auto tile = dyn_cast<TileType>(buffer.getType())) {
    ArrayRef<int64_t> strides = ap.getStrides(), counts = ap.getCounts();
    int64_t free = tile.getFreeSize();
    // ap_partition: the outer dim of an on-chip pattern walks consecutive
    // partitions (no partition stride on chip).
    if (counts[0] > 1 && strides[0] != free)
      return op->emitOpError()
             << what << " outer dim must walk partitions (stride " << free
             << "), got stride " << strides[0];
    TileAccessShape shape = getTileAccessShape(tile, ap);
    if (shape.partitionStart + shape.partitions > tile.getPartitions())
      return op->emitOpError()
             << what << " touches partitions " << shape.partitionStart << ".."
             << shape.partitionStart + shape.partitions - 1 << " of a "
             << tile.getPartitions() << "-partition tile";
    int64_t inner = ap.getOffset() % free;
    for (size_t i = 1; i < counts.size(); ++i) {
      int64_t span = strides[i] * (counts[i] - 1);
      if (span < 0)
        return op->emitOpError() << what << " free strides must be >= 0";
      inner += span;
    }
    if (inner >= free)
      return op->emitOpError() << what << " free pattern reaches element "
                               << inner << " of a partition of " << free;
    if (computeEngine) {
      // start_partition: n > 64 partitions start at 0; 32 < n <= 64 at 0 or
      // 64; n <= 32 at a multiple of 32 (NKI architecture guide).
      int64_t n = shape.partitions, p = shape.partitionStart;
      bool ok = n > 64 ? p == 0 : n > 32 ? (p == 0 || p == 64) : p % 32 == 0;
      if (!ok)
        return op->emitOpError() << what << " of " << n
                                 << " partitions cannot start at partition "
                                 << p;
    }
    return success();
  }
  int64_t size = getBufferElements(buffer.getType());
  if (extent.max >= size)
    return op->emitOpError() << what << " pattern reaches element "
                             << extent.max << " of an HBM buffer of " << size;
  return success();
}

/// Verifies every operand pattern and the sync attributes of an instruction.
static LogicalResult verifyInstruction(Operation *op) {
  auto iface = cast<InstructionOpInterface>(op);
  bool compute = iface.getExecutionEngine() != Engine::dma;
  for (const Access &a : iface.getAccesses()) {
    StringRef what = a.isWrite ? "dst" : "source";
    if (failed(verifyAccess(op, what, a.buffer, a.pattern, compute)))
      return failure();
  }
  if (auto waits = op->getAttrOfType<DenseI64ArrayAttr>("waits")) {
    if (waits.size() % 2 != 0 || waits.size() > 8)
      return op->emitOpError("waits must be at most 4 (semaphore, value) pairs");
    for (size_t i = 0; i < (size_t)waits.size(); i += 2)
      if (waits[i] < 0 || waits[i] >= 32)
        return op->emitOpError("semaphore id ")
               << waits[i] << " out of range 0..31";
  }
  if (auto signal = op->getAttrOfType<IntegerAttr>("signal"))
    if (signal.getInt() < 0 || signal.getInt() >= 32)
      return op->emitOpError("signal semaphore id ")
             << signal.getInt() << " out of range 0..31";
  return success();
}

static TileAccessShape shapeOf(Value v, AccessPatternAttr ap) {
  return getTileAccessShape(cast<TileType>(v.getType()), ap);
}

/// Elementwise instructions walk the same partitions and free element count.
static LogicalResult verifySameShape(Operation *op, Value a,
                                     AccessPatternAttr apA, Value b,
                                     AccessPatternAttr apB) {
  TileAccessShape x = shapeOf(a, apA), y = shapeOf(b, apB);
  if (x.partitions != y.partitions || x.freeElements != y.freeElements)
    return op->emitOpError("operands differ in shape: ")
           << x.partitions << "x" << x.freeElements << " vs " << y.partitions
           << "x" << y.freeElements;
  return success();
}

static LogicalResult verifyEngine(Operation *op, Engine engine,
                                  ArrayRef<Engine> allowed) {
  if (!llvm::is_contained(allowed, engine))
    return op->emitOpError("cannot run on the ")
           << stringifyEngine(engine) << " engine";
  return success();
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

LogicalResult AllocOp::verify() {
  auto tile = cast<TileType>(getType());
  // The module's target sets the partition's size (SBUF: 192 KiB on trn1,
  // 224 KiB on trn2, 256 KiB on trn3).
  const MachineModel &model = targetModelOf(*this);
  bool psum = tile.getSpace() == MemorySpace::psum;
  int64_t limit = psum ? model.psumPartitionBytes : model.sbufPartitionBytes;
  if (tile.getPartitionBytes() > limit)
    return emitOpError("tile needs ")
           << tile.getPartitionBytes() << " bytes per partition, more than "
           << (psum ? "PSUM" : "SBUF") << "'s " << limit << " on "
           << model.name;
  if (std::optional<int64_t> addr = getAddress()) {
    if (*addr < 0 || *addr + tile.getPartitionBytes() > limit)
      return emitOpError("address ") << *addr << " + "
                                     << tile.getPartitionBytes()
                                     << " bytes exceeds the partition ("
                                     << limit << " bytes on " << model.name
                                     << ")";
  }
  return success();
}

LogicalResult DramAllocOp::verify() {
  // The artifact aligns every scratch region to 64 bytes (Artifact.cpp).
  if (std::optional<int64_t> offset = getOffset();
      offset && (*offset < 0 || *offset % int64_t(isa::kScratchAlignment) != 0))
    return emitOpError("offset ")
           << *offset << " is not a non-negative multiple of "
           << isa::kScratchAlignment << " bytes";
  return success();
}

LogicalResult HbmWindowOp::verify() {
  if (getStep() == 0)
    return emitOpError("step must be non-zero (a window that never moves is "
                       "its source)");
  if (getPeriod() && static_cast<int64_t>(*getPeriod()) < 2)
    return emitOpError("period must be at least 2");
  if (getPhase() && (!getPeriod() || static_cast<int64_t>(*getPhase()) < 0))
    return emitOpError("phase needs a period and must be non-negative");
  return success();
}

int64_t trnc::nisa::windowOffset(int64_t index, int64_t step, int64_t period,
                                 int64_t phase) {
  if (!period)
    return index * step;
  int64_t wrapped = ((index + phase) % period + period) % period;
  return (wrapped - phase) * step;
}

int64_t HbmWindowOp::offsetAt(int64_t index) {
  return windowOffset(index, static_cast<int64_t>(getStep()),
                      static_cast<int64_t>(getPeriod().value_or(0)),
                      static_cast<int64_t>(getPhase().value_or(0)));
}

OpFoldResult HbmWindowOp::fold(FoldAdaptor adaptor) {
  // A window at a constant index that does not move its source is the
  // source (iteration 0 of a loop of one trip, inlined).
  if (auto index = dyn_cast_or_null<IntegerAttr>(adaptor.getIndex()))
    if (offsetAt(index.getInt()) == 0)
      return getSource();
  return {};
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

LogicalResult DmaCopyOp::verify() {
  if (failed(verifyInstruction(*this)))
    return failure();
  // dma_elems: a DMA moves the same number of elements it reads.
  if (getDstAp().getNumElements() != getSrc0Ap().getNumElements())
    return emitOpError("dst has ")
           << getDstAp().getNumElements() << " elements but source has "
           << getSrc0Ap().getNumElements();
  if (getQueue() && (*getQueue() < 0 || *getQueue() >= 16))
    return emitOpError("DMA queue must be in 0..15 (16 queues per engine)");
  // dma_i64: engines hold no int64; an i64 HBM side pairs with i32 (Isa.h
  // DType).
  auto elt = [](Value v) {
    if (auto t = dyn_cast<TileType>(v.getType()))
      return t.getElementType();
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Type d = elt(getDst()), s = elt(getSrc0());
  if ((d.isInteger(64) && !s.isInteger(32) && !s.isInteger(64)) ||
      (s.isInteger(64) && !d.isInteger(32) && !d.isInteger(64)))
    return emitOpError("an i64 side needs i32 on the other side");
  return success();
}

/// dma_indirect (Isa.h DmaIndirect), shared by dma_gather and dma_scatter:
/// `chip` is an SBUF tile of P partitions x one row, `table` an HBM pattern
/// of N rows (all of them inside the buffer: verifyAccess), `index` an SBUF
/// i32 tile [P, 1]; no i64 side (only dma_copy narrows int64).
static LogicalResult verifyIndirect(Operation *op, Value chip,
                                    AccessPatternAttr chipAp,
                                    AccessPatternAttr tableAp, Value index,
                                    AccessPatternAttr indexAp, int64_t queue) {
  if (failed(verifyInstruction(op)))
    return failure();
  if (queue < 0 || queue >= 16)
    return op->emitOpError("DMA queue must be in 0..15 (16 queues per engine)");
  auto chipTile = cast<TileType>(chip.getType());
  auto indexTile = cast<TileType>(index.getType());
  if (chipTile.getSpace() != MemorySpace::sbuf)
    return op->emitOpError("the row tile must be in SBUF");
  if (indexTile.getSpace() != MemorySpace::sbuf ||
      !indexTile.getElementType().isInteger(32))
    return op->emitOpError("index must be an SBUF i32 tile");
  TileAccessShape rows = shapeOf(chip, chipAp), idx = shapeOf(index, indexAp);
  if (idx.partitions != rows.partitions || idx.freeElements != 1)
    return op->emitOpError("index must be [")
           << rows.partitions << ", 1] (one per row), not [" << idx.partitions
           << ", " << idx.freeElements << "]";
  int64_t rowElements = tableAp.getNumElements() / tableAp.getCounts()[0];
  if (rowElements != rows.freeElements)
    return op->emitOpError("a table row has ")
           << rowElements << " elements but the tile has "
           << rows.freeElements << " per partition";
  for (Value v : op->getOperands()) {
    auto tile = dyn_cast<TileType>(v.getType());
    Type elt = tile ? tile.getElementType()
                    : cast<MemRefType>(v.getType()).getElementType();
    if (elt.isInteger(64))
      return op->emitOpError("i64 rows are not supported (narrow with dma_copy)");
  }
  return success();
}

/// HBM elements [offset, offset + n) walked in order by `ap`.
static bool isContiguousRun(AccessPatternAttr ap) {
  ArrayRef<int64_t> strides = ap.getStrides(), counts = ap.getCounts();
  int64_t run = 1;
  for (int d = int(counts.size()) - 1; d >= 0; --d) {
    if (counts[d] == 1)
      continue;
    if (strides[d] != run)
      return false;
    run *= counts[d];
  }
  return true;
}

LogicalResult CollectiveOp::verify() {
  if (failed(verifyInstruction(*this)))
    return failure();
  // collective_contiguous: the host moves plain bytes (Isa.h Collective).
  if (!isContiguousRun(getDstAp()) || !isContiguousRun(getSrc0Ap()))
    return emitOpError("dst and src0 must each be one contiguous HBM run");
  if (getDst().getType().getElementType() !=
      getSrc0().getType().getElementType())
    return emitOpError("dst and src0 element types differ");
  if (getGroupSize() < 1 || getId() < 0)
    return emitOpError("group size must be >= 1 and id >= 0");
  bool reduces = getKind() == CollectiveKind::all_reduce ||
                 getKind() == CollectiveKind::reduce_scatter;
  if (reduces != (getReduce() != ReduceOp::none))
    return emitOpError(reduces ? "needs a reduce op" : "takes no reduce op");
  // collective_elems: counts follow the kind.
  int64_t nd = getDstAp().getNumElements(), ns = getSrc0Ap().getNumElements();
  int64_t g = getGroupSize();
  bool ok = getKind() == CollectiveKind::all_gather       ? nd == ns * g
            : getKind() == CollectiveKind::reduce_scatter ? ns == nd * g
                                                          : nd == ns;
  if (!ok)
    return emitOpError("dst has ")
           << nd << " elements and src0 " << ns << ", which "
           << stringifyCollectiveKind(getKind()) << " over " << g
           << " ranks does not give";
  if (getQueue() != 15)
    return emitOpError("collectives run on DMA queue 15 (Isa.h kCollectiveQueue)");
  return success();
}

LogicalResult DmaGatherOp::verify() {
  return verifyIndirect(*this, getDst(), getDstAp(), getSrc0Ap(), getSrc1(),
                        getSrc1Ap(), getQueue().value_or(0));
}

LogicalResult DmaScatterOp::verify() {
  if (getIdempotent() && getAccumulate())
    return emitOpError("an accumulating scatter cannot be idempotent: its "
                       "duplicates add, they do not write equal rows");
  return verifyIndirect(*this, getSrc0(), getSrc0Ap(), getDstAp(), getSrc1(),
                        getSrc1Ap(), getQueue().value_or(0));
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyInstruction(*this)))
    return failure();
  auto dst = cast<TileType>(getDst().getType());
  auto stat = cast<TileType>(getSrc0().getType());
  auto mov = cast<TileType>(getSrc1().getType());
  // matmul_psum: the Tensor Engine writes fp32 into PSUM.
  if (dst.getSpace() != MemorySpace::psum || !dst.getElementType().isF32())
    return emitOpError("dst must be an f32 PSUM tile");
  if (stat.getSpace() != MemorySpace::sbuf ||
      mov.getSpace() != MemorySpace::sbuf)
    return emitOpError("stationary and moving operands must be in SBUF");
  TileAccessShape s = shapeOf(getSrc0(), getSrc0Ap()),
                  m = shapeOf(getSrc1(), getSrc1Ap()),
                  d = shapeOf(getDst(), getDstAp());
  // matmul_k: contraction over <= 128 partitions of both inputs.
  if (s.partitions != m.partitions)
    return emitOpError("contraction differs: stationary has K = ")
           << s.partitions << ", moving has K = " << m.partitions;
  // matmul_m: stationary free size <= the array's columns (128).
  const MachineModel &model = targetModelOf(*this);
  if (s.freeElements > model.tensorArrayCols)
    return emitOpError("stationary free size ")
           << s.freeElements << " exceeds " << model.tensorArrayCols;
  // matmul_n: moving free size <= one PSUM bank of fp32 (512).
  int64_t bankElements = model.psumBankBytes / 4;
  if (m.freeElements > bankElements)
    return emitOpError("moving free size ") << m.freeElements << " exceeds "
                                            << bankElements;
  if (d.partitions != s.freeElements || d.freeElements != m.freeElements)
    return emitOpError("dst must be [")
           << s.freeElements << " partitions, " << m.freeElements
           << " elements], got [" << d.partitions << ", " << d.freeElements
           << "]";
  if (getTranspose() && m.freeElements != m.partitions)
    return emitOpError("transpose: the moving operand must be a [K, K] "
                       "identity, got K = ")
           << m.partitions << ", N = " << m.freeElements;
  if (getTranspose() && getAccumulate())
    return emitOpError("transpose cannot accumulate");
  return success();
}

/// An optional operand holding one value per partition of dst (activation's
/// bias, tensor_scalar's per-partition operand): a [P, 1] access.
template <typename OpTy>
static LogicalResult verifyPerPartition(OpTy op, Value src,
                                        std::optional<AccessPatternAttr> ap,
                                        StringRef what) {
  if (!src)
    return success();
  if (!ap)
    return op.emitOpError(what) << " needs an access pattern";
  TileAccessShape s = shapeOf(src, *ap), d = shapeOf(op.getDst(), op.getDstAp());
  if (s.partitions != d.partitions || s.freeElements != 1)
    return op.emitOpError(what) << " must be [" << d.partitions << ", 1]";
  return success();
}

LogicalResult ActivationOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifySameShape(*this, getDst(), getDstAp(), getSrc0(),
                             getSrc0Ap())))
    return failure();
  // act_bias: the bias is one value per partition.
  return verifyPerPartition(*this, getSrc1(), getSrc1Ap(), "bias operand");
}

/// Two-source elementwise instructions (tensor_tensor, copy_predicated):
/// Vector/GpSimd, sources shaped like dst, and (tt_psum) not both sources in
/// PSUM.
template <typename OpTy>
static LogicalResult verifyTwoSourceElementwise(OpTy op) {
  if (failed(verifyInstruction(op)) ||
      failed(verifyEngine(op, op.getEngine(), {Engine::vector, Engine::gpsimd})) ||
      failed(verifySameShape(op, op.getDst(), op.getDstAp(), op.getSrc0(),
                             op.getSrc0Ap())) ||
      failed(verifySameShape(op, op.getDst(), op.getDstAp(), op.getSrc1(),
                             op.getSrc1Ap())))
    return failure();
  if (cast<TileType>(op.getSrc0().getType()).getSpace() == MemorySpace::psum &&
      cast<TileType>(op.getSrc1().getType()).getSpace() == MemorySpace::psum)
    return op.emitOpError("both inputs in PSUM");
  return success();
}

LogicalResult TensorTensorOp::verify() {
  return verifyTwoSourceElementwise(*this);
}

LogicalResult TensorScalarOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyEngine(*this, getEngine(),
                          {Engine::vector, Engine::scalar, Engine::gpsimd})) ||
      failed(verifySameShape(*this, getDst(), getDstAp(), getSrc0(),
                             getSrc0Ap())))
    return failure();
  if (failed(verifyPerPartition(*this, getSrc1(), getSrc1Ap(),
                                "per-partition operand")) ||
      failed(verifyPerPartition(*this, getSrc2(), getSrc2Ap(),
                                "per-partition operand1")))
    return failure();
  if (getSrc2() && getOp1() == AluOp::bypass)
    return emitOpError("per-partition operand1 with op1 bypass");
  return success();
}

LogicalResult TensorReduceOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyEngine(*this, getEngine(), {Engine::vector})))
    return failure();
  TileAccessShape d = shapeOf(getDst(), getDstAp()),
                  s = shapeOf(getSrc0(), getSrc0Ap());
  int64_t inner = getSrc0Ap().getCounts().back();
  if (getSrc0Ap().getRank() < 2)
    return emitOpError("source needs a free dim to reduce");
  if (d.partitions != s.partitions || d.freeElements * inner != s.freeElements)
    return emitOpError("dst must keep the partitions and outer free dims "
                       "of the source");
  return success();
}

/// tensor_scan (Isa.h TensorScan): Vector only, an associative ALU op,
/// dst shaped like src0.
LogicalResult TensorScanOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyEngine(*this, getEngine(), {Engine::vector})))
    return failure();
  AluOp op = getOp();
  if (op != AluOp::add && op != AluOp::multiply && op != AluOp::max &&
      op != AluOp::min)
    return emitOpError("scans with add, multiply, max or min, not ")
           << stringifyAluOp(op);
  return verifySameShape(*this, getDst(), getDstAp(), getSrc0(), getSrc0Ap());
}

LogicalResult TensorCopyOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyEngine(*this, getEngine(),
                          {Engine::vector, Engine::scalar, Engine::gpsimd})))
    return failure();
  return verifySameShape(*this, getDst(), getDstAp(), getSrc0(), getSrc0Ap());
}

/// copy_predicated (Isa.h CopyPredicated): the same rules as tensor_tensor.
LogicalResult CopyPredicatedOp::verify() {
  return verifyTwoSourceElementwise(*this);
}

LogicalResult MemsetOp::verify() {
  if (failed(verifyInstruction(*this)))
    return failure();
  return verifyEngine(*this, getEngine(), {Engine::vector, Engine::gpsimd});
}

/// iota (Isa.h Iota): GpSimd only (HARDWARE.md "Instructions").
LogicalResult IotaOp::verify() {
  if (failed(verifyInstruction(*this)))
    return failure();
  return verifyEngine(*this, getEngine(), {Engine::gpsimd});
}

/// random (Isa.h Random): GpSimd only; a floating dst; the seed an i32 tile
/// of two words on each of dst's partitions; the counter base fits the
/// instruction's two 24-bit immediates (Isa.h).
LogicalResult RandomOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyEngine(*this, getEngine(), {Engine::gpsimd})))
    return failure();
  Type elt = cast<TileType>(getDst().getType()).getElementType();
  if (!elt.isF32() && !elt.isBF16() && !elt.isF16())
    return emitOpError("dst must be f32, bf16 or f16, not ") << elt;
  if (!cast<TileType>(getSrc0().getType()).getElementType().isInteger(32))
    return emitOpError("seed must be an i32 tile");
  TileAccessShape d = shapeOf(getDst(), getDstAp()),
                  s = shapeOf(getSrc0(), getSrc0Ap());
  if (s.partitions != d.partitions || s.freeElements != 2)
    return emitOpError("seed must be [") << d.partitions << ", 2], not ["
                                         << s.partitions << ", "
                                         << s.freeElements << "]";
  if (getCounterBase() < 0 || getCounterBase() >= (int64_t(1) << 48))
    return emitOpError("counter base must be in [0, 2^48)");
  return success();
}

/// affine_select (Isa.h AffineSelect): GpSimd only, a comparison, dst shaped
/// like src0.
LogicalResult AffineSelectOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyEngine(*this, getEngine(), {Engine::gpsimd})))
    return failure();
  AluOp op = getOp();
  if (op != AluOp::is_equal && op != AluOp::not_equal && op != AluOp::is_gt &&
      op != AluOp::is_ge && op != AluOp::is_lt && op != AluOp::is_le)
    return emitOpError("predicate must be a comparison, not ")
           << stringifyAluOp(op);
  return verifySameShape(*this, getDst(), getDstAp(), getSrc0(), getSrc0Ap());
}

LogicalResult NopOp::verify() {
  if (failed(verifyInstruction(*this)))
    return failure();
  // nop_signal: a wait-only nop signals nothing, so the semaphore counts of
  // the scheduling scheme (Isa.h) stay instruction positions.
  if (getSignal())
    return emitOpError("a wait-only nop does not signal");
  return success();
}

/// barrier_semaphore: cross-core barriers use ids 21..31 (isa/Isa.h
/// kFirstBarrierSemaphore; 32 semaphores, as verifyInstruction checks).
static LogicalResult verifyBarrierSemaphore(Operation *op, int64_t semaphore) {
  if (semaphore < 21 || semaphore >= 32)
    return op->emitOpError("semaphore ")
           << semaphore << " is not a barrier semaphore (21..31)";
  return success();
}

LogicalResult PeerSignalOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyBarrierSemaphore(*this, getSemaphore())))
    return failure();
  // It raises the peer's copy of its barrier semaphore and nothing else.
  if (getSignal() && *getSignal() != uint64_t(getSemaphore()))
    return emitOpError("signals semaphore ")
           << *getSignal() << ", not its barrier semaphore " << getSemaphore();
  return success();
}

LogicalResult PeerWaitOp::verify() {
  if (failed(verifyInstruction(*this)) ||
      failed(verifyBarrierSemaphore(*this, getSemaphore())))
    return failure();
  if (getCount() < 1)
    return emitOpError("count must be at least 1, got ") << getCount();
  if (getSignal())
    return emitOpError("a barrier's wait does not signal");
  return success();
}

#include "dialects/Nisa/NisaInterfaces.cpp.inc"
#define GET_OP_CLASSES
#include "dialects/Nisa/NisaOps.cpp.inc"

SmallVector<Engine, 3> trnc::nisa::equivalentEngines(Operation *op) {
  bool inPsum = llvm::any_of(op->getOperands(), [](Value v) {
    auto tile = dyn_cast<TileType>(v.getType());
    return tile && tile.getSpace() == MemorySpace::psum;
  });
  auto scalarAlu = [](AluOp a) {
    return a == AluOp::bypass || a == AluOp::add || a == AluOp::multiply;
  };
  SmallVector<Engine, 3> engines;
  if (llvm::isa<TensorCopyOp>(op)) {
    engines = {Engine::vector, Engine::scalar};
  } else if (llvm::isa<MemsetOp, TensorTensorOp>(op)) {
    engines = {Engine::vector};
  } else if (auto ts = dyn_cast<TensorScalarOp>(op)) {
    engines = {Engine::vector};
    // A per-partition operand (a row group's x * rstd) stays off Scalar,
    // although the ISA allows it there: Scalar evacuates PSUM and runs the
    // exps, and the engine balance and list scheduler see too little ahead
    // to keep it free (measured on the bf16 GPT step: forward 7.02 ms with
    // this rule, 7.70 ms without).
    if (scalarAlu(ts.getOp0()) && scalarAlu(ts.getOp1()) &&
        !ts.getReverse0() && !ts.getReverse1() && !ts.getSrc1() &&
        !ts.getSrc2())
      engines.push_back(Engine::scalar);
  } else {
    return {};
  }
  if (!inPsum)
    engines.push_back(Engine::gpsimd);
  return engines;
}
