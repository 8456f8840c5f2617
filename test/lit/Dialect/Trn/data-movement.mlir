// RUN: trnc-opt %s | trnc-opt | FileCheck %s

// CHECK-LABEL: func.func @ok
// CHECK: trn.slice %arg0 starts = [1, 5] steps = [2, -1] : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK: trn.concat %arg0, %arg0 dim = 0 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
func.func @ok(%x: tensor<4x6xf32>) -> (tensor<2x6xf32>, tensor<8x6xf32>) {
  %0 = trn.slice %x starts = [1, 5] steps = [2, -1] : tensor<4x6xf32> -> tensor<2x6xf32>
  %1 = trn.concat %x, %x dim = 0 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  return %0, %1 : tensor<2x6xf32>, tensor<8x6xf32>
}
