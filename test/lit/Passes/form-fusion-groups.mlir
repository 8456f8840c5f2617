// trnc-form-fusion-groups: the trn ops one tile loop computes become a
// trn.fusion_group region at the place the lowering computes them; values
// read after a group are its results, the rest stays inside.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups | FileCheck %s
// The groups print and parse back.
// RUN: trnc-opt %s -split-input-file --trnc-form-fusion-groups | trnc-opt -split-input-file > /dev/null

// An elementwise chain after a softmax (a row op of its own): one group,
// only its last value yielded.
// CHECK-LABEL: func.func @chain
// CHECK: %[[S:.*]] = trn.softmax
// CHECK-NEXT: %[[G:.*]] = trn.fusion_group "elementwise" -> (tensor<128x512xf32>) {
// CHECK-NEXT: %[[E:.*]] = trn.exp %[[S]]
// CHECK-NEXT: %[[T:.*]] = trn.tanh %[[E]]
// CHECK-NEXT: trn.yield %[[T]] : tensor<128x512xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
func.func @chain(%x: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %s = trn.softmax %x dim = 1 : tensor<128x512xf32>
  %0 = trn.exp %s : tensor<128x512xf32>
  %1 = trn.tanh %0 : tensor<128x512xf32>
  return %1 : tensor<128x512xf32>
}

// -----

// One parameter's optimizer update spread over the function: the ops of
// its shape connected to the first one move up into its group. The step's
// scalars (computed later, far smaller than the group) form their own
// group ahead of it, and the view of them moves up too; the fill read as
// an immediate comes along. The unrelated update of q stays where it was.
// CHECK-LABEL: func.func @spread_update
// CHECK: %[[STEP:.*]]:2 = trn.fusion_group "elementwise" -> (tensor<f32>, tensor<bf16>) {
// CHECK-NEXT: trn.add_scalar %arg3
// CHECK-NEXT: trn.sqrt
// CHECK-NEXT: trn.convert
// CHECK-NEXT: trn.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[B:.*]] = trn.broadcast %[[STEP]]#1
// CHECK-NEXT: trn.full
// CHECK-NEXT: trn.convert
// CHECK-NEXT: %[[U:.*]] = trn.fusion_group "elementwise" -> (tensor<128x512xbf16>) {
// CHECK-NEXT: trn.mul_scalar %arg0
// CHECK-COUNT-3: trn.
// CHECK-NEXT: trn.div %{{.*}}, %[[B]]
// CHECK-COUNT-3: trn.
// CHECK-NEXT: trn.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[Q:.*]] = trn.mul_scalar %arg2
// CHECK-NEXT: return %[[U]], %[[Q]], %[[STEP]]#0
func.func @spread_update(%p: tensor<128x512xbf16>, %g: tensor<128x512xbf16>, %q: tensor<128x512xbf16>, %step: tensor<f32>) -> (tensor<128x512xbf16>, tensor<128x512xbf16>, tensor<f32>) {
  %0 = trn.mul_scalar %p, 0.5 : tensor<128x512xbf16>
  %1 = trn.mul_scalar %q, 0.25 : tensor<128x512xbf16>
  %w = trn.full 0.1 : tensor<128x512xbf16>
  %wf = trn.convert %w : tensor<128x512xbf16> -> tensor<128x512xf32>
  %gf = trn.convert %g : tensor<128x512xbf16> -> tensor<128x512xf32>
  %2 = trn.mul %wf, %gf : tensor<128x512xf32>
  %3 = trn.sub %0, %g : tensor<128x512xbf16>
  %s = trn.add_scalar %step, 1.0 : tensor<f32>
  %c = trn.sqrt %s : tensor<f32>
  %cb = trn.convert %c : tensor<f32> -> tensor<bf16>
  %b = trn.broadcast %cb : tensor<bf16> -> tensor<128x512xbf16>
  %4 = trn.div %3, %b : tensor<128x512xbf16>
  %f4 = trn.convert %4 : tensor<128x512xbf16> -> tensor<128x512xf32>
  %5 = trn.add %f4, %2 : tensor<128x512xf32>
  %6 = trn.convert %5 : tensor<128x512xf32> -> tensor<128x512xbf16>
  return %6, %1, %s : tensor<128x512xbf16>, tensor<128x512xbf16>, tensor<f32>
}

// -----

// A matmul's epilogue (bias add through a [B, T, N] reshape of the result,
// GELU, casts) joins it; the reshape comes along, the bias's broadcast moves
// above. The product itself is read by nothing else: not yielded.
// CHECK-LABEL: func.func @linear_gelu
// CHECK: %[[BIAS:.*]] = trn.broadcast %arg2
// CHECK-NEXT: %[[G:.*]]:2 = trn.fusion_group "matmul" -> (tensor<2x128x1024xbf16>, tensor<2x128x1024xbf16>) {
// CHECK-NEXT: %[[P:.*]] = trn.matmul %arg0, %arg1
// CHECK-NEXT: %[[R:.*]] = trn.reshape %[[P]]
// CHECK-NEXT: %[[A:.*]] = trn.add %[[R]], %[[BIAS]]
// CHECK-COUNT-2: trn.
// CHECK-NEXT: %[[Y:.*]] = trn.convert
// CHECK-NEXT: trn.yield %[[A]], %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]#0, %[[G]]#1
func.func @linear_gelu(%x: tensor<256x256xbf16>, %w: tensor<256x1024xbf16>, %b: tensor<1024xbf16>) -> (tensor<2x128x1024xbf16>, tensor<2x128x1024xbf16>) {
  %0 = trn.matmul %x, %w : (tensor<256x256xbf16>, tensor<256x1024xbf16>) -> tensor<256x1024xbf16>
  %1 = trn.reshape %0 : tensor<256x1024xbf16> -> tensor<2x128x1024xbf16>
  %2 = trn.broadcast %b : tensor<1024xbf16> -> tensor<2x128x1024xbf16>
  %3 = trn.add %1, %2 : tensor<2x128x1024xbf16>
  %4 = trn.convert %3 : tensor<2x128x1024xbf16> -> tensor<2x128x1024xf32>
  %5 = trn.gelu %4 : tensor<2x128x1024xf32>
  %6 = trn.convert %5 : tensor<2x128x1024xf32> -> tensor<2x128x1024xbf16>
  return %3, %6 : tensor<2x128x1024xbf16>, tensor<2x128x1024xbf16>
}

// -----

// A row group (a row sum, the centred rows, a sum over the rows) with its
// [K, N] row space, placed at its last member. The view of a member met
// before that point moves after the group; the matmul reading the centred
// rows is left out (it would cut the group) and reads the group's result.
// CHECK-LABEL: func.func @rows
// CHECK-NEXT: %[[G:.*]]:3 = trn.fusion_group "rows" -> (tensor<256x1xf32>, tensor<256x1024xf32>, tensor<1024xf32>) attributes {row_space = array<i64: 256, 1024>} {
// CHECK-NEXT: trn.reduce_sum %arg0 dims = [1]
// CHECK-NEXT: trn.reshape
// CHECK-NEXT: trn.broadcast
// CHECK-NEXT: trn.sub
// CHECK-NEXT: trn.mul
// CHECK-NEXT: trn.reduce_sum {{.*}} dims = [0]
// CHECK-NEXT: trn.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[V:.*]] = trn.reshape %[[G]]#0
// CHECK-NEXT: %[[M:.*]] = trn.matmul %[[G]]#1, %arg2
// CHECK-NEXT: return %[[M]], %[[G]]#2, %[[V]]
func.func @rows(%dy: tensor<256x1024xf32>, %x: tensor<256x1024xf32>, %w: tensor<1024x64xf32>) -> (tensor<256x64xf32>, tensor<1024xf32>, tensor<2x128x1xf32>) {
  %0 = trn.reduce_sum %dy dims = [1] : tensor<256x1024xf32> -> tensor<256xf32>
  %1 = trn.reshape %0 : tensor<256xf32> -> tensor<256x1xf32>
  %v = trn.reshape %1 : tensor<256x1xf32> -> tensor<2x128x1xf32>
  %2 = trn.broadcast %1 : tensor<256x1xf32> -> tensor<256x1024xf32>
  %3 = trn.sub %dy, %2 : tensor<256x1024xf32>
  %4 = trn.mul %3, %x : tensor<256x1024xf32>
  %5 = trn.reduce_sum %4 dims = [0] : tensor<256x1024xf32> -> tensor<1024xf32>
  %6 = trn.matmul %3, %w : (tensor<256x1024xf32>, tensor<1024x64xf32>) -> tensor<256x64xf32>
  return %6, %5, %v : tensor<256x64xf32>, tensor<1024xf32>, tensor<2x128x1xf32>
}

// -----

// A layer norm gradient's pattern: the sum over rows (a weight gradient) is
// cast right after it, before the residual add on the rows. The cast is
// read only after the group, so it moves after it instead of cutting the
// group there, and the add joins: the rows are added in the group's loop
// (before, they were stored, then loaded back by an add of their own).
// CHECK-LABEL: func.func @late_cast_moves_after
// CHECK: %[[G:.*]]:2 = trn.fusion_group "rows"
// CHECK-NOT: trn.fusion_group
// CHECK: trn.reduce_sum %{{.*}} dims = [0]
// CHECK-NOT: trn.fusion_group
// CHECK: trn.add %arg2
// CHECK: trn.yield
// CHECK-NEXT: }
// CHECK-NEXT: trn.convert %[[G]]#0 : tensor<1024xf32> -> tensor<1024xbf16>
func.func @late_cast_moves_after(%dy: tensor<256x1024xf32>, %x: tensor<256x1024xf32>, %res: tensor<256x1024xf32>) -> (tensor<256x1024xf32>, tensor<1024xbf16>) {
  %0 = trn.reduce_sum %dy dims = [1] : tensor<256x1024xf32> -> tensor<256xf32>
  %1 = trn.reshape %0 : tensor<256xf32> -> tensor<256x1xf32>
  %2 = trn.broadcast %1 : tensor<256x1xf32> -> tensor<256x1024xf32>
  %3 = trn.sub %dy, %2 : tensor<256x1024xf32>
  %4 = trn.mul %3, %x : tensor<256x1024xf32>
  %5 = trn.reduce_sum %4 dims = [0] : tensor<256x1024xf32> -> tensor<1024xf32>
  %6 = trn.convert %5 : tensor<1024xf32> -> tensor<1024xbf16>
  %7 = trn.add %res, %3 : tensor<256x1024xf32>
  return %7, %6 : tensor<256x1024xf32>, tensor<1024xbf16>
}

// -----

// A row sum read back transposed (reshaped to a row of columns, compared
// with each row's index: a rank by counting, as MoE routing does): the
// compare reads the mask's iota like the group's first op, but it also reads
// the group's own sum, through views outside the group. It cannot join (or
// the group would read its own result) nor move after the group as a late
// reader: the group stops before it.
// CHECK-LABEL: func.func @row_sum_read_transposed
// CHECK: %[[G:.*]] = trn.fusion_group "rows" -> (tensor<64xf32>)
// CHECK: trn.reduce_sum
// CHECK-NEXT: trn.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = trn.reshape %[[G]] : tensor<64xf32> -> tensor<1x64xf32>
// CHECK-NEXT: %[[B:.*]] = trn.broadcast %[[R]]
// CHECK-NEXT: trn.eq %[[B]], %{{.*}} : tensor<64x64xf32> -> tensor<64x64xi1>
func.func @row_sum_read_transposed(%x: tensor<64x64xf32>) -> tensor<64x64xi1> {
  %0 = trn.iota start = 0.0 step = 1.0 : tensor<64xf32>
  %1 = trn.reshape %0 : tensor<64xf32> -> tensor<64x1xf32>
  %2 = trn.reshape %0 : tensor<64xf32> -> tensor<1x64xf32>
  %3 = trn.broadcast %2 : tensor<1x64xf32> -> tensor<64x64xf32>
  %4 = trn.broadcast %1 : tensor<64x1xf32> -> tensor<64x64xf32>
  %5 = trn.lt %3, %4 : tensor<64x64xf32> -> tensor<64x64xi1>
  %6 = trn.gt %x, %3 : tensor<64x64xf32> -> tensor<64x64xi1>
  %7 = trn.bitwise_and %5, %6 : tensor<64x64xi1>
  %8 = trn.convert %7 : tensor<64x64xi1> -> tensor<64x64xf32>
  %9 = trn.reduce_sum %8 dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %10 = trn.reshape %9 : tensor<64xf32> -> tensor<1x64xf32>
  %11 = trn.broadcast %10 : tensor<1x64xf32> -> tensor<64x64xf32>
  %12 = trn.eq %11, %4 : tensor<64x64xf32> -> tensor<64x64xi1>
  return %12 : tensor<64x64xi1>
}
