// RUN: trnc-opt %s -trnc-pipeline-split-logical-cores="always-split=1 report=1" -verify-diagnostics | FileCheck %s

!a = !nisa.tile<sbuf, 128, 128, f32>
!t = !nisa.tile<sbuf, 128, 256, f32>
!q = !nisa.tile<psum, 128, 256, f32>
!p = !nisa.tile<psum, 128, 128, f32>

// What the split's `report` says, on two copies of split-logical-cores.mlir's
// x^T case: out = x[256, 128] @ w (and out2 = x2 @ w2), x^T built from both
// row blocks of x by two transposes into one PSUM tile and copied out
// whole. Of the instructions both cores run (per product, the copy and four
// loads), each copy is cut: each core's matmul reads one half of x^T. The
// loads are not tried: every reader reads each of them whole (w is both
// matmuls' moving operand, the identity both transposes', x0 and x1 one
// transpose's each), so the halves of each would be needed by the same
// cores and the cut undone. The two copies are cut in one round, one
// analysis: neither cut changes what the other's judgement reads. (Tried
// one by one, as before rounds, the same cuts took 9 analyses; each load
// tried, 17.) This is what keeps the pass near linear on large programs
// (docs/distributed.md).
// CHECK: func.func @main(
// CHECK: nisa.tensor_copy %{{[0-9]+}} <0, [256, 1], [128, 128]>, %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK: nisa.tensor_copy %{{[0-9]+}} <0, [256, 1], [128, 128]>, %{{[0-9]+}} <0, [256, 1], [128, 128]>
// CHECK: func.func @main_core1(
// CHECK: nisa.tensor_copy %{{[0-9]+}} <128, [256, 1], [128, 128]>, %{{[0-9]+}} <128, [256, 1], [128, 128]>
// CHECK: nisa.tensor_copy %{{[0-9]+}} <128, [256, 1], [128, 128]>, %{{[0-9]+}} <128, [256, 1], [128, 128]>
// expected-remark @+1 {{split over logical cores: 8 whole-program analyses; of the instructions both cores run, 2 cut, 8 not tried (each half needed by the same cores)}}
func.func @main(%x: memref<32768xf32> {nisa.input = 0 : i64},
                %ident: memref<16384xf32> {nisa.input = 1 : i64},
                %w: memref<16384xf32> {nisa.input = 2 : i64},
                %x2: memref<32768xf32> {nisa.input = 3 : i64},
                %ident2: memref<16384xf32> {nisa.input = 4 : i64},
                %w2: memref<16384xf32> {nisa.input = 5 : i64},
                %out: memref<32768xf32> {nisa.output = 0 : i64},
                %out2: memref<32768xf32> {nisa.output = 1 : i64}) {
  %id = nisa.alloc : !a
  %x0 = nisa.alloc : !a
  %x1 = nisa.alloc : !a
  %wt = nisa.alloc : !a
  %pt = nisa.alloc : !q
  %xt = nisa.alloc : !t
  %p0 = nisa.alloc : !p
  %p1 = nisa.alloc : !p
  %o0 = nisa.alloc : !a
  %o1 = nisa.alloc : !a
  %id_b = nisa.alloc : !a
  %x0_b = nisa.alloc : !a
  %x1_b = nisa.alloc : !a
  %wt_b = nisa.alloc : !a
  %pt_b = nisa.alloc : !q
  %xt_b = nisa.alloc : !t
  %p0_b = nisa.alloc : !p
  %p1_b = nisa.alloc : !p
  %o0_b = nisa.alloc : !a
  %o1_b = nisa.alloc : !a
  nisa.dma_copy %id <0, [128, 1], [128, 128]>, %ident <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %x0 <0, [128, 1], [128, 128]>, %x <0, [128, 1], [128, 128]> : !a, memref<32768xf32>
  nisa.matmul %pt <0, [256, 1], [128, 128]>, %x0 <0, [128, 1], [128, 128]>, %id <0, [128, 1], [128, 128]> transpose : !q, !a, !a
  nisa.dma_copy %x1 <0, [128, 1], [128, 128]>, %x <16384, [128, 1], [128, 128]> : !a, memref<32768xf32>
  nisa.matmul %pt <128, [256, 1], [128, 128]>, %x1 <0, [128, 1], [128, 128]>, %id <0, [128, 1], [128, 128]> transpose : !q, !a, !a
  nisa.tensor_copy %xt <0, [256, 1], [128, 256]>, %pt <0, [256, 1], [128, 256]> on vector : !t, !q
  nisa.dma_copy %wt <0, [128, 1], [128, 128]>, %w <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p0 <0, [128, 1], [128, 128]>, %xt <0, [256, 1], [128, 128]>, %wt <0, [128, 1], [128, 128]> : !p, !t, !a
  nisa.tensor_copy %o0 <0, [128, 1], [128, 128]>, %p0 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out <0, [128, 1], [128, 128]>, %o0 <0, [128, 1], [128, 128]> : memref<32768xf32>, !a
  nisa.matmul %p1 <0, [128, 1], [128, 128]>, %xt <128, [256, 1], [128, 128]>, %wt <0, [128, 1], [128, 128]> : !p, !t, !a
  nisa.tensor_copy %o1 <0, [128, 1], [128, 128]>, %p1 <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out <16384, [128, 1], [128, 128]>, %o1 <0, [128, 1], [128, 128]> : memref<32768xf32>, !a
  nisa.dma_copy %id_b <0, [128, 1], [128, 128]>, %ident2 <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.dma_copy %x0_b <0, [128, 1], [128, 128]>, %x2 <0, [128, 1], [128, 128]> : !a, memref<32768xf32>
  nisa.matmul %pt_b <0, [256, 1], [128, 128]>, %x0_b <0, [128, 1], [128, 128]>, %id_b <0, [128, 1], [128, 128]> transpose : !q, !a, !a
  nisa.dma_copy %x1_b <0, [128, 1], [128, 128]>, %x2 <16384, [128, 1], [128, 128]> : !a, memref<32768xf32>
  nisa.matmul %pt_b <128, [256, 1], [128, 128]>, %x1_b <0, [128, 1], [128, 128]>, %id_b <0, [128, 1], [128, 128]> transpose : !q, !a, !a
  nisa.tensor_copy %xt_b <0, [256, 1], [128, 256]>, %pt_b <0, [256, 1], [128, 256]> on vector : !t, !q
  nisa.dma_copy %wt_b <0, [128, 1], [128, 128]>, %w2 <0, [128, 1], [128, 128]> : !a, memref<16384xf32>
  nisa.matmul %p0_b <0, [128, 1], [128, 128]>, %xt_b <0, [256, 1], [128, 128]>, %wt_b <0, [128, 1], [128, 128]> : !p, !t, !a
  nisa.tensor_copy %o0_b <0, [128, 1], [128, 128]>, %p0_b <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out2 <0, [128, 1], [128, 128]>, %o0_b <0, [128, 1], [128, 128]> : memref<32768xf32>, !a
  nisa.matmul %p1_b <0, [128, 1], [128, 128]>, %xt_b <128, [256, 1], [128, 128]>, %wt_b <0, [128, 1], [128, 128]> : !p, !t, !a
  nisa.tensor_copy %o1_b <0, [128, 1], [128, 128]>, %p1_b <0, [128, 1], [128, 128]> on scalar : !a, !p
  nisa.dma_copy %out2 <16384, [128, 1], [128, 128]>, %o1_b <0, [128, 1], [128, 128]> : memref<32768xf32>, !a
  return
}
