// The GPU pipelines' output, finished by the vendors' tools: PTX accepted
// by ptxas for sm_80 and sm_90, device IR by llc-22 and ld.lld-22 for
// gfx90a and gfx942.
// REQUIRES: python
// RUN: %if ptxas %{ fuel-opt --fuel-to-nvvm="chip=sm_80 toolkit=%cuda_toolkit" %s | %PYTHON %S/../Inputs/gpu-objects.py --chip sm_80 | FileCheck %s --check-prefix=SM80 %}
// RUN: %if ptxas %{ fuel-opt --fuel-to-nvvm="chip=sm_90 toolkit=%cuda_toolkit" %s | %PYTHON %S/../Inputs/gpu-objects.py --chip sm_90 | FileCheck %s --check-prefix=SM90 %}
// RUN: %if llc-amdgpu %{ fuel-opt --fuel-to-rocdl="chip=gfx90a" %s | %PYTHON %S/../Inputs/gpu-objects.py --chip gfx90a | FileCheck %s --check-prefix=GFX90A %}
// RUN: %if llc-amdgpu %{ fuel-opt --fuel-to-rocdl="chip=gfx942" %s | %PYTHON %S/../Inputs/gpu-objects.py --chip gfx942 | FileCheck %s --check-prefix=GFX942 %}
// SM80-DAG: rms_kernel: sm_80 ok rms_kernel
// SM80-DAG: linear_kernel{{.*}}: sm_80 ok
// SM90-DAG: rms_kernel: sm_90 ok rms_kernel
// GFX90A-DAG: rms_kernel: gfx90a ok lds={{[1-9][0-9]*}}
// GFX942-DAG: rms_kernel: gfx942 ok lds={{[1-9][0-9]*}}
// GFX942-DAG: linear_kernel{{.*}}: gfx942 ok lds=0

func.func @rms(%x: tensor<3x7x2048xf16>) -> tensor<3x7x2048xf16> {
  %y = fuel.fused rms_norm_last_dim {eps = 1.0e-06 : f64} (%x) : (tensor<3x7x2048xf16>) -> tensor<3x7x2048xf16>
  return %y : tensor<3x7x2048xf16>
}

func.func @linear(%x: tensor<96x160xf32>, %w: tensor<160x72xf32>, %b: tensor<72xf32>) -> tensor<96x72xf32> {
  %y = fuel.fused fused_linear (%x, %w, %b) : (tensor<96x160xf32>, tensor<160x72xf32>, tensor<72xf32>) -> tensor<96x72xf32>
  return %y : tensor<96x72xf32>
}
