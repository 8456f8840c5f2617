// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown collective kind 'all_scatter'}}
  %0 = trn.collective "all_scatter" %x {reduce_op = "", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce(%x: tensor<4xf32>) {
  // expected-error @+1 {{all_reduce needs a reduce_op of sum, avg, product, min or max, got 'band'}}
  %0 = trn.collective "all_reduce" %x {reduce_op = "band", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @no_reduce(%x: tensor<4xf32>) {
  // expected-error @+1 {{all_gather takes no reduce_op}}
  %0 = trn.collective "all_gather" %x {reduce_op = "sum", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{rank 2 of the group is outside the world of 2 or repeated}}
  %0 = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 2>, world_size = 2, root = 0, id = 0} : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @gather_shape(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{result shape does not match what all_gather over 2 ranks gives}}
  %0 = trn.collective "all_gather" %x {reduce_op = "", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<4x3xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @scatter_split(%x: tensor<5xf32>) {
  // expected-error @+1 {{reduce_scatter: dim 0 (5) does not divide by the group size 2}}
  %0 = trn.collective "reduce_scatter" %x {reduce_op = "sum", ranks = array<i64: 0, 1>, world_size = 2, root = 0, id = 0} : tensor<5xf32> -> tensor<2xf32>
  return
}
