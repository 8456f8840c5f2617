// RUN: trnc-opt %s | trnc-opt | FileCheck %s

// CHECK-LABEL: func.func @ok
// CHECK: nisa.iota %{{.*}} <0, [8, 1], [4, 8]>, base = 1.000000e+00, scale = 2.000000e+00, coefs = [8, 1] on gpsimd
// CHECK: nisa.affine_select is_le %{{.*}}, offset = 0.000000e+00, coefs = [-1, 1], fill = 0.000000e+00 on gpsimd
func.func @ok() {
  %a = nisa.alloc : <sbuf, 4, 8, f32>
  %b = nisa.alloc : <sbuf, 4, 8, f32>
  nisa.iota %a <0, [8, 1], [4, 8]>, base = 1.0, scale = 2.0, coefs = [8, 1] on gpsimd : !nisa.tile<sbuf, 4, 8, f32>
  nisa.affine_select is_le %b <0, [8, 1], [4, 8]>, %a <0, [8, 1], [4, 8]>, offset = 0.0, coefs = [-1, 1], fill = 0.0 on gpsimd : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 8, f32>
  return
}
