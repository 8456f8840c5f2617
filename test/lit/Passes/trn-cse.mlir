// RUN: trnc-opt %s --pass-pipeline='builtin.module(trnc-compile{compile-to=tile})' | FileCheck %s

// The same product twice is computed once (trn ops are pure): one stream of
// matmul instructions, not two. Two random draws with different seeds stay.
// CHECK-LABEL: func.func @repeated
// CHECK-COUNT-1: nisa.matmul
// CHECK-NOT: nisa.matmul
func.func @repeated(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %2 = trn.exp %1 : tensor<8x4xf32>
  %3 = trn.add %0, %2 : tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @two_draws
// CHECK-COUNT-2: nisa.random
func.func @two_draws(%s0: tensor<2xi32>, %s1: tensor<2xi32>) -> tensor<4x8xf32> {
  %0 = trn.random %s0 : tensor<2xi32> -> tensor<4x8xf32>
  %1 = trn.random %s1 : tensor<2xi32> -> tensor<4x8xf32>
  %2 = trn.add %0, %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
