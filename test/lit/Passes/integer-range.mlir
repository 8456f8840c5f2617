// RUN: trnc-opt %s --split-input-file --trnc-trn-integer-range --verify-diagnostics | FileCheck %s

// Exact for every input: integers only moved, compared or converted; the
// module gets no bounds.
// CHECK: module {
// CHECK-NEXT: func.func @moved
func.func @moved(%i: tensor<8xi64>, %j: tensor<8xi32>) -> (tensor<16xi64>, tensor<8xi1>, tensor<8xf32>) {
  %0 = trn.convert %j : tensor<8xi32> -> tensor<8xi64>
  %1 = trn.concat %i, %0 dim = 0 : tensor<8xi64>, tensor<8xi64> -> tensor<16xi64>
  %2 = trn.full 5.000000e+00 : tensor<8xi64>
  %3 = trn.lt %i, %2 : tensor<8xi64> -> tensor<8xi1>
  %4 = trn.convert %i : tensor<8xi64> -> tensor<8xf32>
  return %1, %3, %4 : tensor<16xi64>, tensor<8xi1>, tensor<8xf32>
}

// -----

// i * 1001 + 1 is exact while |i| <= 16760 (16760 * 1001 < 2^24 <= 16761 * 1001):
// the bound the caller checks, naming the multiply.
// CHECK: module attributes {trn.integer_inputs = [{bound = 16760 : i64, input = 0 : i64, loc = {{.*}}, reason = "'trn.mul_scalar' computes integers up to 16777761 in magnitude{{.*}}"}]}
func.func @scaled(%i: tensor<8xi64>, %x: tensor<8xf32>) -> tensor<8xi64> {
  %0 = trn.mul_scalar %i, 1.001000e+03 : tensor<8xi64>
  %1 = trn.add_scalar %0, 1.000000e+00 : tensor<8xi64>
  return %1 : tensor<8xi64>
}

// -----

// An integer sum computed in fp32 (the importer's int -> f32 -> reduce ->
// int form) bounds the input by the reduced count: 2^24 / 64.
// CHECK: trn.integer_inputs = [{bound = 262144 : i64, input = 0 : i64, {{.*}}'trn.reduce_sum' computes integers up to 16777280 in magnitude in fp32
func.func @summed(%i: tensor<64xi32>) -> tensor<i32> {
  %0 = trn.convert %i : tensor<64xi32> -> tensor<64xf32>
  %1 = trn.reduce_sum %0 dims = [0] : tensor<64xf32> -> tensor<f32>
  %2 = trn.convert %1 : tensor<f32> -> tensor<i32>
  return %2 : tensor<i32>
}

// -----

// Bounded floats: sigmoid(x) * 10 truncates into [0, 10], so + 3 is exact
// for any x; an iota bounds its own arithmetic. A lifted constant's
// magnitude (trn.max_abs) is its bound, not the searched one.
// CHECK: module {
// CHECK-NEXT: func.func @bounded
func.func @bounded(%x: tensor<8xf32>, %c: tensor<i64> {trn.max_abs = 3.100000e+01 : f64}) -> (tensor<8xi64>, tensor<3xi64>) {
  %0 = trn.sigmoid %x : tensor<8xf32>
  %1 = trn.mul_scalar %0, 1.000000e+01 : tensor<8xf32>
  %2 = trn.convert %1 : tensor<8xf32> -> tensor<8xi64>
  %3 = trn.add_scalar %2, 3.000000e+00 : tensor<8xi64>
  %4 = trn.iota start = 0.000000e+00 step = 1.000000e+00 : tensor<3xi64>
  %5 = trn.broadcast %c : tensor<i64> -> tensor<3xi64>
  %6 = trn.pow %5, %4 : tensor<3xi64>
  return %3, %6 : tensor<8xi64>, tensor<3xi64>
}

// -----

// A float input reaching integer arithmetic through a convert is bounded
// like an integer input: |x| * 10 + 3 <= 2^24.
// CHECK: trn.integer_inputs = [{bound = 1677721 : i64, input = 0 : i64
func.func @float_input(%x: tensor<8xf32>) -> tensor<8xi64> {
  %0 = trn.mul_scalar %x, 1.000000e+01 : tensor<8xf32>
  %1 = trn.convert %0 : tensor<8xf32> -> tensor<8xi64>
  %2 = trn.add_scalar %1, 3.000000e+00 : tensor<8xi64>
  return %2 : tensor<8xi64>
}

// -----

// Past 2^24 whatever the inputs: refused at the op.
func.func @constant_overflow(%i: tensor<4xi64>) -> tensor<4xi64> {
  %0 = trn.full 1.000000e+09 : tensor<4xi64>
  // expected-error @+2 {{'trn.add_scalar' computes integers up to 1000000007 in magnitude; the engines compute integers in fp32, exact only up to 2^24 (16777216)}}
  // expected-note @+1 {{no bound on the graph's inputs makes this exact}}
  %1 = trn.add_scalar %0, 7.000000e+00 : tensor<4xi64>
  %2 = trn.add %1, %i : tensor<4xi64>
  return %2 : tensor<4xi64>
}

// -----

// T5's position buckets: log(0) = -inf in the lanes torch.where drops later
// (an infinity converted to an integer is undefined in torch); the finite
// logs are bounded, so the buckets' arithmetic is exact.
// CHECK: module {
// CHECK-NEXT: func.func @log_buckets
func.func @log_buckets() -> tensor<8xi64> {
  %0 = trn.iota start = 0.000000e+00 step = 1.000000e+00 : tensor<8xf32>
  %1 = trn.mul_scalar %0, 1.250000e-01 : tensor<8xf32>
  %2 = trn.log %1 : tensor<8xf32>
  %3 = trn.mul_scalar %2, 8.656000e+00 : tensor<8xf32>
  %4 = trn.convert %3 : tensor<8xf32> -> tensor<8xi64>
  %5 = trn.add_scalar %4, 8.000000e+00 : tensor<8xi64>
  return %5 : tensor<8xi64>
}
