//===- KernelImporters.cpp - trnc.nki kernels called from a graph ---------===//
//
// A torch custom op registered by trnc.nki.custom_op exports as a
// `trnc.nki_kernel` node (python/trnc/graph_export.py): its positional args
// are the kernel's tensors, kwargs `name` (the custom op) and `kernel` (the
// nisa text traced for these shapes). It imports as trn.nki_kernel; the tile
// lowering splices the kernel's instructions in (passes/Tile/LowerKernel.cpp).
//
//===----------------------------------------------------------------------===//
#include "NodeContext.h"

#include "dialects/Trn/TrnOps.h"

using namespace mlir;

namespace trnc::import {
namespace {

FailureOr<std::string> stringKwarg(NodeContext &ctx, StringRef name) {
  const Arg *a = ctx.arg(kKeywordOnly, name);
  if (!a || a->kind != Arg::Kind::Str) {
    (void)ctx.invalid("kwarg '" + name + "' must be a string");
    return failure();
  }
  return a->text;
}

FailureOr<Value> importNkiKernel(NodeContext &ctx) {
  FailureOr<std::string> name = stringKwarg(ctx, "name");
  FailureOr<std::string> kernel = stringKwarg(ctx, "kernel");
  if (failed(name) || failed(kernel))
    return failure();
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.node.args.size(); ++i) {
    FailureOr<Value> t = ctx.tensor(i, "input");
    if (failed(t))
      return failure();
    inputs.push_back(*t);
  }
  return ctx.create<trn::NkiKernelOp>(ctx.resultType(), ctx.builder.getStringAttr(*name), inputs,
                                      ctx.builder.getStringAttr(*kernel));
}

} // namespace

void registerKernelImporters(OpRegistry &r) { r.add("trnc.nki_kernel", importNkiKernel); }

} // namespace trnc::import
