//===- NisaCanonicalize.cpp - canonicalization patterns of nisa ops -------===//
//
// tensor_scalar pairs. An fp32 tile written by a one-operator tensor_scalar A
// and read next, whole, by a one-operator tensor_scalar B is one
// two-operator instruction at B: dst = (x op0 a) op1 b, each operand an
// immediate or a per-partition [P, 1] tile (src1 for a, src2 for b).
// nki.isa.tensor_scalar applies two operators for the cost of one, so a
// layer norm's (x - mean) * rstd costs one pass over the row instead of two.
// The engines compute in fp32, so with A's result in an fp32 tile the value
// is the same. The lowerings fold chains of immediates themselves
// (ElementwiseSteps.h foldSteps); this pattern takes the pairs whose
// operands are per-partition tiles, and any pair two lowerings emit back to
// back.
//
//===----------------------------------------------------------------------===//
#include "dialects/Nisa/NisaOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace trnc::nisa;

namespace {

/// Whether `user` (an op using a tile) lies, through its ancestor in
/// `block`, strictly between `a` and `b`, or after `b`.
enum class Place { before, between, after, elsewhere };
Place placeOf(Block *block, Operation *user, Operation *a, Operation *b) {
  Operation *anc = block->findAncestorOpInBlock(*user);
  if (!anc)
    return Place::elsewhere;
  if (anc == a || anc->isBeforeInBlock(a))
    return Place::before;
  if (anc == b || b->isBeforeInBlock(anc))
    return Place::after;
  return Place::between;
}

struct FoldTensorScalarPair : OpRewritePattern<TensorScalarOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TensorScalarOp b,
                                PatternRewriter &rewriter) const override {
    Value t = b.getSrc0();
    // B's per-partition operand read from T too would read what A wrote.
    if (b.getOp1() != AluOp::bypass || b.getWaits() || b.getSignal() ||
        b.getSrc1() == t)
      return failure();
    auto tile = dyn_cast<TileType>(t.getType());
    if (!tile || !tile.getElementType().isF32())
      return failure();
    // A: the last op of the block before B that touches T (through T's
    // users, not a scan of the block: this runs for every tensor_scalar).
    Block *block = b->getBlock();
    Operation *last = nullptr;
    for (Operation *user : t.getUsers()) {
      Operation *anc = block->findAncestorOpInBlock(*user);
      if (anc && anc->isBeforeInBlock(b) &&
          (!last || last->isBeforeInBlock(anc)))
        last = anc;
    }
    auto a = dyn_cast_or_null<TensorScalarOp>(last);
    // A in place (x = x - mean) leaves x in T once it is gone: the merged
    // instruction reads it there.
    if (!a || a.getDst() != t || a.getDstAp() != b.getSrc0Ap() ||
        (a.getSrc0() == t && a.getSrc0Ap() != a.getDstAp()) ||
        a.getOp1() != AluOp::bypass ||
        a.getWaits() || a.getSignal() ||
        a->getDiscardableAttrDictionary() != b->getDiscardableAttrDictionary())
      return failure();
    // After B, T must hold B's result (B writes all of it in place) or be
    // read by nobody; A's sources must not change between A and B, where
    // the merged instruction reads them.
    bool inPlace = b.getDst() == t && b.getDstAp() == a.getDstAp();
    if (!inPlace && !t.getDefiningOp<AllocOp>())
      return failure(); // a tile the function's caller could read after
    for (Operation *user : t.getUsers())
      if (user != a && user != b &&
          placeOf(block, user, a, b) ==
              (inPlace ? Place::between : Place::after))
        return failure();
    for (Value src : {a.getSrc0(), a.getSrc1()})
      if (src && src != t && llvm::any_of(src.getUsers(), [&](Operation *user) {
            return placeOf(block, user, a, b) == Place::between;
          }))
        return failure();
    auto merged = rewriter.create<TensorScalarOp>(
        b.getLoc(), b.getDst(), b.getDstAp(), a.getSrc0(), a.getSrc0Ap(),
        a.getOp0Attr(), a.getImm0Attr(), b.getOp0Attr(), b.getImm0Attr(),
        a.getReverse0Attr(), b.getReverse0Attr(), b.getEngineAttr(),
        a.getSrc1(), a.getSrc1ApAttr(), b.getSrc1(), b.getSrc1ApAttr(),
        DenseI64ArrayAttr(), IntegerAttr());
    merged->setDiscardableAttrs(b->getDiscardableAttrDictionary());
    rewriter.eraseOp(b);
    rewriter.eraseOp(a);
    return success();
  }
};

} // namespace

void TensorScalarOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                 MLIRContext *context) {
  results.add<FoldTensorScalarPair>(context);
}
