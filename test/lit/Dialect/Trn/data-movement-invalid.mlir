// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @slice_oob(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{dim 1 reads elements 5..6 outside 0..5}}
  %0 = trn.slice %x starts = [0, 5] steps = [1, 1] : tensor<4x6xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @slice_flip_oob(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{dim 0 reads elements 1..-1 outside 0..3}}
  %0 = trn.slice %x starts = [1, 0] steps = [-1, 1] : tensor<4x6xf32> -> tensor<3x6xf32>
  return
}

// -----

func.func @concat_sum(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{inputs sum to 5 along dim 1, result has 6}}
  %0 = trn.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @concat_off_dim(%a: tensor<4x2xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{input shape differs from the result off dim 1}}
  %0 = trn.concat %a, %b dim = 1 : tensor<4x2xf32>, tensor<3x3xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @iota_rank() {
  // expected-error @+1 {{result must be 1-D}}
  %0 = trn.iota start = 0.0 step = 1.0 : tensor<2x3xf32>
  return
}

// -----

func.func @triangle_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{input must have at least 2 dims}}
  %0 = trn.triangle %x diagonal = 0 upper = false : tensor<4xf32> -> tensor<4xf32>
  return
}
