// fuel-to-rocdl: math that still needs the ROCm device library after
// fuel-gpu-expand-math (f64 erf) gets a warning from
// fuel-gpu-module-to-llvm-ir; f32 math needs none.
// RUN: fuel-opt --split-input-file --fuel-to-rocdl %s 2>&1 >/dev/null | FileCheck %s

// CHECK: warning: fuel-gpu-module-to-llvm-ir: the kernels call __ocml_erf_f64 of the ROCm device library, which a code object made by llc and ld.lld alone does not link
// CHECK-NOT: warning
#map = affine_map<(d0) -> (d0)>
func.func @f64(%x: tensor<256xf64>) -> tensor<256xf64> {
  %e = tensor.empty() : tensor<256xf64>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<256xf64>) outs(%e : tensor<256xf64>) {
  ^bb0(%a: f64, %o: f64):
    %y = math.erf %a : f64
    linalg.yield %y : f64
  } -> tensor<256xf64>
  return %r : tensor<256xf64>
}

// -----
#map = affine_map<(d0) -> (d0)>
func.func @f32(%x: tensor<256xf32>) -> tensor<256xf32> {
  %e = tensor.empty() : tensor<256xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<256xf32>) outs(%e : tensor<256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.erf %a : f32
    linalg.yield %y : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}
