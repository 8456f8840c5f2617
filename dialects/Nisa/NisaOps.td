//===- NisaOps.td - nisa dialect operations ----------------*- tablegen -*-===//
//
// Buffers, then one op per engine instruction. Every verifier check names
// the hardware rule it enforces (HARDWARE.md, NKI ISA reference).
//
//===----------------------------------------------------------------------===//
#ifndef NISA_OPS
#define NISA_OPS

include "dialects/Nisa/NisaBase.td"
include "dialects/Nisa/NisaInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Nisa_Tile : Type<CPred<"::llvm::isa<::trnc::nisa::TileType>($_self)">,
                     "nisa tile", "::trnc::nisa::TileType">;
// HBM element types: I64 (int64, only on the HBM side of a DMA, Isa.h
// DType) and I1 (bool, one byte) exist in HBM as well as on chip.
def Nisa_Hbm : MemRefRankOf<[F32, BF16, F16, I32, I8, I64, I1], [1]>;
def Nisa_Buffer : AnyTypeOf<[Nisa_Tile, Nisa_Hbm]>;

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def Nisa_AllocOp : Nisa_Op<"alloc"> {
  let summary = "an on-chip tile in SBUF or PSUM";
  let description = [{
    Reserves a tile. `address`, set by the allocation pass, is the byte
    offset of the tile inside every partition (PSUM: bank * 2048 + offset).

    ```mlir
    %t = nisa.alloc {address = 0} : !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$address);
  let results = (outs Res<Nisa_Tile, "", [MemAlloc]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Nisa_DramAllocOp : Nisa_Op<"dram_alloc"> {
  let summary = "an HBM scratch buffer";
  let description = [{
    A scratch region in HBM for an intermediate tensor. `offset`, set by
    `trnc-pack-scratch`, is its byte offset in the program's one scratch
    arena (64-byte aligned); buffers whose live ranges do not overlap share
    bytes. Its contents are undefined until written.

    ```mlir
    %s = nisa.dram_alloc {offset = 0} : memref<4096xf32>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Res<Nisa_Hbm, "", [MemAlloc]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Nisa_HbmWindowOp : Nisa_Op<"hbm_window",
    [Pure, AllTypesMatch<["source", "result"]>]> {
  let summary = "an HBM buffer as one iteration of a tile loop sees it";
  let description = [{
    `source` advanced by `index * step` elements; with a `period` P (and a
    `phase` p, default 0), by `((index + p) mod P - p) * step`: a view that
    returns to its start every P tiles (a position table broadcast over the
    batch, walked with the batch's rows), in a loop that may start p
    iterations into the period. The tile phase emits a
    group's tiles as `scf.for` loops whose body is one iteration; the body's
    loads and stores address the windows of the HBM buffers they walk, so
    their access patterns are those of iteration 0. `trnc-unroll-tile-loops`
    unrolls the loops and folds each window into the patterns of the
    instructions that use it (offset + index * step); none is left in an
    artifact.

    ```mlir
    scf.for %i = %c0 to %c8 step %c1 {
      %w = nisa.hbm_window %arg0[%i * 65536] : memref<524288xf32>
      nisa.dma_copy %t[0, [512, 1], [128, 512]], %w[0, [512, 1], [128, 512]]
          : !nisa.tile<sbuf, 128, 512, f32>, memref<524288xf32>
    }
    ```
  }];
  let arguments = (ins Nisa_Hbm:$source, Index:$index, I64Attr:$step,
                       OptionalAttr<I64Attr>:$period,
                       OptionalAttr<I64Attr>:$phase);
  let results = (outs Nisa_Hbm:$result);
  let assemblyFormat =
      "$source `[` $index `*` $step (`period` $period^)? (`phase` $phase^)? `]` "
      "attr-dict `:` type($result)";
  let builders = [
    // A window without period.
    OpBuilder<(ins "::mlir::Value":$source, "::mlir::Value":$index,
                   "int64_t":$step), [{
      build($_builder, $_state, source.getType(), source, index,
            $_builder.getI64IntegerAttr(step), nullptr, nullptr);
    }]>
  ];
  let hasFolder = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Elements the window moves `source` at `index`.
    int64_t offsetAt(int64_t index);
  }];
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

class Nisa_InstrOp<string mnemonic, list<Trait> traits = []>
    : Nisa_Op<mnemonic, traits # [Nisa_InstructionOpInterface]> {
  let hasVerifier = 1;
}

defvar Nisa_SyncAttrs = (ins OptionalAttr<DenseI64ArrayAttr>:$waits,
                             OptionalAttr<I64Attr>:$signal);

def Nisa_DmaCopyOp : Nisa_InstrOp<"dma_copy"> {
  let summary = "DMA transfer with optional cast (HBM/SBUF/PSUM either side)";
  let description = [{
    Copies the elements of `src0` to `dst`, both walked in row-major order of
    their patterns, converting the element type if the buffers differ.
    Both patterns cover the same number of elements.

    ```mlir
    nisa.dma_copy %t <0, [512, 1], [128, 512]>, %in <0, [512, 1], [128, 512]>
        : !nisa.tile<sbuf, 128, 512, f32>, memref<65536xf32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Buffer, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Buffer, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            OptionalAttr<I64Attr>:$queue),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap attr-dict `:` type($dst) `,` type($src0)
  }];
}

def Nisa_DmaGatherOp : Nisa_InstrOp<"dma_gather"> {
  let summary = "DMA: gather HBM rows named by an SBUF index tile (dma_indirect)";
  let description = [{
    Partition p of `dst` (SBUF, P partitions x one row) receives row
    `index[p]` of the HBM table `src0`, cast to dst's element type, or zeros
    when the index is outside [0, N) (Isa.h DmaIndirect). `src0_ap` spans
    the whole table: outer dim = N rows (stride = row stride), free dims =
    one row. `src1` is the i32 index tile [P, 1], read when the DMA runs.

    ```mlir
    nisa.dma_gather %t <0, [64, 1], [128, 64]>, %table <0, [64, 1], [1000, 64]>,
        %idx <0, [1, 1], [128, 1]>
        : !nisa.tile<sbuf, 128, 64, f32>, memref<64000xf32>, !nisa.tile<sbuf, 128, 1, i32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Hbm, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src1,
                            Nisa_AccessPatternAttr:$src1_ap,
                            OptionalAttr<I64Attr>:$queue),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap `,` $src1 $src1_ap attr-dict
    `:` type($dst) `,` type($src0) `,` type($src1)
  }];
}

def Nisa_DmaScatterOp : Nisa_InstrOp<"dma_scatter"> {
  let summary = "DMA: scatter SBUF partitions to HBM rows named by an index tile";
  let description = [{
    For p = 0..P-1 in order, partition p of `src0` (SBUF) is written to row
    `index[p]` of the HBM table `dst` (last writer wins), or with
    `accumulate` added to it in fp32 (duplicates sum); indices outside
    [0, N) are dropped (Isa.h DmaIndirect with kFlagScatter). `dst_ap`
    spans the whole table (N rows, free dims = one row). `accumulate` reads
    dst too; its write access already orders it against every other access.
    `idempotent` (not with `accumulate`) promises that every row it writes
    gets the bytes any other idempotent scatter writes there (duplicates of
    one rounded table, LowerIndirect's touched rows): two of them need no
    order between them, a later access still waits for both.

    ```mlir
    nisa.dma_scatter %out <0, [64, 1], [1000, 64]>, %t <0, [64, 1], [128, 64]>,
        %idx <0, [1, 1], [128, 1]> accumulate
        : memref<64000xf32>, !nisa.tile<sbuf, 128, 64, f32>, !nisa.tile<sbuf, 128, 1, i32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Hbm, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src1,
                            Nisa_AccessPatternAttr:$src1_ap,
                            UnitAttr:$accumulate,
                            UnitAttr:$idempotent,
                            OptionalAttr<I64Attr>:$queue),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap `,` $src1 $src1_ap (`accumulate` $accumulate^)?
    (`idempotent` $idempotent^)? attr-dict `:` type($dst) `,` type($src0) `,` type($src1)
  }];
}

def Nisa_CollectiveOp : Nisa_InstrOp<"collective"> {
  let summary = "DMA queue: a collective across a replica group (Isa.h Collective)";
  let description = [{
    Moves `src0` (one contiguous HBM run) between the ranks of a replica
    group of `group_size` ranks and writes this rank's result to `dst` (one
    contiguous HBM run of the same element type): all_gather makes dst
    group_size times src0, reduce_scatter src0 group_size times dst, the
    other kinds keep the size. `id` names the collective in its graph (the
    host maps it to the process group and arguments); `span` is the widest
    link the group crosses, which the simulator's ring model charges. It
    runs on the collective queue (Isa.h kCollectiveQueue), so its consumers
    wait on that queue's semaphore: that wait is `wait_tensor`.

    ```mlir
    nisa.collective %out <0, [1024, 1], [1, 1024]>, %in <0, [1024, 1], [1, 1024]>
        all_reduce sum group 2 id 0 span chip
        : memref<1024xf32>, memref<1024xf32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Hbm, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Hbm, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Nisa_CollectiveKind:$kind,
                            Nisa_ReduceOp:$reduce,
                            I64Attr:$group_size,
                            I64Attr:$id,
                            Nisa_CollectiveSpan:$span,
                            DefaultValuedAttr<I64Attr, "15">:$queue),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap $kind $reduce `group` $group_size `id` $id
    `span` $span attr-dict `:` type($dst) `,` type($src0)
  }];
}

def Nisa_MatmulOp : Nisa_InstrOp<"matmul"> {
  let summary = "Tensor Engine: psum[M, N] (+)= stationary[K, M]^T @ moving[K, N]";
  let description = [{
    `src0` is the stationary operand (K partitions, M free), `src1` the
    moving one (K partitions, N free); `dst` is an fp32 PSUM tile of M
    partitions and N free elements. Without `accumulate` the write
    overwrites (first write of an accumulation group). `transpose` marks a
    Tensor Engine transpose: `src1` is a [K, K] identity, so `dst` is
    `src0` transposed (K <= 128 free elements on M partitions); it never
    accumulates, and profiles count it as layout work, not model FLOPs.

    ```mlir
    nisa.matmul %p <0, [512, 1], [128, 512]>, %a <0, [128, 1], [128, 128]>,
        %b <0, [512, 1], [128, 512]> accumulate
        : !nisa.tile<psum, 128, 512, f32>, !nisa.tile<sbuf, 128, 128, bf16>,
          !nisa.tile<sbuf, 128, 512, bf16>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src1,
                            Nisa_AccessPatternAttr:$src1_ap,
                            UnitAttr:$accumulate,
                            UnitAttr:$transpose),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap `,` $src1 $src1_ap (`accumulate` $accumulate^)?
    (`transpose` $transpose^)?
    attr-dict `:` type($dst) `,` type($src0) `,` type($src1)
  }];
}

def Nisa_ActivationOp : Nisa_InstrOp<"activation"> {
  let summary = "Scalar engine: dst = func(src0 * scale + bias)";
  let description = [{
    `bias` is a per-partition [P, 1] operand when `src1` is given, else the
    immediate `bias_imm`.

    ```mlir
    nisa.activation relu %o <0, [512, 1], [128, 512]>, %i <0, [512, 1], [128, 512]>
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Nisa_ActFunc:$func,
                            Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Arg<Optional<Nisa_Tile>, "", [MemRead]>:$src1,
                            OptionalAttr<Nisa_AccessPatternAttr>:$src1_ap,
                            DefaultValuedAttr<F32Attr, "1.0">:$scale,
                            DefaultValuedAttr<F32Attr, "0.0">:$bias_imm),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $func $dst $dst_ap `,` $src0 $src0_ap (`bias` $src1^ $src1_ap)?
    attr-dict `:` type($dst) `,` type($src0) (`,` type($src1)^)?
  }];
}

def Nisa_TensorTensorOp : Nisa_InstrOp<"tensor_tensor"> {
  let summary = "Vector/GpSimd: dst = src0 op src1, elementwise";
  let description = [{
    Sources may broadcast along free dims with stride 0; neither source may
    be... any memory space (both in PSUM is not allowed on hardware).

    ```mlir
    nisa.tensor_tensor add %o <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]>,
        %b <0, [512, 1], [128, 512]> on vector
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>,
          !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Nisa_AluOp:$op,
                            Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src1,
                            Nisa_AccessPatternAttr:$src1_ap,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $op $dst $dst_ap `,` $src0 $src0_ap `,` $src1 $src1_ap `on` $engine
    attr-dict `:` type($dst) `,` type($src0) `,` type($src1)
  }];
}

def Nisa_TensorScalarOp : Nisa_InstrOp<"tensor_scalar",
                                       [AttrSizedOperandSegments]> {
  let summary = "dst = (src0 op0 imm0) op1 imm1";
  let description = [{
    `reverse0`/`reverse1` swap the operands (`imm0 op0 x`). `op1` may be
    `bypass`. With `src1` (a [P, 1] tile: one value per partition, the
    `operand0` vector form of NKI's tensor_scalar), op0's operand is that
    partition's value instead of `imm0`: `x - rowmax` over a row tile costs
    one pass of N, where a tensor_tensor reading the value broadcast along
    the row costs 2N (HARDWARE.md "Instructions"). With `src2`, op1's
    operand likewise (`operand1`): `(x - mean) * rstd` is one instruction,
    at the cost of one operator (nki.isa.tensor_scalar).

    ```mlir
    nisa.tensor_scalar %o <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]>
        multiply 2.0, add 1.0 on vector
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    nisa.tensor_scalar %o <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]>
        subtract 0.0 per_partition %m <0, [1, 1], [128, 1]>, bypass 0.0 on vector
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>,
          !nisa.tile<sbuf, 128, 1, f32>
    nisa.tensor_scalar %o <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]>
        subtract 0.0 per_partition %m <0, [1, 1], [128, 1]>,
        multiply 0.0 per_partition %r <0, [1, 1], [128, 1]>
          : !nisa.tile<sbuf, 128, 1, f32> on vector
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>,
          !nisa.tile<sbuf, 128, 1, f32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Nisa_AluOp:$op0, F32Attr:$imm0,
                            Nisa_AluOp:$op1, F32Attr:$imm1,
                            UnitAttr:$reverse0, UnitAttr:$reverse1,
                            Nisa_Engine:$engine,
                            Arg<Optional<Nisa_Tile>, "", [MemRead]>:$src1,
                            OptionalAttr<Nisa_AccessPatternAttr>:$src1_ap,
                            Arg<Optional<Nisa_Tile>, "", [MemRead]>:$src2,
                            OptionalAttr<Nisa_AccessPatternAttr>:$src2_ap),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap $op0 $imm0 (`per_partition` $src1^ $src1_ap)?
    `,` $op1 $imm1 (`per_partition` $src2^ $src2_ap `:` type($src2))?
    `on` $engine
    attr-dict `:` type($dst) `,` type($src0) (`,` type($src1)^)?
  }];
  let hasCanonicalizer = 1;
}

def Nisa_TensorReduceOp : Nisa_InstrOp<"tensor_reduce"> {
  let summary = "Vector: reduce the innermost free dim of src0";
  let description = [{
    `dst` keeps the partitions and the outer free dims of `src0`.

    ```mlir
    nisa.tensor_reduce add %o <0, [1, 1], [128, 1]>, %a <0, [512, 1], [128, 512]> on vector
        : !nisa.tile<sbuf, 128, 1, f32>, !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Nisa_AluOp:$op,
                            Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $op $dst $dst_ap `,` $src0 $src0_ap `on` $engine attr-dict `:` type($dst) `,` type($src0)
  }];
}

def Nisa_TensorScanOp : Nisa_InstrOp<"tensor_scan"> {
  let summary = "Vector: inclusive scan of src0 along its innermost free dim";
  let description = [{
    `dst[.., i] = src0[.., 0] op ... op src0[.., i]`, restarting at every
    innermost row, with `op` one of add, multiply, max, min (fp32 inside).
    `dst` has the shape of `src0`. Carrying a scan across tiles is a
    `tensor_tensor` with the previous tile's last column.

    ```mlir
    nisa.tensor_scan add %o <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> on vector
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Nisa_AluOp:$op,
                            Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $op $dst $dst_ap `,` $src0 $src0_ap `on` $engine attr-dict `:` type($dst) `,` type($src0)
  }];
}

def Nisa_TensorCopyOp : Nisa_InstrOp<"tensor_copy"> {
  let summary = "copy with element type cast (e.g. PSUM fp32 -> SBUF bf16)";
  let description = [{
    ```mlir
    nisa.tensor_copy %o <0, [512, 1], [128, 512]>, %p <0, [512, 1], [128, 512]> on scalar
        : !nisa.tile<sbuf, 128, 512, bf16>, !nisa.tile<psum, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap `on` $engine attr-dict `:` type($dst) `,` type($src0)
  }];
}

def Nisa_CopyPredicatedOp : Nisa_InstrOp<"copy_predicated"> {
  let summary = "Vector/GpSimd: dst = src0 != 0 ? src1 : dst (where)";
  let description = [{
    Predicated copy (nki.isa.tensor_copy_predicated): where the predicate
    `src0` is non-zero the element of `src1` is written, elsewhere `dst`
    keeps its value. `dst` is read, so trnc writes it first on the same
    engine (program order). Operands are shaped like `dst`.

    ```mlir
    nisa.copy_predicated %o <0, [512, 1], [128, 512]>, %m <0, [512, 1], [128, 512]>,
        %a <0, [512, 1], [128, 512]> on vector
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, i1>,
          !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src1,
                            Nisa_AccessPatternAttr:$src1_ap,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap `,` $src1 $src1_ap `on` $engine
    attr-dict `:` type($dst) `,` type($src0) `,` type($src1)
  }];
}

def Nisa_MemsetOp : Nisa_InstrOp<"memset"> {
  let summary = "fill with a constant";
  let description = [{
    ```mlir
    nisa.memset %o <0, [512, 1], [128, 512]>, 0.0 on vector : !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            F32Attr:$value, Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $value `on` $engine attr-dict `:` type($dst)
  }];
}

def Nisa_IotaOp : Nisa_InstrOp<"iota"> {
  let summary = "GpSimd: an affine index pattern (arange)";
  let description = [{
    `dst[p, f] = base + scale * (partition_coef * p + free_coef * f)`, with p
    the partition within `dst` and f its row-major free index; the integer
    part is exact, then one fp32 multiply-add (Isa.h Iota).

    ```mlir
    nisa.iota %o <0, [512, 1], [128, 512]>, base = 0.0, scale = 1.0, coefs = [512, 1] on gpsimd
        : !nisa.tile<sbuf, 128, 512, f32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            F32Attr:$base, F32Attr:$scale,
                            I32Attr:$partition_coef, I32Attr:$free_coef,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` `base` `=` $base `,` `scale` `=` $scale `,` `coefs` `=`
    `[` $partition_coef `,` $free_coef `]` `on` $engine attr-dict `:` type($dst)
  }];
}

def Nisa_AffineSelectOp : Nisa_InstrOp<"affine_select"> {
  let summary = "GpSimd: keep src0 where an affine predicate on indices holds";
  let description = [{
    `dst[p, f] = (offset + partition_coef * p + free_coef * f  <op>  0)
    ? src0[p, f] : fill`, `op` a comparison (Isa.h AffineSelect): the
    triangular masks of tril/triu and causal attention.

    ```mlir
    nisa.affine_select is_le %o <0, [64, 1], [64, 64]>, %a <0, [64, 1], [64, 64]>,
        offset = 0.0, coefs = [-1, 1], fill = 0.0 on gpsimd
        : !nisa.tile<sbuf, 64, 64, f32>, !nisa.tile<sbuf, 64, 64, f32>
    ```
  }];
  let arguments = !con((ins Nisa_AluOp:$op,
                            Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            F32Attr:$offset,
                            I32Attr:$partition_coef, I32Attr:$free_coef,
                            F32Attr:$fill, Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $op $dst $dst_ap `,` $src0 $src0_ap `,` `offset` `=` $offset `,` `coefs` `=`
    `[` $partition_coef `,` $free_coef `]` `,` `fill` `=` $fill `on` $engine
    attr-dict `:` type($dst) `,` type($src0)
  }];
}

def Nisa_RandomOp : Nisa_InstrOp<"random"> {
  let summary = "GpSimd: uniform [0, 1) numbers from a counter-based generator";
  let description = [{
    `dst[p, f]` = Philox-4x32-10 (Isa.h Random) of the counter
    `counter_base + partition_coef * p + free_coef * f`, keyed by the two i32
    words of partition p of `src0` (the seed, read when the instruction
    runs), scaled to [0, 1) exactly in dst's element type. Each value
    depends only on (seed, counter), never on tiling.

    ```mlir
    nisa.random %o <0, [512, 1], [128, 512]>, %seed <0, [2, 1], [128, 2]>,
        base = 0, coefs = [512, 1] on gpsimd
        : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 2, i32>
    ```
  }];
  let arguments = !con((ins Arg<Nisa_Tile, "", [MemWrite]>:$dst,
                            Nisa_AccessPatternAttr:$dst_ap,
                            Arg<Nisa_Tile, "", [MemRead]>:$src0,
                            Nisa_AccessPatternAttr:$src0_ap,
                            I64Attr:$counter_base,
                            I32Attr:$partition_coef, I32Attr:$free_coef,
                            Nisa_Engine:$engine),
                       Nisa_SyncAttrs);
  let assemblyFormat = [{
    $dst $dst_ap `,` $src0 $src0_ap `,` `base` `=` $counter_base `,` `coefs`
    `=` `[` $partition_coef `,` $free_coef `]` `on` $engine attr-dict `:`
    type($dst) `,` type($src0)
  }];
}

def Nisa_NopOp : Nisa_InstrOp<"nop"> {
  let summary = "wait-only instruction: no operands, no work";
  let description = [{
    Carries semaphore waits that do not fit the next instruction of the same
    engine (at most 4 per instruction); the engine runs in order, so waiting
    here is the same as waiting there. Scheduling inserts it; it signals
    nothing.

    ```mlir
    nisa.nop on dma {waits = array<i64: 5, 1, 6, 1, 7, 1, 8, 2>}
    ```
  }];
  let arguments = !con((ins Nisa_Engine:$engine), Nisa_SyncAttrs);
  let assemblyFormat = "`on` $engine attr-dict";
}

def Nisa_PeerSignalOp : Nisa_InstrOp<"peer_signal"> {
  let summary = "a cross-core barrier's signal to the other physical core (LNC=2)";
  let description = [{
    The first half of a barrier between the two physical cores of a program
    split over them (trnc-pipeline-split-logical-cores): on the DMA stream,
    it waits (its `waits`, set by the semaphore pass) until every earlier
    transfer of its core is complete, then raises the *peer* core's copy of
    barrier semaphore `semaphore` (Isa.h kFlagSignalPeer, ids 21..31). It
    touches no memory.

    ```mlir
    nisa.peer_signal {semaphore = 21 : i64}
    ```
  }];
  let arguments = !con((ins I64Attr:$semaphore), Nisa_SyncAttrs);
  let assemblyFormat = "attr-dict";
}

def Nisa_PeerWaitOp : Nisa_InstrOp<"peer_wait"> {
  let summary = "a cross-core barrier's wait for the other physical core (LNC=2)";
  let description = [{
    The second half of a barrier: on the DMA stream (which issues in order,
    so every later transfer of the core is behind it), waits until this
    core's copy of barrier semaphore `semaphore` reaches `count`, i.e. the
    peer core has passed its `count`-th peer_signal. It touches no memory.

    ```mlir
    nisa.peer_wait {count = 1 : i64, semaphore = 21 : i64}
    ```
  }];
  let arguments = !con((ins I64Attr:$semaphore, I64Attr:$count), Nisa_SyncAttrs);
  let assemblyFormat = "attr-dict";
}

#endif // NISA_OPS
