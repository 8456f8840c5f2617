//===- TrnKernelOps.td - hand-written kernels inside a graph -*- tablegen -*-===//
//
// A trnc.nki kernel called from a torch.compile graph: its nisa instructions
// travel as text and are spliced into the graph's program when lowered.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_KERNEL_OPS
#define TRN_KERNEL_OPS

def Trn_NkiKernelOp : Trn_Op<"nki_kernel", [Pure]> {
  let summary = "a trnc.nki kernel (nisa text) applied to tensors";
  let description = [{
    `kernel` is the MLIR text trnc.nki traced for these operand shapes: a
    module whose `func.func @main` takes one HBM memref per operand
    (`nisa.input`) and one per result (`nisa.output`), row-major, and holds
    nisa instructions over tiles without addresses. The tile lowering clones
    those instructions into the graph's function (operands and results bound
    to their HBM buffers), so the kernel is scheduled, allocated and
    synchronised with the rest of the program. `name` is the custom op's
    name (for messages).

    ```mlir
    %y = trn.nki_kernel "trnc_nki::rmsnorm" (%x, %w) kernel = "module {...}"
        : (tensor<128x64xf32>, tensor<1x64xf32>) -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<Trn_Tensor>:$inputs, StrAttr:$kernel);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = [{
    $name `(` $inputs `)` `kernel` `=` $kernel attr-dict `:` functional-type($inputs, $result)
  }];
}

#endif // TRN_KERNEL_OPS
