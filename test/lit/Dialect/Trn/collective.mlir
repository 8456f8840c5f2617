// RUN: trnc-opt %s | trnc-opt | FileCheck %s

// trn.collective round-trips with its group, id and reduction.
// CHECK-LABEL: func.func @collectives
// CHECK: trn.collective "all_reduce" %arg0 {id = 0 : i64, ranks = array<i64: 0, 1>, reduce_op = "sum", root = 0 : i64, world_size = 2 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: trn.collective "all_gather" %{{.*}} : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK: trn.collective "reduce_scatter" %{{.*}} : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: trn.collective "all_to_all" %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: trn.collective "broadcast" %{{.*}} : tensor<4x8xbf16> -> tensor<4x8xbf16>
func.func @collectives(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %0 = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = trn.collective "all_gather" %0 {reduce_op = "", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 1} : tensor<4x8xf32> -> tensor<8x8xf32>
  %2 = trn.collective "reduce_scatter" %1 {reduce_op = "max", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 2} : tensor<8x8xf32> -> tensor<4x8xf32>
  %3 = trn.collective "all_to_all" %2 {reduce_op = "", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 3} : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = trn.collective "broadcast" %y {reduce_op = "", ranks = array<i64: 0, 1>, world_size = 2, root = 1, id = 4} : tensor<4x8xbf16> -> tensor<4x8xbf16>
  return %3, %4 : tensor<4x8xf32>, tensor<4x8xbf16>
}
