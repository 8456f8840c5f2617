//===- TrnRandomOps.td - trn random-number ops ------------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td): the
// uniform generator every random operator decomposes to (python/trnc/
// decomp_random.py; docs/decompositions.md, "Random numbers and dropout").
//
//===----------------------------------------------------------------------===//
#ifndef TRN_RANDOM_OPS
#define TRN_RANDOM_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Trn_RandomOp : Trn_Op<"random", [Pure]> {
  let summary = "uniform [0, 1) numbers, a pure function of a seed";
  let description = [{
    Element i (row-major index of the result) is Philox-4x32-10 of counter
    i under the key `seed` (two i32 words, a graph input filled from
    torch's generator before every call), scaled to [0, 1) exactly in the
    result's element type. Pure: the same seed gives the same tensor, and
    distinct random operators get distinct seeds from the graph. Lowered to
    one GpSimd `random` per tile (Isa.h Random).

    ```mlir
    %u = trn.random %seed : tensor<2xi32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32]>:$seed);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$seed attr-dict `:` type($seed) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    /// The seed is the key's two words (Isa.h Random).
    ::mlir::LogicalResult $cppClass::verify() {
      auto seed = ::llvm::cast<::mlir::RankedTensorType>(getSeed().getType());
      if (seed.getShape() != ::llvm::ArrayRef<int64_t>{2})
        return emitOpError("seed must be tensor<2xi32>, not ") << seed;
      return ::mlir::success();
    }
  }];
}

#endif // TRN_RANDOM_OPS
