// trn.attention / trn.attention_grad lower as one group: q, k, v rows are
// loaded once, transposed on the Tensor Engine, the scores stay in PSUM and
// SBUF (no HBM scratch), causal blocks are masked by affine_select and key
// chunks above the diagonal are never computed.
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s

// CHECK-LABEL: func.func @causal_forward
// CHECK-NOT: nisa.dram_alloc
// Scores of the one 128-row block: Q^T [32, 128] x K^T [32, 128] into PSUM.
// CHECK: nisa.matmul %{{.*}} <0, [128, 1], [128, 128]>, %{{.*}} <0, [128, 1], [32, 128]>, %{{.*}} <0, [128, 1], [32, 128]>
// CHECK: nisa.affine_select is_ge
// CHECK-SAME: coefs = [1, -1], fill = 0xFF800000
// CHECK: nisa.tensor_reduce max
// CHECK: nisa.activation exp
// CHECK-SAME: bias
// CHECK: nisa.tensor_reduce add
// P^T, then O = P V.
// CHECK: transpose :
// CHECK: nisa.matmul %{{.*}} <0, [32, 1], [128, 32]>
// CHECK: nisa.tensor_tensor divide
// CHECK: nisa.activation log
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @causal_forward(%q: tensor<1x1x128x32xf32>, %k: tensor<1x1x128x32xf32>, %v: tensor<1x1x128x32xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x1x128xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64, causal} : (tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x128x1x32xf32>, tensor<1x1x128xf32>
}

// Two 512-key chunks (two PSUM banks), no mask: the row max over both.
// CHECK-LABEL: func.func @long_row
// CHECK-NOT: affine_select is_ge
// CHECK: nisa.tensor_reduce max %{{.*}} <0, [2, 1], [64, 1]>
// CHECK: nisa.tensor_reduce max %{{.*}} <1, [2, 1], [64, 1]>
// CHECK: nisa.tensor_reduce max %{{.*}} <0, [1, 1], [64, 1]>, %{{.*}} <0, [2, 1], [64, 2]>
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @long_row(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x1024x16xf32>, %v: tensor<1x1x1024x16xf32>) -> (tensor<1x64x1x16xf32>, tensor<1x1x64xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<1x1x64x16xf32>, tensor<1x1x1024x16xf32>, tensor<1x1x1024x16xf32>) -> (tensor<1x64x1x16xf32>, tensor<1x1x64xf32>)
  return %o, %lse : tensor<1x64x1x16xf32>, tensor<1x1x64xf32>
}

// The gradient: P from lse (exp with the negated lse as bias), dP - D as a
// Scalar copy with bias, dK/dV summed in fp32 SBUF, dQ accumulated in PSUM.
// CHECK-LABEL: func.func @gradient
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.memset
// CHECK: nisa.tensor_reduce add
// CHECK: nisa.activation exp
// CHECK-SAME: bias
// CHECK: nisa.activation copy
// CHECK-SAME: bias
// CHECK: nisa.tensor_tensor multiply
// CHECK: nisa.tensor_tensor add
// The second key block's dQ term accumulates onto the first's.
// CHECK: nisa.matmul {{.*}} accumulate :
// CHECK: nisa.activation copy
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @gradient(%do: tensor<1x1x128x32xf32>, %q: tensor<1x1x128x32xf32>, %k: tensor<1x1x256x32xf32>, %v: tensor<1x1x256x32xf32>, %o: tensor<1x1x128x32xf32>, %lse: tensor<1x1x128xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x256x1x32xf32>, tensor<1x256x1x32xf32>) {
  %dq, %dk, %dv = trn.attention_grad %do, %q, %k, %v, %o, %lse {scale = 0.25 : f64} : (tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x256x1x32xf32>, tensor<1x256x1x32xf32>)
  return %dq, %dk, %dv : tensor<1x128x1x32xf32>, tensor<1x256x1x32xf32>, tensor<1x256x1x32xf32>
}
