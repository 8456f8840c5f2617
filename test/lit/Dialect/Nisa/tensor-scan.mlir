// RUN: trnc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: nisa.tensor_scan add %{{.*}} <0, [512, 1], [128, 512]>, %{{.*}} <0, [512, 1], [128, 512]> on vector
func.func @scan(%o: !nisa.tile<sbuf, 128, 512, f32>, %a: !nisa.tile<sbuf, 128, 512, bf16>) {
  nisa.tensor_scan add %o <0, [512, 1], [128, 512]>, %a <0, [512, 1], [128, 512]> on vector
      : !nisa.tile<sbuf, 128, 512, f32>, !nisa.tile<sbuf, 128, 512, bf16>
  return
}

// -----

func.func @scan_op(%o: !nisa.tile<sbuf, 4, 8, f32>, %a: !nisa.tile<sbuf, 4, 8, f32>) {
  // expected-error @+1 {{scans with add, multiply, max or min, not subtract}}
  nisa.tensor_scan subtract %o <0, [8, 1], [4, 8]>, %a <0, [8, 1], [4, 8]> on vector
      : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 8, f32>
  return
}

// -----

func.func @scan_engine(%o: !nisa.tile<sbuf, 4, 8, f32>, %a: !nisa.tile<sbuf, 4, 8, f32>) {
  // expected-error @+1 {{cannot run on the gpsimd engine}}
  nisa.tensor_scan add %o <0, [8, 1], [4, 8]>, %a <0, [8, 1], [4, 8]> on gpsimd
      : !nisa.tile<sbuf, 4, 8, f32>, !nisa.tile<sbuf, 4, 8, f32>
  return
}
