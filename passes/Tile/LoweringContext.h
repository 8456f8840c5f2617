//===- LoweringContext.h - state shared by the trn -> nisa lowerings -*- C++ -*-===//
//
// One LoweringContext per function: the builder positioned in the new
// destination-passing body, the HBM view of every lowered trn value, where
// function results must be written, and the target's tile limits. The
// emit* helpers build one nisa instruction each with the operands every
// lowering needs, so the category files (elementwise, matmul, reduction)
// read as loops over tiles.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/Nisa/NisaOps.h"
#include "machine/MachineModel.h"
#include "passes/Tile/HbmView.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace trnc::tile {

struct LoweringContext {
  LoweringContext(mlir::OpBuilder &builder, MachineModel machine)
      : b(builder), machine(std::move(machine)) {}

  mlir::OpBuilder &b;
  MachineModel machine;
  /// Logical-core degree: each rank of a collective is a logical core of
  /// `lnc` physical cores (MachineModel::chipOfRank).
  unsigned lnc = 1;
  /// The HBM view of every lowered tensor value.
  llvm::DenseMap<mlir::Value, HbmView> views;
  /// Function results written straight into their output buffer.
  llvm::DenseMap<mlir::Value, HbmView> resultDest;
  /// The identity tiles built so far (one per element type; identity()).
  llvm::DenseMap<mlir::Type, mlir::Value> identities;
  /// The next fusion group's id for the engine marks (EngineBalance.h).
  int64_t nextEngineGroup = 0;
  /// The next stream id of copies that alternate engines (copyAlternating).
  int64_t nextCopyStream = 0;

  // --- Limits ---------------------------------------------------------------
  int64_t partitions() const { return machine.numPartitions; }
  /// Bytes per partition one working tile may take: small enough that a
  /// few tiles per op plus double buffering fit SBUF (8 KiB = 2048 f32).
  int64_t tileBytes() const {
    return std::min<int64_t>(8 * 1024, machine.sbufPartitionBytes / 16);
  }
  /// Free elements per tile for the widest element type involved.
  int64_t maxFree(llvm::ArrayRef<mlir::Type> types) const;

  /// Whether `v` has an HBM view, deriving it (and those of the view ops it
  /// is built from: transpose, broadcast, slice, reshape where strides
  /// allow) when its source has one: views cost no instruction, so a group
  /// may read a view whose op comes later in program order.
  bool resolveView(mlir::Value v);

  // --- Buffers --------------------------------------------------------------
  /// A fresh contiguous HBM scratch tensor of `type`'s shape.
  HbmView allocScratch(mlir::Location loc, mlir::RankedTensorType type);
  /// Where the op producing `result` writes it: its output buffer when the
  /// value is a function result written in place, else fresh scratch.
  HbmView destination(mlir::Location loc, mlir::Value result);
  /// A fresh on-chip tile (no address: the allocation pass places it). An
  /// i64 element type gives an i32 tile (no int64 on chip).
  mlir::Value allocTile(mlir::Location loc, nisa::MemorySpace space,
                        int64_t parts, int64_t free, mlir::Type elt);
  mlir::Value allocSbuf(mlir::Location loc, int64_t parts, int64_t free,
                        mlir::Type elt) {
    return allocTile(loc, nisa::MemorySpace::sbuf, parts, free, elt);
  }

  /// A [partitions, partitions] SBUF identity of `elt` (the moving operand
  /// of Tensor Engine transposes), built the first time a function asks:
  /// a GpSimd memset of ones and an affine_select keeping the diagonal. The
  /// function body is one straight-line block, so it dominates later uses.
  mlir::Value identity(mlir::Location loc, mlir::Type elt);

  // --- Patterns ---------------------------------------------------------------
  nisa::AccessPatternAttr ap(int64_t offset, llvm::ArrayRef<int64_t> strides,
                             llvm::ArrayRef<int64_t> counts);
  /// [parts, free] from partition 0 of a tile: the whole tile when it has
  /// that shape, a leading window otherwise.
  nisa::AccessPatternAttr tileAp(mlir::Value tile, int64_t parts,
                                 int64_t free);
  nisa::AccessPatternAttr tileAp(mlir::Value tile);

  // --- Instructions -------------------------------------------------------
  void dma(mlir::Location loc, mlir::Value dst, nisa::AccessPatternAttr dstAp,
           mlir::Value src, nisa::AccessPatternAttr srcAp);
  /// HBM `srcAp` of `src` -> the whole of a fresh tile `dst` ([P, free],
  /// row-major). A source whose innermost dim skips elements (a stride of 2
  /// to 4: pooling windows, strided slices) makes one DMA descriptor per
  /// element; when the DMA estimate (MatmulBlocking.h) says so, its span is
  /// read densely instead (runs of the dim's extent, up to 4x the bytes)
  /// and compacted into `dst` by one strided Vector copy.
  void load(mlir::Location loc, mlir::Value dst, mlir::Value src,
            nisa::AccessPatternAttr srcAp);
  void matmul(mlir::Location loc, mlir::Value psum,
              nisa::AccessPatternAttr psumAp, mlir::Value stationary,
              nisa::AccessPatternAttr statAp, mlir::Value moving,
              nisa::AccessPatternAttr movAp, bool accumulate,
              bool transpose = false);
  /// dst = func(src * scale + bias) on the Scalar engine.
  void activation(mlir::Location loc, nisa::ActFunc func, mlir::Value dst,
                  nisa::AccessPatternAttr dstAp, mlir::Value src,
                  nisa::AccessPatternAttr srcAp, double scale = 1.0,
                  double bias = 0.0);
  /// dst = func(src * scale + bias[p]) on the Scalar engine, `bias` an fp32
  /// [P, 1] tile (one value per partition: a row max, a logsumexp).
  void activation(mlir::Location loc, nisa::ActFunc func, mlir::Value dst,
                  nisa::AccessPatternAttr dstAp, mlir::Value src,
                  nisa::AccessPatternAttr srcAp, mlir::Value bias,
                  double scale = 1.0);
  /// dst = pred != 0 ? src : dst on the Vector engine (where); dst must be
  /// written before on the Vector engine.
  void copyPredicated(mlir::Location loc, mlir::Value dst,
                      nisa::AccessPatternAttr dstAp, mlir::Value pred,
                      nisa::AccessPatternAttr predAp, mlir::Value src,
                      nisa::AccessPatternAttr srcAp);
  /// dst = cast(src) on the Vector engine.
  void copyOnVector(mlir::Location loc, mlir::Value dst,
                    nisa::AccessPatternAttr dstAp, mlir::Value src,
                    nisa::AccessPatternAttr srcAp);
  void tensorTensor(mlir::Location loc, nisa::AluOp op, mlir::Value dst,
                    nisa::AccessPatternAttr dstAp, mlir::Value a,
                    nisa::AccessPatternAttr aAp, mlir::Value b,
                    nisa::AccessPatternAttr bAp);
  void tensorScalar(mlir::Location loc, mlir::Value dst,
                    nisa::AccessPatternAttr dstAp, mlir::Value src,
                    nisa::AccessPatternAttr srcAp, nisa::AluOp op0,
                    double imm0, nisa::AluOp op1 = nisa::AluOp::bypass,
                    double imm1 = 0.0);
  void tensorReduce(mlir::Location loc, nisa::AluOp op, mlir::Value dst,
                    nisa::AccessPatternAttr dstAp, mlir::Value src,
                    nisa::AccessPatternAttr srcAp);
  /// PSUM -> SBUF, Scalar and Vector taking turns with the other copies of
  /// `stream` (a matmul's or an attention's, from nextCopyStream): marked
  /// for the `unroll` phase, which chooses once the loops are unrolled
  /// (EngineBalance.h, kEngineAlternateAttr).
  void copyAlternating(mlir::Location loc, mlir::Value dst,
                       nisa::AccessPatternAttr dstAp, mlir::Value src,
                       nisa::AccessPatternAttr srcAp, int64_t stream);
  /// PSUM -> SBUF (or any cast) on the Scalar engine, leaving Vector free.
  void copyOnScalar(mlir::Location loc, mlir::Value dst,
                    nisa::AccessPatternAttr dstAp, mlir::Value src,
                    nisa::AccessPatternAttr srcAp);
  void memset(mlir::Location loc, mlir::Value dst,
              nisa::AccessPatternAttr dstAp, double value,
              nisa::Engine engine = nisa::Engine::gpsimd);
  /// dst partition p = HBM table row index[p] (zeros out of range).
  void dmaGather(mlir::Location loc, mlir::Value dst,
                 nisa::AccessPatternAttr dstAp, mlir::Value table,
                 nisa::AccessPatternAttr tableAp, mlir::Value index,
                 nisa::AccessPatternAttr indexAp);
  /// How a scatter writes its rows (nisa.dma_scatter).
  enum class ScatterMode {
    Store,      ///< row = src (last writer wins)
    Accumulate, ///< row += src
    /// row = src, where every idempotent scatter writes equal bytes to a
    /// row: unordered among themselves.
    Idempotent,
  };
  /// HBM table row index[p] = (or += ) src partition p, as `mode` says.
  void dmaScatter(mlir::Location loc, mlir::Value table,
                  nisa::AccessPatternAttr tableAp, mlir::Value src,
                  nisa::AccessPatternAttr srcAp, mlir::Value index,
                  nisa::AccessPatternAttr indexAp, ScatterMode mode);
};

/// Copies `src` into `dst`: HBM to HBM in tile-sized transfers, or, for a
/// cast (element types differ), a source broadcast along a dim or int64,
/// tile by tile through SBUF. Used to materialise views and to fill outputs.
void emitCopy(LoweringContext &ctx, mlir::Location loc, const HbmView &dst,
              const HbmView &src);

/// Category lowerings; each emits an error on the op when it cannot lower.
///
/// An op whose result every reader takes as an immediate (a `trn.full`, or a
/// cast or view of one, read as the constant of tensor_scalar): nothing to
/// compute or store.
bool isImmediateOnly(mlir::Operation *op);
/// Lowers such a group as one loop over tiles: only results read outside
/// the group are stored.
mlir::LogicalResult lowerElementwiseGroup(LoweringContext &ctx,
                                          llvm::ArrayRef<mlir::Operation *> ops);
/// The trn ops lowerElementwise handles (the list lives with it).
bool isElementwiseOp(mlir::Operation *op);
/// The op's result is a view of its operand (transpose, broadcast, slice,
/// reshape: no instruction, only strides; LoweringContext.cpp).
bool isViewOp(mlir::Operation *op);
struct MatmulEpilogue;
/// trn.matmul on the Tensor Engine (LowerMatmul.cpp), with the elementwise
/// ops of `epilogue` (MatmulEpilogue.h) computed on its output tiles.
mlir::LogicalResult lowerMatmul(LoweringContext &ctx, mlir::Operation *op,
                                const MatmulEpilogue *epilogue = nullptr);
/// trn.conv2d as implicit GEMM (LowerConv.cpp).
mlir::LogicalResult lowerConv2d(LoweringContext &ctx, mlir::Operation *op);
/// trn.reduce_{sum,max,min,prod} (LowerReduction.cpp).
mlir::LogicalResult lowerReduce(LoweringContext &ctx, mlir::Operation *op);
/// trn.softmax, fused per row (LowerSoftmax.cpp), for rows of up to
/// maxSoftmaxRow elements (one row on chip at once).
mlir::LogicalResult lowerSoftmax(LoweringContext &ctx, mlir::Operation *op);
int64_t maxSoftmaxRow(const MachineModel &machine);
/// trn.attention / trn.attention_grad as one group each (LowerAttention.cpp).
mlir::LogicalResult lowerAttention(LoweringContext &ctx, mlir::Operation *op);
/// trn.cumsum / trn.cumprod via tensor_scan (LowerScan.cpp).
mlir::LogicalResult lowerScan(LoweringContext &ctx, mlir::Operation *op);
/// trn.concat: one tiled copy per input into its window (LowerDataMovement).
mlir::LogicalResult lowerConcat(LoweringContext &ctx, mlir::Operation *op);
/// trn.gather_rows / trn.scatter_rows via dma_indirect (LowerIndirect.cpp).
mlir::LogicalResult lowerIndirect(LoweringContext &ctx, mlir::Operation *op);
/// trn.collective: one collective instruction (LowerCollective.cpp).
mlir::LogicalResult lowerCollective(LoweringContext &ctx, mlir::Operation *op);
/// trn.random: GpSimd random keyed by the seed input (LowerRandom.cpp).
mlir::LogicalResult lowerRandom(LoweringContext &ctx, mlir::Operation *op);
/// trn.iota / trn.triangle: GpSimd iota / affine_select (LowerIndexPatterns).
/// trn.nki_kernel: the kernel's instructions spliced in (LowerKernel.cpp).
mlir::LogicalResult lowerNkiKernel(LoweringContext &ctx, mlir::Operation *op);
mlir::LogicalResult lowerIndexPattern(LoweringContext &ctx,
                                      mlir::Operation *op);

} // namespace trnc::tile
