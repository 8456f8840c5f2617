// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | trnc-opt | FileCheck %s
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa=lnc=2 | FileCheck %s --check-prefix=LNC2
// RUN: not trnc-opt %s "--trnc-tile-lower-to-nisa=target=trn1 lnc=2" 2>&1 | FileCheck %s --check-prefix=TRN1
// TRN1: lnc=2 is not supported on trn1

// A contiguous input goes straight to the collective, which writes the
// function's output in place: one instruction on the collective queue.
// CHECK-LABEL: func.func @all_reduce
// CHECK-NOT: nisa.dma_copy
// CHECK: nisa.collective %arg1 <0, [32, 1], [1, 32]>, %arg0 <0, [32, 1], [1, 32]> all_reduce sum group 2 id 0 span chip
// CHECK-NOT: nisa.dma_copy
func.func @all_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A transposed (strided) input is first made contiguous in scratch.
// CHECK-LABEL: func.func @gather_transposed
// CHECK: %[[S:.*]] = nisa.dram_alloc : memref<32xf32>
// CHECK: nisa.dma_copy %[[S]]
// CHECK: nisa.collective %arg1 <0, [64, 1], [1, 64]>, %[[S]] <0, [32, 1], [1, 32]> all_gather none group 2 id 3 span chip
func.func @gather_transposed(%x: tensor<8x4xf32>) -> tensor<8x8xf32> {
  %t = trn.transpose %x permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %0 = trn.collective "all_gather" %t {reduce_op = "", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 3} : tensor<4x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// The span comes from the ranks: trn2 has 8 cores per chip and 16 chips per
// instance, so ranks 0 and 8 cross NeuronLink and ranks 0 and 128 cross EFA.
// CHECK-LABEL: func.func @spans
// CHECK: nisa.collective {{.*}} reduce_scatter avg group 2 id 0 span instance
// CHECK: nisa.collective {{.*}} all_to_all none group 2 id 1 span cluster
func.func @spans(%x: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %0 = trn.collective "reduce_scatter" %x {reduce_op = "avg", ranks = array<i64: 0, 8>, world_size = 256, root = 0, id = 0} : tensor<8xf32> -> tensor<4xf32>
  %1 = trn.collective "all_to_all" %x {reduce_op = "", ranks = array<i64: 0, 128>, world_size = 256, root = 0, id = 1} : tensor<8xf32> -> tensor<8xf32>
  return %0, %1 : tensor<4xf32>, tensor<8xf32>
}

// At lnc=2 a rank is a logical core of two physical cores: a trn2 chip
// holds ranks 0..3, an instance ranks 0..63. Ranks 0 and 4 then cross
// NeuronLink and ranks 0 and 64 EFA; at lnc=1 both pairs stay closer.
// CHECK-LABEL: func.func @logical_core_spans
// CHECK: nisa.collective {{.*}} all_reduce sum group 2 id 0 span chip
// CHECK: nisa.collective {{.*}} all_reduce sum group 2 id 1 span chip
// CHECK: nisa.collective {{.*}} all_reduce sum group 2 id 2 span instance
// LNC2-LABEL: func.func @logical_core_spans
// LNC2: nisa.collective {{.*}} all_reduce sum group 2 id 0 span chip
// LNC2: nisa.collective {{.*}} all_reduce sum group 2 id 1 span instance
// LNC2: nisa.collective {{.*}} all_reduce sum group 2 id 2 span cluster
func.func @logical_core_spans(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 3>, world_size = 256, root = 0, id = 0} : tensor<8xf32> -> tensor<8xf32>
  %1 = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 4>, world_size = 256, root = 0, id = 1} : tensor<8xf32> -> tensor<8xf32>
  %2 = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 64>, world_size = 256, root = 0, id = 2} : tensor<8xf32> -> tensor<8xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
