"""Recipes written as Python functions over scalars.

`registry.register(name, fn)` calls `fn` on symbolic values and records
what it computes as a `fuel.recipe`: positional parameters are the op's
operands (elements of float tensors of one shape), keyword-only parameters
its params (f64 attributes of the op)::

    from fuel_mlir import recipes, registry

    def gelu_tanh(x):
        return 0.5 * x * (1.0 + recipes.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    def leaky_relu(x, *, alpha):
        return recipes.maximum(x, alpha * x)

    registry.register("gelu_tanh", gelu_tanh)
    registry.register("leaky_relu", leaky_relu)

Values support `+ - * /`, unary `-`, `abs()` and `** n` for a small integer
n (as products), with Python numbers on either side; the functions below are the
recipe vocabulary's other steps. Anything else (comparisons, `math` or
numpy functions, branching on a value) raises `TypeError`: a recipe is one
computation for every element.
"""

from __future__ import annotations

import inspect
import math

__all__ = ["exp", "log", "sqrt", "rsqrt", "tanh", "erf", "log1p", "expm1", "maximum",
           "minimum", "sigmoid", "trace"]

_MAX_POWER = 16


class _Tracer:
    """Collects the steps of a recipe as MLIR text."""

    def __init__(self, type_name: str):
        self.type = type_name
        self.lines = []
        self.constants = {}

    def _new(self, text: str) -> "Value":
        # Python names cannot hold a '.': no clash with the parameters'.
        name = f"%.s{len(self.lines)}"
        self.lines.append(f"  {name} = {text}")
        return Value(self, name)

    def constant(self, number) -> "Value":
        value = float(number)
        key = repr(value) if not math.isnan(value) else "nan"
        if key not in self.constants:
            if math.isnan(value) or math.isinf(value):
                bits = {"nan": "0x7FC00000", "inf": "0x7F800000", "-inf": "0xFF800000"}[key]
                literal = bits
            else:
                literal = repr(value)
            self.constants[key] = self._new(f"arith.constant {literal} : {self.type}")
        return self.constants[key]

    def step(self, op: str, *args) -> "Value":
        operands = ", ".join(self.lift(a).name for a in args)
        return self._new(f"{op} {operands} : {self.type}")

    def lift(self, value) -> "Value":
        if isinstance(value, Value):
            if value.tracer is not self:
                raise TypeError("a value of another recipe")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"a recipe computes with its values and Python numbers, got {type(value).__name__}")
        return self.constant(value)


class Value:
    """A symbolic element of a recipe."""

    __slots__ = ("tracer", "name")

    def __init__(self, tracer: _Tracer, name: str):
        self.tracer = tracer
        self.name = name

    def _bin(self, op, other, swap=False):
        a, b = (other, self) if swap else (self, other)
        return self.tracer.step(op, a, b)

    def __add__(self, other):
        return self._bin("arith.addf", other)

    def __radd__(self, other):
        return self._bin("arith.addf", other, swap=True)

    def __sub__(self, other):
        return self._bin("arith.subf", other)

    def __rsub__(self, other):
        return self._bin("arith.subf", other, swap=True)

    def __mul__(self, other):
        return self._bin("arith.mulf", other)

    def __rmul__(self, other):
        return self._bin("arith.mulf", other, swap=True)

    def __truediv__(self, other):
        return self._bin("arith.divf", other)

    def __rtruediv__(self, other):
        return self._bin("arith.divf", other, swap=True)

    def __neg__(self):
        return self.tracer.step("arith.negf", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return self.tracer.step("math.absf", self)

    def __pow__(self, exponent):
        if isinstance(exponent, bool) or not isinstance(exponent, int) or not (
                1 <= exponent <= _MAX_POWER):
            raise TypeError(
                f"a recipe raises values to integer powers 1..{_MAX_POWER} only, got {exponent!r}")
        result = self
        for _ in range(exponent - 1):
            result = result * self
        return result

    def _symbolic(self, *_):
        raise TypeError(
            "a recipe value is symbolic: it has no truth value, order or float value "
            "(use fuel_mlir.recipes.maximum, exp, ... instead of comparisons, math or numpy)")

    __bool__ = __float__ = __int__ = __index__ = _symbolic
    __lt__ = __le__ = __gt__ = __ge__ = _symbolic

    def __eq__(self, other):
        self._symbolic()

    def __ne__(self, other):
        self._symbolic()

    __hash__ = object.__hash__

    def __array__(self, *_args, **_kwargs):
        self._symbolic()


def _unary(op):
    def apply(x):
        if isinstance(x, Value):
            return x.tracer.step(op, x)
        raise TypeError(f"{op} in a recipe takes a recipe value, got {type(x).__name__}")
    apply.__name__ = op.split(".")[1]
    apply.__doc__ = f"`{op}` of a recipe value."
    return apply


exp = _unary("math.exp")
log = _unary("math.log")
sqrt = _unary("math.sqrt")
rsqrt = _unary("math.rsqrt")
tanh = _unary("math.tanh")
erf = _unary("math.erf")
log1p = _unary("math.log1p")
expm1 = _unary("math.expm1")


def _binary(op, doc):
    def apply(a, b):
        tracer = a.tracer if isinstance(a, Value) else getattr(b, "tracer", None)
        if tracer is None:
            raise TypeError(f"{apply.__name__} in a recipe takes at least one recipe value")
        return tracer.step(op, a, b)
    apply.__name__ = op.split(".")[1][:-1]
    apply.__doc__ = doc
    return apply


maximum = _binary("arith.maximumf", "The larger of two values (NaN if either is).")
minimum = _binary("arith.minimumf", "The smaller of two values (NaN if either is).")


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return 1.0 / (1.0 + exp(-x))


def trace(fn, name: str, type_name: str = "f32") -> str:
    """The `fuel.recipe @name` that `fn` computes, as MLIR text."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise TypeError(f"cannot read the parameters of {fn!r}") from None
    operands, params = [], []
    for p in signature.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            operands.append(p.name)
        elif p.kind == p.KEYWORD_ONLY:
            params.append(p.name)
        else:
            raise TypeError(f"recipe {name!r}: *args and **kwargs are not operands or params")
    if not operands:
        raise TypeError(f"recipe {name!r} needs at least one operand (a positional parameter)")
    tracer = _Tracer(type_name)
    args = [Value(tracer, f"%.in{i}") for i in range(len(operands))]
    kwargs = {n: Value(tracer, f"%{n}") for n in params}
    result = fn(*args, **kwargs)
    if not isinstance(result, Value):
        raise TypeError(
            f"recipe {name!r} must return a value computed from its operands, got "
            f"{type(result).__name__}")
    header = ", ".join(f"%.in{i}: {type_name}" for i in range(len(operands)))
    param_text = (" params(" + ", ".join(f"%{n}: {type_name}" for n in params) + ")"
                  if params else "")
    body = "\n".join(tracer.lines)
    return (f"fuel.recipe @{name}({header}){param_text} -> {type_name} {{\n"
            f"{body}\n  fuel.yield {result.name} : {type_name}\n}}\n")
