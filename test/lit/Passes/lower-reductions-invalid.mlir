// RUN: trnc-opt %s --trnc-tile-lower-to-nisa -split-input-file -verify-diagnostics

// A softmax row must fit on chip: three fp32 row tiles in half of a
// partition (224 KiB on trn2, the default target: 9557 elements).
func.func @softmax_row_too_long(%x: tensor<2x10000xf32>) -> tensor<2x10000xf32> {
  // expected-error @+1 {{softmax rows of 10000 elements exceed the on-chip row limit (9557 for this target)}}
  %0 = trn.softmax %x dim = 1 : tensor<2x10000xf32>
  return %0 : tensor<2x10000xf32>
}
