//===- LowerKernel.cpp - splice a trnc.nki kernel into the graph ----------===//
//
// trn.nki_kernel carries the nisa text trnc.nki traced for its operand
// shapes (`func.func @main` over one row-major HBM memref per operand, then
// one per result). Lowering parses it in the function's context and clones
// its instructions into the graph's body: each kernel argument becomes the
// HBM buffer of the operand or result it stands for, with the view's
// element offset added to every access pattern on it. An operand that is not
// a row-major window (a transposed or broadcast view) is first copied into
// contiguous scratch. The kernel's tiles and scratch are cloned as they are:
// the later passes schedule, allocate and synchronise them with the rest.
//
//===----------------------------------------------------------------------===//
#include "passes/Tile/LoweringContext.h"

#include "dialects/Trn/TrnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

namespace trnc::tile {
namespace {

bool isRowMajor(const HbmView &v) { return v.strides == contiguousStrides(v.shape); }

/// The kernel argument `arg` (a memref of `elements`) bound to `view`.
LogicalResult bindArgument(Operation *op, BlockArgument arg, const HbmView &view,
                           IRMapping &map, DenseMap<Value, int64_t> &offsets) {
  auto type = cast<MemRefType>(arg.getType());
  if (type.getElementType() != view.elementType() || type.getNumElements() != view.numElements())
    return op->emitOpError("kernel argument ")
           << arg.getArgNumber() << " is " << type << ", the tensor it is bound to has "
           << view.numElements() << " elements of " << view.elementType();
  map.map(arg, view.root);
  offsets[view.root] = view.offset;
  return success();
}

/// Adds the bound view's element offset to every access pattern on it.
void shiftPatterns(LoweringContext &ctx, Operation *clone, const DenseMap<Value, int64_t> &offsets) {
  static const char *const names[] = {"dst_ap", "src0_ap", "src1_ap"};
  unsigned operand = 0;
  for (const char *name : names) {
    auto ap = clone->getAttrOfType<nisa::AccessPatternAttr>(name);
    if (!ap)
      continue;
    auto it = offsets.find(clone->getOperand(operand++));
    if (it == offsets.end() || it->second == 0)
      continue;
    clone->setAttr(name, ctx.ap(ap.getOffset() + it->second, ap.getStrides(), ap.getCounts()));
  }
}

} // namespace

LogicalResult lowerNkiKernel(LoweringContext &ctx, Operation *op) {
  auto call = cast<trn::NkiKernelOp>(op);
  ParserConfig config(op->getContext());
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(call.getKernel(), config);
  auto main = module ? module->lookupSymbol<func::FuncOp>("main") : func::FuncOp();
  if (!main)
    return op->emitOpError("kernel '") << call.getName() << "' does not parse as a nisa module with @main";
  unsigned numInputs = call.getInputs().size();
  if (main.getNumArguments() != numInputs + 1)
    return op->emitOpError("kernel '") << call.getName() << "' takes " << main.getNumArguments()
                                       << " buffers, the call binds " << numInputs + 1;

  IRMapping map;
  DenseMap<Value, int64_t> offsets;
  for (auto [i, input] : llvm::enumerate(call.getInputs())) {
    HbmView view = ctx.views.lookup(input);
    auto bound = offsets.find(view.root);
    // The kernel reads its operands row-major, each from its own buffer start.
    if (!isRowMajor(view) || (bound != offsets.end() && bound->second != view.offset)) {
      HbmView copy = ctx.allocScratch(op->getLoc(), cast<RankedTensorType>(input.getType()));
      emitCopy(ctx, op->getLoc(), copy, view);
      view = copy;
    }
    if (failed(bindArgument(op, main.getArgument(i), view, map, offsets)))
      return failure();
  }
  // The kernel writes a row-major result; a strided destination (an output
  // written in place) gets it through scratch.
  HbmView dest = ctx.destination(op->getLoc(), call.getResult());
  HbmView result = isRowMajor(dest) ? dest : ctx.allocScratch(op->getLoc(), call.getType());
  if (failed(bindArgument(op, main.getArgument(numInputs), result, map, offsets)))
    return failure();

  for (Operation &inst : main.getBody().front().without_terminator())
    shiftPatterns(ctx, ctx.b.clone(inst, map), offsets);
  if (!isRowMajor(dest))
    emitCopy(ctx, op->getLoc(), dest, result);
  ctx.views[call.getResult()] = dest;
  return success();
}

} // namespace trnc::tile
