// fuel-tblgen rejects a malformed registry with an error at the record, so
// a bad edit of FusedOps.td fails the build with a message, not a test.
// RUN: split-file --leading-lines %s %t
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/id-range.td 2>&1 | FileCheck %s --check-prefix=ID-RANGE
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/dup-id.td 2>&1 | FileCheck %s --check-prefix=DUP-ID
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/dup-name.td 2>&1 | FileCheck %s --check-prefix=DUP-NAME
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/no-rule.td 2>&1 | FileCheck %s --check-prefix=NO-RULE
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/no-note.td 2>&1 | FileCheck %s --check-prefix=NO-NOTE
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/no-result.td 2>&1 | FileCheck %s --check-prefix=NO-RESULT
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/destructive.td 2>&1 | FileCheck %s --check-prefix=DESTRUCTIVE
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/optional-first.td 2>&1 | FileCheck %s --check-prefix=OPTIONAL-FIRST
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/optional-default.td 2>&1 | FileCheck %s --check-prefix=OPTIONAL-DEFAULT
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/backward.td 2>&1 | FileCheck %s --check-prefix=BACKWARD
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/bool-default.td 2>&1 | FileCheck %s --check-prefix=BOOL-DEFAULT
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/pair-default.td 2>&1 | FileCheck %s --check-prefix=PAIR-DEFAULT
// RUN: not fuel-tblgen -gen-fused-op-python %fuel_td_includes %t/id-range.td 2>&1 | FileCheck %s --check-prefix=ID-RANGE
// RUN: not fuel-tblgen -gen-fused-op-views %fuel_td_includes %t/dup-id.td 2>&1 | FileCheck %s --check-prefix=DUP-ID
// RUN: not fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/schedule.td 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// A well-formed one generates.
// RUN: fuel-tblgen -gen-fused-op-registry %fuel_td_includes %t/good.td | FileCheck %s --check-prefix=GOOD

//--- id-range.td
include "FuelFused/IR/FusedOpsBase.td"
// ID-RANGE: id-range.td:[[@LINE+1]]:5: error: fused op id must be in [1, 0x8000)
def A : FusedOp<32768, "a", Forward> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 0, -1>];
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
}

//--- dup-id.td
include "FuelFused/IR/FusedOpsBase.td"
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
}
// DUP-ID: dup-id.td:[[@LINE+1]]:5: error: duplicate fused op id 1
def B : FusedOp<1, "b", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
}

//--- dup-name.td
include "FuelFused/IR/FusedOpsBase.td"
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
}
// DUP-NAME: dup-name.td:[[@LINE+1]]:5: error: duplicate fused op name a
def B : FusedOp<2, "a", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
}

//--- no-rule.td
include "FuelFused/IR/FusedOpsBase.td"
// NO-RULE: no-rule.td:[[@LINE+1]]:5: error: fused op a has no rule
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
}

//--- no-note.td
include "FuelFused/IR/FusedOpsBase.td"
// NO-NOTE: no-note.td:[[@LINE+1]]:5: error: op a with a hand-written decomposition must say what its recipe does not cover (recipeNote)
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
  let decomposition = "a";
}

//--- no-result.td
include "FuelFused/IR/FusedOpsBase.td"
// NO-RESULT: no-result.td:[[@LINE+1]]:5: error: fused op a has no result
def A : FusedOp<1, "a", Forward> {
  let rule = "sameAsFirst";
}

//--- destructive.td
include "FuelFused/IR/FusedOpsBase.td"
// DESTRUCTIVE: destructive.td:[[@LINE+1]]:5: error: destructiveInput out of range
def A : FusedOp<1, "a", Forward> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 0, -1>];
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
  let destructiveInput = 1;
}

//--- optional-first.td
include "FuelFused/IR/FusedOpsBase.td"
// OPTIONAL-FIRST: optional-first.td:[[@LINE+1]]:5: error: required operand 'y' after an optional one
def A : FusedOp<1, "a", Forward> {
  let operands = [OptionalOperand<"x", FuelAnyFloat, 0, -1>,
                  FusedOperand<"y", FuelAnyFloat, 0, -1>];
  let results = [FusedResult<"z">];
  let rule = "sameAsFirst";
}

//--- optional-default.td
include "FuelFused/IR/FusedOpsBase.td"
def OptionalWithDefault : OptionalParam<"p", FuelParamI64> {
  let defaultValue = "1";
}
// OPTIONAL-DEFAULT: optional-default.td:[[@LINE+1]]:5: error: param 'p' is optional and has a default
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let params = [OptionalWithDefault];
  let rule = "sameAsFirst";
}

//--- backward.td
include "FuelFused/IR/FusedOpsBase.td"
// BACKWARD: backward.td:[[@LINE+1]]:5: error: unknown backward target a_grad
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
  let backward = FusedGrad<["a_grad"]>;
}

//--- bool-default.td
include "FuelFused/IR/FusedOpsBase.td"
// BOOL-DEFAULT: bool-default.td:[[@LINE+1]]:5: error: bool default must be true or false
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let params = [DefaultParam<"p", FuelParamBool, "yes">];
  let rule = "sameAsFirst";
}

//--- pair-default.td
include "FuelFused/IR/FusedOpsBase.td"
// PAIR-DEFAULT: pair-default.td:[[@LINE+1]]:5: error: pair default must be written [a, b]
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let params = [DefaultParam<"p", FuelParamPair, "1, 2">];
  let rule = "sameAsFirst";
}

//--- schedule.td
include "FuelFused/IR/FusedOpsBase.td"
// SCHEDULE: schedule.td:[[@LINE+1]]:5: error: unknown schedule 'Tiled' (expected RowWise, Contraction, Attention, Quantized, Convolution, RowLoss, Scan or Rotary)
def A : FusedOp<1, "a", Forward> {
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
  let schedule = "Tiled";
}

//--- good.td
include "FuelFused/IR/FusedOpsBase.td"
// GOOD: static const FusedOpInfo staticFusedOps[] = {
// GOOD-NEXT: {1, "a", Family::Forward,
def A : FusedOp<1, "a", Forward> {
  let operands = [FusedOperand<"x", FuelAnyFloat, 0, -1>];
  let results = [FusedResult<"y">];
  let rule = "sameAsFirst";
}
