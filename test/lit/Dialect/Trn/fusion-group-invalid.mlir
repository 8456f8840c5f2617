// The trn.fusion_group verifier: a known kind, a yield of the result types,
// trn members only, a row space for a row group, one leading matmul.
// RUN: trnc-opt %s -split-input-file -verify-diagnostics

func.func @kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be elementwise, rows or matmul, not 'loop'}}
  %0 = trn.fusion_group "loop" -> (tensor<4xf32>) {
    %1 = trn.exp %x : tensor<4xf32>
    trn.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields 0 values whose types must be the group's result types}}
  %0 = trn.fusion_group "elementwise" -> (tensor<4xf32>) {
    %1 = trn.exp %x : tensor<4xf32>
    trn.yield
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{body must hold at least one op}}
  trn.fusion_group "elementwise" {
    trn.yield
  }
  return
}

// -----

func.func @rows_without_space(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind rows needs its [K..., N] row_space}}
  %0 = trn.fusion_group "rows" -> (tensor<4xf32>) {
    %1 = trn.reduce_sum %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
    trn.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @matmul_first(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{of kind matmul must start with its trn.matmul}}
  %0 = trn.fusion_group "matmul" -> (tensor<4x4xf32>) {
    %1 = trn.exp %a : tensor<4x8xf32>
    %2 = trn.matmul %1, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    trn.yield %2 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = trn.fusion_group "elementwise" -> (tensor<4xf32>) {
    // expected-error @+1 {{cannot be a member of a fusion group (only trn ops, not nested groups)}}
    %1 = trn.fusion_group "elementwise" -> (tensor<4xf32>) {
      %2 = trn.exp %x : tensor<4xf32>
      trn.yield %2 : tensor<4xf32>
    }
    trn.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op 'trn.fusion_group'}}
  trn.yield %x : tensor<4xf32>
}
