"""Builds `fuel.fused` ops from Python values, checked against the registry."""

from __future__ import annotations

import numbers

from . import ir

__all__ = ["build", "fused"]

_INT_RANGES = {"I64": (-(2**63), 2**63 - 1), "I32": (-(2**31), 2**31 - 1)}
# The original registry's spelling of Q4_K.
_QUANT_ALIASES = {"q4_k_m": "q4_k"}


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _param_attr(op_name: str, spec, value) -> ir.Attribute:
    """The attribute for `value` of param `spec`; TypeError/ValueError if bad."""
    where = f"{op_name}: param {spec.name!r}"
    kind = spec.kind
    if kind in ("F64", "F32"):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{where} must be a float, got {value!r}")
        ftype = ir.F64Type.get() if kind == "F64" else ir.F32Type.get()
        return ir.FloatAttr.get(ftype, float(value))
    if kind in ("I64", "I32"):
        if not _is_int(value):
            raise TypeError(f"{where} must be an int, got {value!r}")
        lo, hi = _INT_RANGES[kind]
        if not lo <= int(value) <= hi:
            raise ValueError(f"{where} is out of the {kind.lower()} range: {value}")
        width = 64 if kind == "I64" else 32
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(width), int(value))
    if kind == "Bool":
        if not isinstance(value, bool) and type(value).__name__ != "bool_":
            raise TypeError(f"{where} must be a bool, got {value!r}")
        return ir.BoolAttr.get(bool(value))
    if kind == "Pair":
        if _is_int(value):
            value = (value, value)
        try:
            pair = tuple(value)
        except TypeError:
            raise TypeError(f"{where} must be an int or a pair of ints, got {value!r}") from None
        if len(pair) != 2 or not all(_is_int(v) for v in pair):
            raise TypeError(f"{where} must be an int or a pair of ints, got {value!r}")
        lo, hi = _INT_RANGES["I64"]
        if not all(lo <= int(v) <= hi for v in pair):
            raise ValueError(f"{where} is out of the i64 range: {value!r}")
        return ir.DenseI64ArrayAttr.get([int(v) for v in pair])
    if kind in ("Reduction", "QuantType"):
        # The enums' spellings, generated from FuelAttrs.td (imported here:
        # the generated module imports this one).
        from ._fuel_registry_gen import ENUM_SPELLINGS
        spellings = ENUM_SPELLINGS[kind]
    if kind == "Reduction":
        if not isinstance(value, str) or value.lower() not in spellings:
            raise ValueError(f"{where} must be one of {', '.join(spellings)}, got {value!r}")
        return ir.Attribute.parse(f"#fuel.reduction<{value.lower()}>")
    if kind == "QuantType":
        name = value.lower() if isinstance(value, str) else None
        name = _QUANT_ALIASES.get(name, name)
        if name not in spellings:
            raise ValueError(
                f"{where} must be a GGML quant type ({', '.join(spellings)}), got {value!r}"
            )
        return ir.Attribute.parse(f"#fuel.quant<{name}>")
    raise AssertionError(f"unknown param kind {kind}")


def _as_value(op_name: str, index: int, operand) -> ir.Value:
    if isinstance(operand, ir.Value):
        return operand
    if isinstance(operand, (ir.OpView, ir.Operation)):
        results = operand.results
        if len(results) == 1:
            return results[0]
        raise TypeError(
            f"{op_name}: operand #{index} is an op with {len(results)} results; pass one value"
        )
    raise TypeError(f"{op_name}: operand #{index} must be an MLIR Value, got {type(operand).__name__}")


def build(op_name: str, operands, params: dict, *, loc=None, ip=None):
    """Creates `fuel.fused op_name` and returns its result(s).

    `params` maps param names to Python values; None means "not given" (the
    default, or unset for an optional param). Values equal to a param's
    default are dropped, as in the canonical form. Returns a Value for one
    result, a tuple for several, and the Operation for none.
    """
    from . import registry

    try:
        entry = registry.lookup(op_name)
    except KeyError as e:
        raise ValueError(f"unknown fused op {op_name!r}") from e
    values = [_as_value(op_name, i, o) for i, o in enumerate(operands) if o is not None]

    attrs = {}
    for name, value in params.items():
        spec = entry.param(name)
        if spec is None:
            known = ", ".join(p.name for p in entry.params) or "none"
            raise TypeError(f"{op_name}: unknown param {name!r} (params: {known})")
        if value is None:
            continue
        attr = _param_attr(op_name, spec, value)
        if spec.has_default and attr == _param_attr(op_name, spec, spec.default):
            continue
        attrs[name] = attr
    missing = [p.name for p in entry.params if p.required and p.name not in attrs]
    if missing:
        raise TypeError(f"{op_name}: missing required param(s): {', '.join(missing)}")

    if loc is None:
        loc = ir.Location.current if _has_current_location() else None
    if loc is None:
        if not values:
            raise ValueError(f"{op_name}: no location and no operand to take a context from")
        loc = ir.Location.unknown(values[0].type.context)
    kind = ir.Attribute.parse(f"#fuel.kind<{op_name}>", loc.context)
    attributes = {"kind": kind, "params": ir.DictAttr.get(attrs, loc.context)}
    if entry.has_recipe and entry.is_runtime:
        # An op defined by a recipe names it, and its module holds it.
        attributes["recipe"] = ir.FlatSymbolRefAttr.get(op_name, loc.context)
        _add_recipe(op_name, ip, loc.context)
    try:
        op = ir.Operation.create(
            "fuel.fused",
            results=None,
            operands=values,
            attributes=attributes,
            loc=loc,
            ip=ip,
            infer_type=True,
        )
    except ir.MLIRError as e:
        raise ValueError(_diagnostics(e)) from None
    try:
        op.verify()
    except ir.MLIRError as e:
        message = _diagnostics(e)
        op.erase()
        raise ValueError(message) from None
    if len(op.results) == 1:
        return op.results[0]
    if not op.results:
        return op
    return tuple(op.results)


def _add_recipe(op_name: str, ip, context) -> None:
    """Puts the recipe of `op_name` (registered from Python) at the start of
    the module that `ip` (or the current insertion point) builds in, unless
    it holds one already."""
    from . import registry

    text = registry.recipe_text(op_name)
    if text is None:
        return
    if ip is None:
        try:
            ip = ir.InsertionPoint.current
        except ValueError:
            return
    op = ip.block.owner
    while op is not None and op.name != "builtin.module":
        op = op.parent
    if op is None:
        return
    body = op.regions[0].blocks[0]
    for existing in body.operations:
        if (existing.operation.name == "fuel.recipe"
                and ir.StringAttr(existing.operation.attributes["sym_name"]).value == op_name):
            return
    recipe = ir.Operation.parse(text, context=context)
    if len(body.operations):
        ir.InsertionPoint(body.operations[0]).insert(recipe)
    else:
        ir.InsertionPoint(body).insert(recipe)


def _has_current_location() -> bool:
    try:
        ir.Location.current
    except ValueError:
        return False
    return True


def _diagnostics(error) -> str:
    """The messages of an MLIRError, one per line."""
    lines = [d.message for d in getattr(error, "error_diagnostics", [])]
    return "\n".join(lines) if lines else str(error)


def fused(op_name: str, operands, *, loc=None, ip=None, **params):
    """Builds any registered fused op by name: `fused("rope", [x, cos, sin])`."""
    return build(op_name, operands, params, loc=loc, ip=ip)
