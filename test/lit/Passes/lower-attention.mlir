// trn.attention / trn.attention_grad lower as one group: q, k, v rows are
// loaded once, transposed on the Tensor Engine, the scores stay in PSUM and
// SBUF (no HBM scratch), causal blocks are masked by affine_select and key
// chunks above the diagonal are never computed.
// Rows longer than four PSUM banks (2048 keys) walk blocks of two banks with
// a running max and sum (online softmax).
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// No function of this file declares HBM scratch (the scores never reach HBM).
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s --check-prefix=NOHBM
// NOHBM-NOT: nisa.dram_alloc

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

// 4096 keys: four softmax blocks of two 512-key chunks. The first sets the
// row max and sum and moves its P V out of PSUM; each later one takes the
// larger max, rescales the sum and the fp32 output by exp(scale * (m - m'))
// and adds its own, then out = O / s once.
// CHECK-LABEL: func.func @online_softmax
// CHECK-COUNT-2: nisa.tensor_reduce max %[[PART0:[0-9]+]] <{{[01]}}, [2, 1], [128, 1]>
// CHECK: nisa.tensor_reduce max %[[M0:[0-9]+]] <0, [1, 1], [128, 1]>, %[[PART0]]
// CHECK: nisa.tensor_scalar %[[B0:[0-9]+]] {{.*}}, %[[M0]] {{.*}} multiply -1.250000e-01
// CHECK-COUNT-2: nisa.activation exp %[[P0:[0-9]+]] <{{[0-9]+}}, [1024, 1], [128, 512]>, %{{.*}} bias %[[B0]]
// CHECK: nisa.tensor_reduce add %[[S0:[0-9]+]] {{.*}}, %[[P0]]
// CHECK: nisa.matmul %[[O0:[0-9]+]] <0, [64, 1], [128, 64]>
// CHECK: nisa.matmul %[[O0]] <0, [64, 1], [128, 64]>{{.*}} accumulate
// CHECK: %[[ACC:[0-9]+]] = nisa.alloc : <sbuf, 128, 64, f32>
// CHECK: %[[ACC]] <0, [64, 1], [128, 64]>, %[[O0]]
// Second block: scores of keys 1024.. (K^T columns from 1024).
// CHECK: nisa.matmul {{.*}} <1024, [4096, 1], [64, 512]>
// CHECK-COUNT-2: nisa.tensor_reduce max %[[PART1:[0-9]+]] <{{[01]}}, [2, 1], [128, 1]>
// CHECK: nisa.tensor_reduce max %[[BM1:[0-9]+]] <0, [1, 1], [128, 1]>, %[[PART1]]
// CHECK: nisa.tensor_tensor max %[[M1:[0-9]+]] {{.*}}, %[[M0]] {{.*}}, %[[BM1]]
// CHECK: nisa.tensor_scalar %[[B1:[0-9]+]] {{.*}}, %[[M1]] {{.*}} multiply -1.250000e-01
// CHECK-COUNT-2: nisa.activation exp %[[P1:[0-9]+]] <{{[0-9]+}}, [1024, 1], [128, 512]>, %{{.*}} bias %[[B1]]
// CHECK: nisa.tensor_reduce add %[[S1:[0-9]+]] {{.*}}, %[[P1]]
// CHECK: nisa.matmul %[[O1:[0-9]+]] <0, [64, 1], [128, 64]>
// CHECK: nisa.activation exp %[[F:[0-9]+]] <0, [1, 1], [128, 1]>, %[[M0]] <0, [1, 1], [128, 1]> bias %[[B1]] {{.*}}scale = 1.250000e-01
// CHECK: nisa.tensor_tensor multiply %[[T:[0-9]+]] {{.*}}, %[[S0]] {{.*}}, %[[F]]
// CHECK: nisa.tensor_tensor add %[[S:[0-9]+]] {{.*}}, %[[T]] {{.*}}, %[[S1]]
// CHECK: nisa.tensor_tensor multiply %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[F]] <0, [1, 0], [128, 64]>
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[O1]]
// Blocks three and four: the same, into the same output sum.
// CHECK: nisa.matmul {{.*}} <2048, [4096, 1], [64, 512]>
// CHECK: nisa.tensor_tensor max
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]]
// CHECK: nisa.matmul {{.*}} <3072, [4096, 1], [64, 512]>
// CHECK: nisa.tensor_tensor max
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]]
// CHECK: nisa.tensor_tensor divide %{{.*}}, %[[ACC]] {{.*}}, %[[SN:[0-9]+]] <0, [1, 0], [128, 64]>
// CHECK: nisa.activation log %{{.*}}, %[[SN]]
// CHECK-NOT: nisa.tensor_tensor divide
// CHECK: return
func.func @online_softmax(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x4096x64xbf16>, %v: tensor<1x1x4096x64xbf16>) -> (tensor<1x128x1x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x1x128x64xbf16>, tensor<1x1x4096x64xbf16>, tensor<1x1x4096x64xbf16>) -> (tensor<1x128x1x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x128x1x64xbf16>, tensor<1x1x128xf32>
}

// Causal, 2176 queries and keys: the first 16 query blocks reach <= 2048
// keys (one softmax block each, no rescaling); the last one's third block is
// the 128 keys 2048..2175, masked on its diagonal (keep where p - f >= 0).
// CHECK-LABEL: func.func @online_causal
// CHECK-NOT: nisa.tensor_tensor max
// CHECK-COUNT-16: nisa.tensor_tensor divide
// CHECK-NOT: nisa.tensor_tensor divide
// CHECK: nisa.matmul {{.*}} <2048, [2176, 1], [16, 128]>
// CHECK: nisa.affine_select is_ge {{.*}} <0, [128, 1], [128, 128]>
// CHECK-SAME: offset = 0.000000e+00
// CHECK: nisa.tensor_tensor max
// CHECK: nisa.tensor_tensor divide
// CHECK: return
func.func @online_causal(%q: tensor<1x1x2176x16xf32>, %k: tensor<1x1x2176x16xf32>, %v: tensor<1x1x2176x16xf32>) -> (tensor<1x2176x1x16xf32>, tensor<1x1x2176xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64, causal} : (tensor<1x1x2176x16xf32>, tensor<1x1x2176x16xf32>, tensor<1x1x2176x16xf32>) -> (tensor<1x2176x1x16xf32>, tensor<1x1x2176xf32>)
  return %o, %lse : tensor<1x2176x1x16xf32>, tensor<1x1x2176xf32>
}
