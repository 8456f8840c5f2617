// Verifier rules of trn.matmul with a batch dim and trn.conv2d.
// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @bmm_batch(%a: tensor<2x8x16xf32>, %b: tensor<3x16x4xf32>) {
  // expected-error @+1 {{batch sizes differ: 2, 3 -> 2}}
  %0 = trn.matmul %a, %b : (tensor<2x8x16xf32>, tensor<3x16x4xf32>) -> tensor<2x8x4xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{groups = 4 must divide input channels 4 and output channels 6}}
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 4 : i64, flip = false}
       : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{weight has 3 channels per group, input needs 4}}
  %0 = trn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{stride, dilation and lhs_dilation must be >= 1}}
  %0 = trn.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 0, 0>,
         dilation = array<i64: 1, 1>, lhs_dilation = array<i64: 1, 1>,
         groups = 1 : i64, flip = false}
       : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}
