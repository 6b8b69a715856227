// RUN: fuel-opt %s -split-input-file -verify-diagnostics \
// RUN:   --fuel-check-buffer-sizes | FileCheck %s
// RUN: fuel-opt %s -split-input-file -verify-diagnostics --fuel-to-llvm \
// RUN:   -o /dev/null
// RUN: fuel-opt %s -split-input-file -verify-diagnostics \
// RUN:   --fuel-to-nvvm="format=llvm" -o /dev/null
// RUN: fuel-opt %s -split-input-file -verify-diagnostics --fuel-to-rocdl \
// RUN:   -o /dev/null

// Static shapes whose elements or bytes do not fit in 64 bits are errors
// (bufferization would abort computing their strides); dynamic dims, and
// the largest sizes that fit, are not.

func.func @elements(%x: tensor<?x16xf32>) -> tensor<1099511627776x1099511627776x16xf32> {
  // expected-error @+1 {{'tensor<1099511627776x1099511627776x16xf32>' has more elements or bytes than 64 bits count: no buffer can hold it}}
  %0 = tensor.empty() : tensor<1099511627776x1099511627776x16xf32>
  return %0 : tensor<1099511627776x1099511627776x16xf32>
}

// -----

// 2^61 f32 elements fit in 64 bits; their 2^63 bytes do not.
func.func @bytes() -> tensor<2305843009213693952xf32> {
  // expected-error @+1 {{'tensor<2305843009213693952xf32>' has more elements or bytes than 64 bits count}}
  %0 = tensor.empty() : tensor<2305843009213693952xf32>
  return %0 : tensor<2305843009213693952xf32>
}

// -----

// A function's argument (a block argument of its body).
// expected-error @+1 {{'tensor<4294967296x4294967296xf32>' has more elements or bytes than 64 bits count}}
func.func @argument(%x: tensor<4294967296x4294967296xf32>) {
  return
}

// -----

// Dynamic dims are counted at run time; 2^60 f32 elements (2^62 bytes)
// fit. Left as they are.
// CHECK-LABEL: func.func @fits
// CHECK:         fuel.fused softmax_last_dim
func.func @fits(%x: tensor<?x?x16xf32>, %y: tensor<1152921504606846976xf32>)
    -> (tensor<?x?x16xf32>, tensor<1152921504606846976xf32>) {
  %0 = fuel.fused softmax_last_dim (%x) : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %0, %y : tensor<?x?x16xf32>, tensor<1152921504606846976xf32>
}
