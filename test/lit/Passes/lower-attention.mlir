// trn.attention / trn.attention_grad lower as one group: q, k, v rows of a
// group of heads are loaded once (one DMA per operand and 128-row block, or
// per operand for the resident keys), transposed on the Tensor Engine, the
// scores stay in PSUM and SBUF (no HBM scratch), causal diagonal blocks get
// a -1e30 mask added by an identity matmul and key chunks above the diagonal
// are never computed.
// Rows longer than four PSUM banks (2048 keys) walk blocks of two banks with
// a running max and sum (online softmax).
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s
// No function of this file declares HBM scratch (the scores never reach HBM).
// RUN: trnc-opt %s --trnc-tile-lower-to-nisa | FileCheck %s --check-prefix=NOHBM
// NOHBM-NOT: nisa.dram_alloc

// CHECK-LABEL: func.func @causal_forward
// CHECK-NOT: nisa.dram_alloc
// V's rows carry a column of ones after the head's 32 columns.
// CHECK: nisa.memset %[[V:[0-9]+]] <32, [33, 33, 33], [128, 1, 1]>, 1.000000e+00
// Scores of the one 128-row block: Q^T [32, 128] x K^T [32, 128] into PSUM,
// then the mask (0 on and below the diagonal, -1e30 above) added as I^T . M.
// CHECK: nisa.matmul %[[S:[0-9]+]] <0, [128, 1], [128, 128]>, %{{.*}} <0, [128, 1], [32, 128]>, %{{.*}} <0, [128, 1], [32, 128]>
// CHECK: nisa.affine_select is_ge %[[M:[0-9]+]]
// CHECK-SAME: coefs = [1, -1], fill = -1.000000e+30
// CHECK: nisa.matmul %[[S]] <0, [128, 1], [128, 128]>, %{{.*}}, %[[M]] <0, [128, 1], [128, 128]> accumulate
// CHECK: nisa.tensor_reduce max %{{.*}}, %[[S]]
// CHECK: nisa.activation exp %{{.*}}, %[[S]] {{.*}} bias
// P^T, then [O | s] = P [V | 1]: the row sum in the last column, no Vector
// reduction.
// CHECK-NOT: nisa.tensor_reduce add
// CHECK: transpose :
// CHECK: nisa.matmul %[[O:[0-9]+]] <0, [33, 1], [128, 33]>, %{{.*}}, %[[V]] <0, [33, 1], [128, 33]>
// CHECK: nisa.tensor_copy %[[SUM:[0-9]+]] <0, [1, 1], [128, 1]>, %[[O]] <32, [33, 1], [128, 1]>
// CHECK: nisa.tensor_scalar {{.*}}, %[[O]] <0, [33, 1], [128, 32]> divide 0.000000e+00 per_partition %[[SUM]]
// lse = log(sum) - bias of every head, stored as a column per head.
// CHECK: nisa.activation log
// CHECK: nisa.tensor_tensor subtract %[[L:[0-9]+]]
// CHECK: nisa.dma_copy %arg4 <0, [1, 128], [128, 1]>, %[[L]] <0, [1, 1], [128, 1]>
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @causal_forward(%q: tensor<1x1x128x32xf32>, %k: tensor<1x1x128x32xf32>, %v: tensor<1x1x128x32xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x1x128xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64, causal} : (tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x128x1x32xf32>, tensor<1x1x128xf32>
}

// float16 ends at 65504: its causal mask and the identity adding it are bf16
// (same Tensor Engine rate), where -1e30 is finite; an f16 mask would be
// -inf, and 0 * -inf in the identity product NaN in every score.
// CHECK-LABEL: func.func @causal_forward_f16
// CHECK: nisa.matmul %[[S:[0-9]+]] <0, [128, 1], [128, 128]>, %{{.*}} <0, [128, 1], [32, 128]>, %{{.*}} <0, [128, 1], [32, 128]> : <psum, 128, 128, f32>, <sbuf, 32, 128, f16>, <sbuf, 32, 128, f16>
// CHECK: nisa.affine_select is_ge %[[M:[0-9]+]]
// CHECK-SAME: fill = -1.000000e+30 on gpsimd : <sbuf, 128, 128, bf16>
// CHECK: nisa.matmul %[[S]] <0, [128, 1], [128, 128]>, %{{.*}}, %[[M]] <0, [128, 1], [128, 128]> accumulate : <psum, 128, 128, f32>, <sbuf, 128, 128, bf16>, <sbuf, 128, 128, bf16>
// CHECK: nisa.activation exp %{{.*}}, %[[S]] {{.*}} : <sbuf, 128, 128, f16>
// CHECK: return
func.func @causal_forward_f16(%q: tensor<1x1x128x32xf16>, %k: tensor<1x1x128x32xf16>, %v: tensor<1x1x128x32xf16>) -> (tensor<1x128x1x32xf16>, tensor<1x1x128xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64, causal} : (tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16>, tensor<1x1x128x32xf16>) -> (tensor<1x128x1x32xf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x128x1x32xf16>, tensor<1x1x128xf32>
}

// Two 512-key chunks (two PSUM banks), no mask: one score tile over both
// banks, one row max and one exp over it.
// CHECK-LABEL: func.func @long_row
// CHECK-NOT: affine_select is_ge
// CHECK: nisa.matmul %[[S:[0-9]+]] <0, [1024, 1], [64, 512]>
// CHECK: nisa.matmul %[[S]] <512, [1024, 1], [64, 512]>
// CHECK: nisa.tensor_reduce max %{{.*}} <0, [1, 1], [64, 1]>, %[[S]] <0, [1024, 1], [64, 1024]>
// CHECK: nisa.activation exp %{{.*}} <0, [1024, 1], [64, 1024]>, %[[S]]
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @long_row(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x1024x16xf32>, %v: tensor<1x1x1024x16xf32>) -> (tensor<1x64x1x16xf32>, tensor<1x1x64xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<1x1x64x16xf32>, tensor<1x1x1024x16xf32>, tensor<1x1x1024x16xf32>) -> (tensor<1x64x1x16xf32>, tensor<1x1x64xf32>)
  return %o, %lse : tensor<1x64x1x16xf32>, tensor<1x1x64xf32>
}

// The gradient: V rows carry a column of ones and dO rows -D (from one
// reduce over the heads), so the dP matmul contracts over 33 rows and gives
// dP - D in PSUM; -lse is loaded as a column per head; P from lse (exp
// with -lse as bias), dS = (dP - D) * P straight from PSUM; dV and dK of both
// key blocks accumulate in PSUM (one bank each: block j at column j * 32),
// dQ in PSUM over the row; the results are written once, dq and dk scaled on
// the way out of PSUM.
// CHECK-LABEL: func.func @gradient
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %[[V:[0-9]+]] <0, [33, 33, 1], [128, 1, 32]>, %arg3 <0,
// CHECK: nisa.memset %[[V]] <32, [33, 33], [128, 1]>, 1.0
// CHECK: nisa.tensor_reduce add %[[D:[0-9]+]] <0, [1, 1], [128, 1]>, %{{.*}} <0, [32, 32, 1], [128, 1, 32]>
// CHECK: nisa.tensor_scalar %[[DO:[0-9]+]] <32, [33, 33], [128, 1]>, %[[D]] {{.*}} multiply -1.0
// CHECK: nisa.dma_copy %[[L:[0-9]+]] <0, [1, 1], [128, 1]>, %arg5 <0, [1, 128], [128, 1]>
// CHECK: nisa.tensor_scalar %{{.*}}, %[[L]] {{.*}} multiply -1.0
// CHECK: nisa.matmul %{{.*}} <0, [256, 1], [33, 128]>, %[[V]] <0, [33, 1], [128, 33]>, {{.*}} transpose
// CHECK: nisa.matmul %{{.*}} <0, [128, 1], [33, 128]>, %[[DO]] <0, [33, 1], [128, 33]>, {{.*}} transpose
// CHECK: nisa.activation exp %[[P:[0-9]+]] {{.*}} bias
// CHECK: nisa.matmul %[[DP:[0-9]+]] <0, [256, 1], [128, 256]>, %{{.*}} <0, [128, 1], [33, 128]>, %{{.*}} <0, [256, 1], [33, 256]>
// CHECK-NOT: nisa.activation copy
// CHECK: nisa.tensor_tensor multiply %{{.*}}, %[[DP]] <0, [256, 1], [128, 256]>, %[[P]]
// CHECK: nisa.matmul %[[DV:[0-9]+]] <0, [64, 1], [128, 32]>, %[[P]] {{.*}}, %[[DO]] <0, [33, 1], [128, 32]>
// CHECK: nisa.matmul %[[DK:[0-9]+]] <0, [64, 1], [128, 32]>
// CHECK: nisa.matmul %[[DQ:[0-9]+]] <0, [32, 1], [128, 32]>
// CHECK: nisa.matmul %[[DV]] <32, [64, 1], [128, 32]>
// CHECK: nisa.matmul %[[DK]] <32, [64, 1], [128, 32]>
// The second key block's dQ term accumulates onto the first's.
// CHECK: nisa.matmul %[[DQ]] {{.*}} accumulate :
// CHECK-NOT: nisa.tensor_tensor add
// CHECK: nisa.tensor_scalar %{{.*}}, %[[DQ]] {{.*}} multiply 2.500000e-01
// CHECK: nisa.tensor_scalar %{{.*}} <0, [64, 32, 1], [128, 2, 32]>, %[[DK]] <0, [64, 32, 1], [128, 2, 32]> multiply 2.500000e-01
// CHECK: nisa.tensor_copy %{{.*}} <0, [64, 32, 1], [128, 2, 32]>, %[[DV]]
// CHECK-NOT: nisa.dram_alloc
// CHECK: return
func.func @gradient(%do: tensor<1x1x128x32xf32>, %q: tensor<1x1x128x32xf32>, %k: tensor<1x1x256x32xf32>, %v: tensor<1x1x256x32xf32>, %o: tensor<1x1x128x32xf32>, %lse: tensor<1x1x128xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x256x1x32xf32>, tensor<1x256x1x32xf32>) {
  %dq, %dk, %dv = trn.attention_grad %do, %q, %k, %v, %o, %lse {scale = 0.25 : f64} : (tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128xf32>) -> (tensor<1x128x1x32xf32>, tensor<1x256x1x32xf32>, tensor<1x256x1x32xf32>)
  return %dq, %dk, %dv : tensor<1x128x1x32xf32>, tensor<1x256x1x32xf32>, tensor<1x256x1x32xf32>
}

// A 16-bit gradient folds -D as two columns, hi = -D rounded to bf16 and
// lo = -D - hi (V carries two columns of ones): one bf16 column would round
// -D to 8 bits, an error in every dP - D of the row. dO^T and V^T contract
// over 34 rows.
// CHECK-LABEL: func.func @gradient_bf16
// CHECK: nisa.dma_copy %[[V:[0-9]+]] <0, [34, 34, 1], [128, 1, 32]>, %arg3 <0,
// CHECK: nisa.memset %[[V]] <32, [34, 34, 1], [128, 1, 2]>, 1.0
// CHECK: nisa.dma_copy %[[DO:[0-9]+]] <0, [34, 34, 1], [128, 1, 32]>, %arg0 <0,
// CHECK: nisa.tensor_reduce add %[[D:[0-9]+]] <0, [1, 1], [128, 1]>
// CHECK: nisa.tensor_scalar %[[ND:[0-9]+]] <0, [1, 1], [128, 1]>, %[[D]] {{.*}} multiply -1.0
// CHECK: nisa.tensor_copy %[[DO]] <32, [34, 34], [128, 1]>, %[[ND]] <0, [1, 1], [128, 1]> on vector : <sbuf, 128, 34, bf16>, <sbuf, 128, 1, f32>
// CHECK: nisa.tensor_tensor subtract %[[DO]] <33, [34, 34], [128, 1]>, %[[ND]] <0, [1, 1], [128, 1]>, %[[DO]] <32, [34, 34], [128, 1]>
// CHECK: nisa.matmul %{{.*}} <0, [256, 1], [34, 128]>, %[[V]] <0, [34, 1], [128, 34]>, {{.*}} transpose
// CHECK: nisa.matmul %{{.*}} <0, [128, 1], [34, 128]>, %[[DO]] <0, [34, 1], [128, 34]>, {{.*}} transpose
// CHECK: nisa.matmul %{{.*}} <0, [256, 1], [128, 256]>, %{{.*}} <0, [128, 1], [34, 128]>, %{{.*}} <0, [256, 1], [34, 256]>
// CHECK: return
func.func @gradient_bf16(%do: tensor<1x1x128x32xbf16>, %q: tensor<1x1x128x32xbf16>, %k: tensor<1x1x256x32xbf16>, %v: tensor<1x1x256x32xbf16>, %o: tensor<1x1x128x32xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x128x1x32xbf16>, tensor<1x256x1x32xbf16>, tensor<1x256x1x32xbf16>) {
  %dq, %dk, %dv = trn.attention_grad %do, %q, %k, %v, %o, %lse {scale = 0.25 : f64} : (tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x256x32xbf16>, tensor<1x1x256x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128xf32>) -> (tensor<1x128x1x32xbf16>, tensor<1x256x1x32xbf16>, tensor<1x256x1x32xbf16>)
  return %dq, %dk, %dv : tensor<1x128x1x32xbf16>, tensor<1x256x1x32xbf16>, tensor<1x256x1x32xbf16>
}

// 4096 keys: four softmax blocks of two 512-key chunks. The first sets the
// row max and moves its [O | s] = P [V | 1] (the row sum in the last column)
// out of PSUM; each later one takes the larger max, rescales the fp32
// output and sum by exp(scale * (m - m')) and adds its own, then out = O / s
// once.
// CHECK-LABEL: func.func @online_softmax
// CHECK: nisa.memset %[[V:[0-9]+]] <64, [2080, 65, 65], [128, 32, 1]>, 1.000000e+00
// CHECK: nisa.tensor_reduce max %[[M0:[0-9]+]] <0, [1, 1], [128, 1]>, %{{.*}} <0, [1024, 1], [128, 1024]>
// CHECK: nisa.tensor_scalar %[[B0:[0-9]+]] {{.*}}, %[[M0]] {{.*}} multiply -1.250000e-01
// CHECK: nisa.activation exp %[[P0:[0-9]+]] <0, [1024, 1], [128, 1024]>, %{{.*}} bias %[[B0]]
// CHECK-NOT: nisa.tensor_reduce add
// CHECK: nisa.matmul %[[O0:[0-9]+]] <0, [65, 1], [128, 65]>, %{{.*}}, %[[V]] <0, [2080, 1], [128, 65]>
// CHECK: nisa.matmul %[[O0]] <0, [65, 1], [128, 65]>{{.*}} accumulate
// CHECK: %[[ACC:[0-9]+]] = nisa.alloc : <sbuf, 128, 65, f32>
// CHECK: %[[ACC]] <0, [65, 1], [128, 65]>, %[[O0]]
// Second block: scores of keys 1024.. (K^T columns from 1024).
// CHECK: nisa.matmul {{.*}} <1024, [4096, 1], [64, 512]>
// CHECK: nisa.tensor_reduce max %[[BM1:[0-9]+]] <0, [1, 1], [128, 1]>, %{{.*}} <0, [1024, 1], [128, 1024]>
// CHECK: nisa.tensor_tensor max %[[M1:[0-9]+]] {{.*}}, %[[M0]] {{.*}}, %[[BM1]]
// CHECK: nisa.tensor_scalar %[[B1:[0-9]+]] {{.*}}, %[[M1]] {{.*}} multiply -1.250000e-01
// CHECK: nisa.activation exp %[[P1:[0-9]+]] <0, [1024, 1], [128, 1024]>, %{{.*}} bias %[[B1]]
// CHECK: nisa.matmul %[[O1:[0-9]+]] <0, [65, 1], [128, 65]>, %{{.*}}, %[[V]] <520, [2080, 1], [128, 65]>
// CHECK: nisa.activation exp %[[F:[0-9]+]] <0, [1, 1], [128, 1]>, %[[M0]] <0, [1, 1], [128, 1]> bias %[[B1]] {{.*}}scale = 1.250000e-01
// CHECK: nisa.tensor_scalar %[[ACC]] {{.*}}, %[[ACC]] {{.*}} multiply 0.000000e+00 per_partition %[[F]] <0, [1, 1], [128, 1]>
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]] {{.*}}, %[[O1]]
// Blocks three and four: the same, into the same output sum; the row sum
// goes to the lse column tile.
// CHECK: nisa.matmul {{.*}} <2048, [4096, 1], [64, 512]>
// CHECK: nisa.tensor_tensor max
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]]
// CHECK: nisa.matmul {{.*}} <3072, [4096, 1], [64, 512]>
// CHECK: nisa.tensor_tensor max
// CHECK: nisa.tensor_tensor add %[[ACC]] {{.*}}, %[[ACC]]
// CHECK: nisa.tensor_copy %[[SN:[0-9]+]] <0, [1, 1], [128, 1]>, %[[ACC]] <64, [65, 1], [128, 1]>
// CHECK: nisa.tensor_scalar %{{.*}}, %[[ACC]] <0, [65, 1], [128, 64]> divide 0.000000e+00 per_partition %[[SN]] <0, [1, 1], [128, 1]>
// CHECK: nisa.activation log %{{.*}}, %[[SN]]
// CHECK-NOT: nisa.tensor_tensor divide
// CHECK: return
func.func @online_softmax(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x4096x64xbf16>, %v: tensor<1x1x4096x64xbf16>) -> (tensor<1x128x1x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x1x128x64xbf16>, tensor<1x1x4096x64xbf16>, tensor<1x1x4096x64xbf16>) -> (tensor<1x128x1x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x128x1x64xbf16>, tensor<1x1x128xf32>
}

// Causal, 2176 queries and keys: the first 16 query blocks reach <= 2048
// keys (one softmax block each, no rescaling); the last one's third block is
// the 128 keys 2048..2175, masked on its diagonal (the mask added at key
// 2048 - 2048 = 0 of that block).
// CHECK-LABEL: func.func @online_causal
// CHECK-NOT: nisa.tensor_tensor max
// CHECK-COUNT-16: nisa.tensor_scalar {{.*}} divide 0.000000e+00 per_partition
// CHECK-NOT: nisa.tensor_tensor divide
// CHECK: nisa.matmul %[[S:[0-9]+]] {{.*}} <2048, [2176, 1], [16, 128]>
// CHECK: nisa.matmul %[[S]] <0, [128, 1], [128, 128]>, {{.*}} accumulate
// CHECK: nisa.tensor_tensor max
// CHECK: nisa.tensor_scalar {{.*}} divide 0.000000e+00 per_partition
// CHECK: return
func.func @online_causal(%q: tensor<1x1x2176x16xf32>, %k: tensor<1x1x2176x16xf32>, %v: tensor<1x1x2176x16xf32>) -> (tensor<1x2176x1x16xf32>, tensor<1x1x2176xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64, causal} : (tensor<1x1x2176x16xf32>, tensor<1x1x2176x16xf32>, tensor<1x1x2176x16xf32>) -> (tensor<1x2176x1x16xf32>, tensor<1x1x2176xf32>)
  return %o, %lse : tensor<1x2176x1x16xf32>, tensor<1x1x2176xf32>
}

// A model's attention: 4 heads of 32 as views of one packed [B, T, 3C]
// activation (row stride 384). The group's keys and values are one DMA each
// (both 128-row blocks, 4 heads x 32 contiguous = 256 B rows; in the values'
// tile each head's 32 columns are followed by its column of ones), the
// queries of a block one DMA, and the output block one DMA of 4 heads; lse
// columns of 4 heads x 128 queries one DMA.
// CHECK-LABEL: func.func @packed_heads
// CHECK: nisa.dma_copy %{{.*}} <0, [256, 128, 32, 1], [128, 2, 4, 32]>, %arg0 <128, [384, 49152, 32, 1], [128, 2, 4, 32]>
// CHECK: nisa.dma_copy %{{.*}} <0, [264, 132, 33, 1], [128, 2, 4, 32]>, %arg0 <256, [384, 49152, 32, 1], [128, 2, 4, 32]>
// CHECK: nisa.dma_copy %{{.*}} <0, [128, 32, 1], [128, 4, 32]>, %arg0 <0, [384, 32, 1], [128, 4, 32]>
// CHECK-COUNT-4: nisa.tensor_scalar {{.*}} divide 0.000000e+00 per_partition
// CHECK: nisa.dma_copy %arg1 <0, [128, 32, 1], [128, 4, 32]>, %{{.*}} <0, [128, 1], [128, 128]>
// CHECK: nisa.dma_copy %arg2 <0, [1, 256], [128, 4]>
// CHECK: nisa.dma_copy %{{.*}} <0, [128, 32, 1], [128, 4, 32]>, %arg0 <49152, [384, 32, 1], [128, 4, 32]>
// CHECK: return
func.func @packed_heads(%qkv: tensor<1x256x384xbf16>) -> (tensor<1x256x4x32xbf16>, tensor<1x4x256xf32>) {
  %q0 = trn.slice %qkv starts = [0, 0, 0] steps = [1, 1, 1] : tensor<1x256x384xbf16> -> tensor<1x256x128xbf16>
  %k0 = trn.slice %qkv starts = [0, 0, 128] steps = [1, 1, 1] : tensor<1x256x384xbf16> -> tensor<1x256x128xbf16>
  %v0 = trn.slice %qkv starts = [0, 0, 256] steps = [1, 1, 1] : tensor<1x256x384xbf16> -> tensor<1x256x128xbf16>
  %q1 = trn.reshape %q0 : tensor<1x256x128xbf16> -> tensor<1x256x4x32xbf16>
  %k1 = trn.reshape %k0 : tensor<1x256x128xbf16> -> tensor<1x256x4x32xbf16>
  %v1 = trn.reshape %v0 : tensor<1x256x128xbf16> -> tensor<1x256x4x32xbf16>
  %q = trn.transpose %q1 permutation = [0, 2, 1, 3] : tensor<1x256x4x32xbf16> -> tensor<1x4x256x32xbf16>
  %k = trn.transpose %k1 permutation = [0, 2, 1, 3] : tensor<1x256x4x32xbf16> -> tensor<1x4x256x32xbf16>
  %v = trn.transpose %v1 permutation = [0, 2, 1, 3] : tensor<1x256x4x32xbf16> -> tensor<1x4x256x32xbf16>
  %o, %lse = trn.attention %q, %k, %v {scale = 0.125 : f64, causal} : (tensor<1x4x256x32xbf16>, tensor<1x4x256x32xbf16>, tensor<1x4x256x32xbf16>) -> (tensor<1x256x4x32xbf16>, tensor<1x4x256xf32>)
  return %o, %lse : tensor<1x256x4x32xbf16>, tensor<1x4x256xf32>
}

// The causal gradient masks P (not S) on the diagonal: affine_select keeps
// p - f >= 0 of the exp's output and fills 0; no mask matmul.
// CHECK-LABEL: func.func @causal_gradient
// CHECK: nisa.activation exp %[[P:[0-9]+]] <0, [128, 1], [128, 128]>
// CHECK-NEXT: nisa.affine_select is_ge %[[P]] <0, [128, 1], [128, 128]>, %[[P]] <0, [128, 1], [128, 128]>, offset = 0.000000e+00, coefs = [1, -1], fill = 0.000000e+00
// CHECK-NOT: accumulate : <psum, 128, 128
// CHECK: return
func.func @causal_gradient(%do: tensor<1x1x128x32xbf16>, %q: tensor<1x1x128x32xbf16>, %o: tensor<1x1x128x32xbf16>, %lse: tensor<1x1x128xf32>) -> (tensor<1x128x1x32xbf16>, tensor<1x128x1x32xbf16>, tensor<1x128x1x32xbf16>) {
  %dq, %dk, %dv = trn.attention_grad %do, %q, %q, %q, %o, %lse {scale = 0.25 : f64, causal} : (tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128xf32>) -> (tensor<1x128x1x32xbf16>, tensor<1x128x1x32xbf16>, tensor<1x128x1x32xbf16>)
  return %dq, %dk, %dv : tensor<1x128x1x32xbf16>, tensor<1x128x1x32xbf16>, tensor<1x128x1x32xbf16>
}

// The gradient of a split qkv: dq, dk, dv (through reshapes) are the inputs of
// one concat, so they are written straight into their windows of its
// destination (here the function's output) and the concat copies nothing.
// CHECK-LABEL: func.func @gradient_into_concat
// CHECK-NOT: nisa.dram_alloc
// CHECK: nisa.dma_copy %arg6 <0, [192, 32, 1], [128, 2, 32]>
// CHECK: nisa.dma_copy %arg6 <64, [192, 24576, 32, 1], [128, 1, 2, 32]>
// CHECK: nisa.dma_copy %arg6 <128, [192, 24576, 32, 1], [128, 1, 2, 32]>
// CHECK-NOT: nisa.dma_copy
// CHECK: return
func.func @gradient_into_concat(%do: tensor<1x2x128x32xbf16>, %q: tensor<1x2x128x32xbf16>, %k: tensor<1x2x128x32xbf16>, %v: tensor<1x2x128x32xbf16>, %o: tensor<1x2x128x32xbf16>, %lse: tensor<1x2x128xf32>) -> tensor<1x128x192xbf16> {
  %dq, %dk, %dv = trn.attention_grad %do, %q, %k, %v, %o, %lse {scale = 0.25 : f64, causal} : (tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128x32xbf16>, tensor<1x2x128xf32>) -> (tensor<1x128x2x32xbf16>, tensor<1x128x2x32xbf16>, tensor<1x128x2x32xbf16>)
  %a = trn.reshape %dq : tensor<1x128x2x32xbf16> -> tensor<1x128x64xbf16>
  %b = trn.reshape %dk : tensor<1x128x2x32xbf16> -> tensor<1x128x64xbf16>
  %c = trn.reshape %dv : tensor<1x128x2x32xbf16> -> tensor<1x128x64xbf16>
  %cat = trn.concat %a, %b, %c dim = 2 : tensor<1x128x64xbf16>, tensor<1x128x64xbf16>, tensor<1x128x64xbf16> -> tensor<1x128x192xbf16>
  return %cat : tensor<1x128x192xbf16>
}

// Three batch elements of two heads (one group each): the first group is
// emitted as it is (it builds the identity and the causal mask every group
// shares), the other two are one loop over a group whose q, k, v, out and
// lse are windows moving one batch element per iteration; the body builds
// no identity or mask of its own.
// CHECK-LABEL: func.func @batch_loop
// CHECK-COUNT-2: nisa.affine_select
// CHECK: scf.for %[[I:[a-z0-9]+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: nisa.hbm_window %arg0[%[[I]] * 8192] : memref<24576xf32>
// CHECK-NEXT: nisa.hbm_window %arg1[%[[I]] * 8192] : memref<24576xf32>
// CHECK-NEXT: nisa.hbm_window %arg2[%[[I]] * 8192] : memref<24576xf32>
// CHECK-NEXT: nisa.hbm_window %arg3[%[[I]] * 8192] : memref<24576xf32>
// CHECK-NEXT: nisa.hbm_window %arg4[%[[I]] * 256] : memref<768xf32>
// CHECK-NOT: nisa.affine_select
// CHECK: return
func.func @batch_loop(%q: tensor<3x2x128x32xf32>, %k: tensor<3x2x128x32xf32>, %v: tensor<3x2x128x32xf32>) -> (tensor<3x128x2x32xf32>, tensor<3x2x128xf32>) {
  %o, %lse = trn.attention %q, %k, %v {scale = 0.25 : f64, causal} : (tensor<3x2x128x32xf32>, tensor<3x2x128x32xf32>, tensor<3x2x128x32xf32>) -> (tensor<3x128x2x32xf32>, tensor<3x2x128xf32>)
  return %o, %lse : tensor<3x128x2x32xf32>, tensor<3x2x128xf32>
}
