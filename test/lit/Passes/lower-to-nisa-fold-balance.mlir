// Immediate arithmetic folded into the instruction reading it (foldSteps,
// ElementwiseSteps.h) and the group's instructions spread over Vector,
// Scalar and GpSimd by the simulator's costs (EngineBalance.h).
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | FileCheck %s
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups --trnc-tile-lower-to-nisa --trnc-unroll-tile-loops | trnc-opt -split-input-file > /dev/null

// A bf16 GELU gradient as a matmul epilogue: 11 fp32 ops become 7
// instructions. x * 0.7071 is erf's input scale; (+1) * 0.5 one two-op
// tensor_scalar; * -0.5 then exp then * 0.3989 one exp with scale -0.5 and
// bias ln(0.3989). The tensor_tensor ops do not all stay on Vector.
// CHECK-LABEL: func.func @gelu_backward
// CHECK: nisa.activation erf %{{[0-9]+}} {{.*}} {scale = 0.707106769 : f32}
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.tensor_scalar {{.*}} add 1.000000e+00, multiply 5.000000e-01 on
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.tensor_tensor multiply
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.activation exp {{.*}} {bias_imm = -0.918938517 : f32, scale = -5.000000e-01 : f32}
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.tensor_tensor multiply
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.tensor_tensor add
// CHECK-NEXT: nisa.alloc
// CHECK-NEXT: nisa.tensor_tensor multiply
// CHECK: on gpsimd
// CHECK: return
func.func @gelu_backward(%g: tensor<256x256xbf16>, %w: tensor<256x512xbf16>, %x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %0 = trn.matmul %g, %w : (tensor<256x256xbf16>, tensor<256x512xbf16>) -> tensor<256x512xbf16>
  %1 = trn.convert %0 : tensor<256x512xbf16> -> tensor<256x512xf32>
  %2 = trn.convert %x : tensor<256x512xbf16> -> tensor<256x512xf32>
  %3 = trn.mul_scalar %2, 0.70710678118654757 : tensor<256x512xf32>
  %4 = trn.erf %3 : tensor<256x512xf32>
  %5 = trn.add_scalar %4, 1.000000e+00 : tensor<256x512xf32>
  %6 = trn.mul_scalar %5, 5.000000e-01 : tensor<256x512xf32>
  %7 = trn.mul %2, %2 : tensor<256x512xf32>
  %8 = trn.mul_scalar %7, -5.000000e-01 : tensor<256x512xf32>
  %9 = trn.exp %8 : tensor<256x512xf32>
  %10 = trn.mul_scalar %9, 0.3989422804014327 : tensor<256x512xf32>
  %11 = trn.mul %2, %10 : tensor<256x512xf32>
  %12 = trn.add %6, %11 : tensor<256x512xf32>
  %13 = trn.mul %1, %12 : tensor<256x512xf32>
  %14 = trn.convert %13 : tensor<256x512xf32> -> tensor<256x512xbf16>
  return %14 : tensor<256x512xbf16>
}

// -----

// The same gradient as the importer now emits it (aten.gelu_backward kept):
// gelu'(x) is one Scalar activation, then one multiply by the product.
// CHECK-LABEL: func.func @gelu_dx_backward
// CHECK-NOT: nisa.activation {{erf|exp}}
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.activation gelu_dx
// CHECK: nisa.tensor_tensor multiply
// CHECK: nisa.activation gelu_dx
// CHECK: nisa.tensor_tensor multiply
// CHECK-NOT: nisa.activation {{erf|exp}}
// CHECK-NOT: nisa.tensor_scalar
// CHECK: return
func.func @gelu_dx_backward(%g: tensor<256x256xbf16>, %w: tensor<256x512xbf16>, %x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %0 = trn.matmul %g, %w : (tensor<256x256xbf16>, tensor<256x512xbf16>) -> tensor<256x512xbf16>
  %1 = trn.convert %0 : tensor<256x512xbf16> -> tensor<256x512xf32>
  %2 = trn.convert %x : tensor<256x512xbf16> -> tensor<256x512xf32>
  %3 = trn.gelu_dx %2 : tensor<256x512xf32>
  %4 = trn.mul %1, %3 : tensor<256x512xf32>
  %5 = trn.convert %4 : tensor<256x512xf32> -> tensor<256x512xbf16>
  return %5 : tensor<256x512xbf16>
}

// -----

// A value read twice, or stored, is not folded: x * 2 is returned, so it
// is computed on its own; the sqrt of x - 1 takes the subtract as its bias.
// CHECK-LABEL: func.func @not_folded
// CHECK: nisa.tensor_scalar {{.*}} multiply 2.000000e+00, bypass
// CHECK: nisa.activation sqrt {{.*}} {bias_imm = -1.000000e+00 : f32}
// CHECK-NOT: nisa.tensor_scalar {{.*}} subtract
// CHECK: return
func.func @not_folded(%x: tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>) {
  %0 = trn.mul_scalar %x, 2.000000e+00 : tensor<128x64xf32>
  %c = trn.full 1.000000e+00 : tensor<f32>
  %b = trn.broadcast %c : tensor<f32> -> tensor<128x64xf32>
  %1 = trn.sub %x, %b : tensor<128x64xf32>
  %2 = trn.sqrt %1 : tensor<128x64xf32>
  return %0, %2 : tensor<128x64xf32>, tensor<128x64xf32>
}

// -----

// In a row group the same folds apply: exp(x * 0.5) * 2 summed over the row
// is one exp with scale 0.5 and bias ln 2 before the blocked reduction.
// CHECK-LABEL: func.func @row_group
// CHECK: nisa.activation exp {{.*}} {bias_imm = 0.693147182 : f32, scale = 5.000000e-01 : f32}
// CHECK-NOT: nisa.tensor_scalar
// CHECK: nisa.tensor_reduce add
// CHECK: return
func.func @row_group(%x: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %0 = trn.mul_scalar %x, 5.000000e-01 : tensor<256x64xf32>
  %1 = trn.exp %0 : tensor<256x64xf32>
  %2 = trn.mul_scalar %1, 2.000000e+00 : tensor<256x64xf32>
  %3 = trn.reduce_sum %2 dims = [1] : tensor<256x64xf32> -> tensor<256xf32>
  %4 = trn.reshape %3 : tensor<256xf32> -> tensor<256x1xf32>
  %5 = trn.broadcast %4 : tensor<256x1xf32> -> tensor<256x64xf32>
  %6 = trn.div %2, %5 : tensor<256x64xf32>
  return %6 : tensor<256x64xf32>
}

// -----

// Rows of 8192 fp32: a task's tiles take more than half of the SBUF a row
// group may use, so tasks cannot overlap and each is placed from a common
// start. Every op of the chain then ends first on Vector (GpSimd's
// tensor_tensor is slower), also in the second task, where an idle GpSimd
// would otherwise look free while Vector still ran the first task's chain.
// CHECK-LABEL: func.func @wide_rows
// CHECK-NOT: on gpsimd
// CHECK: return
func.func @wide_rows(%x: tensor<256x8192xf32>, %y: tensor<256x8192xf32>) -> tensor<256x8192xf32> {
  %0 = trn.mul %x, %y : tensor<256x8192xf32>
  %1 = trn.mul %0, %x : tensor<256x8192xf32>
  %2 = trn.reduce_sum %1 dims = [1] : tensor<256x8192xf32> -> tensor<256xf32>
  %3 = trn.reshape %2 : tensor<256xf32> -> tensor<256x1xf32>
  %4 = trn.broadcast %3 : tensor<256x1xf32> -> tensor<256x8192xf32>
  %5 = trn.sub %1, %4 : tensor<256x8192xf32>
  %6 = trn.mul %5, %y : tensor<256x8192xf32>
  return %6 : tensor<256x8192xf32>
}
