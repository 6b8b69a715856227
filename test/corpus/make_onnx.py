"""Makes the ONNX exports of test/corpus: `SoftmaxCrossEntropyLoss` nodes
(opset 17) written with `onnx.helper`, imported by torch-mlir's
`torch-mlir-import-onnx` and lowered to linalg by `torch-mlir-opt
--torch-onnx-to-torch-backend-pipeline
--torch-backend-to-linalg-on-tensors-backend-pipeline`, into
`onnx_torch_mlir/*.linalg.mlir`.

(IREE's route, `iree-import-onnx` then `iree-compile --iree-input-type=onnx
--compile-to=input`, lowers the node through the same torch-mlir
conversion; its functions take and return IREE's HAL buffer views, which
fuel-opt does not parse.)

The tools are not dependencies of the package: install them beside it to
run this script (`pip install onnx torch-mlir`) and give their location:

    python test/corpus/make_onnx.py --tools /path/to/venv/bin
"""

import argparse
import pathlib
import re
import subprocess
import tempfile

import onnx
from onnx import TensorProto, helper

HERE = pathlib.Path(__file__).resolve().parent

# name -> the node's attributes.
MODELS = {
    "softmax_cross_entropy_mean": {"reduction": "mean"},
    "softmax_cross_entropy_sum": {"reduction": "sum"},
    "softmax_cross_entropy_none": {"reduction": "none"},
    "softmax_cross_entropy_ignore": {"reduction": "mean", "ignore_index": 3},
}


def model(attributes):
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
                            **attributes)
    loss_shape = [8] if attributes["reduction"] == "none" else []
    graph = helper.make_graph(
        [node], "loss",
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [8, 10]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [8])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, loss_shape)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    return m


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", required=True, type=pathlib.Path,
                        help="the folder holding torch-mlir-import-onnx, torch-mlir-opt, "
                        "iree-import-onnx and iree-compile")
    args = parser.parse_args()
    out_dir, iree_dir = HERE / "onnx_torch_mlir", HERE / "onnx_iree"
    out_dir.mkdir(exist_ok=True)
    iree_dir.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, attributes in MODELS.items():
            path = pathlib.Path(tmp) / f"{name}.onnx"
            onnx.save(model(attributes), path)
            torch_ir = subprocess.run(
                [str(args.tools / "torch-mlir-import-onnx"), str(path), "-o", "-"],
                capture_output=True, text=True, check=True).stdout
            linalg = subprocess.run(
                [str(args.tools / "torch-mlir-opt"), "--torch-onnx-to-torch-backend-pipeline",
                 "--torch-backend-to-linalg-on-tensors-backend-pipeline"],
                input=torch_ir, capture_output=True, text=True, check=True).stdout
            (out_dir / f"{name}.linalg.mlir").write_text(linalg)
            imported = pathlib.Path(tmp) / f"{name}.mlir"
            subprocess.run([str(args.tools / "iree-import-onnx"), str(path), "-o", str(imported)],
                           check=True)
            iree = subprocess.run(
                [str(args.tools / "iree-compile"), "--iree-input-type=onnx", "--compile-to=input",
                 "--iree-torch-emit-async-entry-points=false", str(imported)],
                capture_output=True, text=True, check=True).stdout
            iree = re.sub(r"\butil\.func\b", "func.func", iree)
            iree = re.sub(r"\butil\.return\b", "return", iree)
            assert "util." not in iree and "hal." not in iree, f"{name}: IREE ops left"
            (iree_dir / f"{name}.iree-input.mlir").write_text(iree)
            print(name)


if __name__ == "__main__":
    main()
