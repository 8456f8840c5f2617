// RUN: trnc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
// CHECK: trn.reduce_max %{{.*}} dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: trn.reduce_min %{{.*}} dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
// CHECK: trn.reduce_prod %{{.*}} dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: trn.softmax %{{.*}} dim = 1 : tensor<4x8xf32>
// CHECK: trn.softmax %{{.*}} dim = 0 log : tensor<4x8xf32>
func.func @roundtrip(%x: tensor<4x8xf32>) {
  %0 = trn.reduce_max %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %1 = trn.reduce_min %x dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %2 = trn.reduce_prod %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %3 = trn.softmax %x dim = 1 : tensor<4x8xf32>
  %4 = trn.softmax %x dim = 0 log : tensor<4x8xf32>
  return
}

// -----

func.func @reduce_max_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape does not drop the reduced dims}}
  %0 = trn.reduce_max %x dims = [1] : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_prod_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 2 out of range for rank 2}}
  %0 = trn.reduce_prod %x dims = [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @softmax_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dim 2 out of range for rank 2}}
  %0 = trn.softmax %x dim = 2 : tensor<4x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @scans
// CHECK: trn.cumsum %{{.*}} dim = 1 : tensor<4x8xf32>
// CHECK: trn.cumprod %{{.*}} dim = 0 : tensor<4x8xf32>
func.func @scans(%x: tensor<4x8xf32>) {
  %0 = trn.cumsum %x dim = 1 : tensor<4x8xf32>
  %1 = trn.cumprod %x dim = 0 : tensor<4x8xf32>
  return
}

// -----

func.func @cumsum_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dim -1 out of range for rank 2}}
  %0 = trn.cumsum %x dim = -1 : tensor<4x8xf32>
  return
}
