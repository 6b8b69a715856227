"""The fused-op registry.

`entries()` lists every registered op (the static ones generated from
`FusedOps.td`, then those registered at run time in this process);
`lookup(name_or_id)` finds one. Ids below `RUNTIME_ID_BASE` (0x8000) are
static and stable forever; `register()` allocates ids from 0x8000 on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple, Union

from ._fuel_registry_gen import ENTRIES as _STATIC_ENTRIES

__all__ = [
    "RUNTIME_ID_BASE",
    "Operand",
    "Result",
    "Param",
    "Backward",
    "Entry",
    "entries",
    "lookup",
    "is_runtime_id",
    "register",
    "recipe_text",
]

RUNTIME_ID_BASE = 0x8000
_MAX_ID = 0xFFFF


@dataclass(frozen=True)
class Operand:
    name: str
    element: str
    min_rank: int
    max_rank: Optional[int]
    optional: bool
    doc: str = ""


@dataclass(frozen=True)
class Result:
    name: str
    doc: str = ""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: object
    has_default: bool
    optional: bool
    checks: Tuple[str, ...] = ()
    doc: str = ""

    @property
    def required(self) -> bool:
        return not self.optional and not self.has_default


@dataclass(frozen=True)
class Backward:
    kind: str
    targets: Tuple[str, ...] = ()

    @property
    def target(self) -> Optional[str]:
        """The first fused op computing a gradient (None unless kind is Fused)."""
        return self.targets[0] if self.targets else None


@dataclass(frozen=True)
class Entry:
    id: int
    name: str
    family: str
    operands: Tuple[Operand, ...]
    results: Tuple[Result, ...]
    params: Tuple[Param, ...]
    backward: Backward
    destructive_input: Optional[int]
    has_recipe: bool = False
    decomposable: bool = False
    recipe_note: str = ""
    summary: str = ""
    description: str = ""
    reference: str = ""

    @property
    def is_runtime(self) -> bool:
        return is_runtime_id(self.id)

    @property
    def num_operands(self) -> int:
        """The number of operands, optional ones included."""
        return len(self.operands)

    @property
    def num_required_operands(self) -> int:
        return sum(1 for o in self.operands if not o.optional)

    @property
    def num_results(self) -> int:
        return len(self.results)

    def param(self, name: str) -> Optional[Param]:
        for p in self.params:
            if p.name == name:
                return p
        return None


def _entry_from_dict(d: dict) -> Entry:
    return Entry(
        id=d["id"],
        name=d["name"],
        family=d["family"],
        operands=tuple(Operand(**o) for o in d["operands"]),
        results=tuple(Result(**r) for r in d["results"]),
        params=tuple(Param(**p) for p in d["params"]),
        backward=Backward(d["backward"]["kind"], tuple(d["backward"]["targets"])),
        destructive_input=d["destructive_input"],
        has_recipe=d["has_recipe"],
        decomposable=d["decomposable"],
        recipe_note=d["recipe_note"],
        summary=d["summary"],
        description=d["description"],
        reference=d["reference"],
    )


_STATIC = tuple(_entry_from_dict(d) for d in _STATIC_ENTRIES)
_BY_NAME = {e.name: e for e in _STATIC}
_BY_ID = {e.id: e for e in _STATIC}


def is_runtime_id(op_id: int) -> bool:
    """Whether `op_id` lies in the range of runtime-registered ops."""
    return RUNTIME_ID_BASE <= op_id <= _MAX_ID


def entries() -> list:
    """Every registered op: the static ones by id, then runtime ones."""
    return sorted(_BY_ID.values(), key=lambda e: e.id)


def lookup(name_or_id: Union[str, int]) -> Entry:
    """The entry with this name or id; raises KeyError if there is none."""
    if isinstance(name_or_id, bool):
        raise TypeError("lookup() takes an op name or an integer id")
    if isinstance(name_or_id, str):
        entry = _BY_NAME.get(name_or_id)
        if entry is None:
            raise KeyError(f"no fused op named {name_or_id!r}")
        return entry
    try:
        op_id = int(name_or_id)
    except (TypeError, ValueError):
        raise TypeError("lookup() takes an op name or an integer id") from None
    entry = _BY_ID.get(op_id)
    if entry is None:
        where = "runtime-registered " if is_runtime_id(op_id) else ""
        raise KeyError(f"no {where}fused op with id {op_id:#x}")
    return entry


def _runtime_entry(op_id, name, num_operands, params, param_doc, *, result_doc,
                   **fields) -> Entry:
    """The entry of an op registered at run time: `num_operands` float
    tensors, an f64 param per name in `params`, one result."""
    return Entry(
        id=op_id,
        name=name,
        family="Forward",
        operands=tuple(
            Operand(f"in{i}", "AnyFloat", 0, None, False) for i in range(num_operands)
        ),
        results=(Result("y", result_doc),),
        params=tuple(Param(p, "F64", None, False, False, (), param_doc) for p in params),
        backward=Backward("Decompose"),
        destructive_input=None,
        **fields,
    )


# The text of each recipe registered from Python, by the name it was
# registered under: builders put it into the modules that use the op.
_RECIPE_TEXT = {}


def register(name: str, recipe_or_num_operands, params=()) -> Entry:
    """Registers a fused op at run time and returns its entry.

    `register(name, recipe)` defines the op by a recipe: a Python function
    over scalars (traced, see `fuel_mlir.recipes`) or the MLIR text of a
    `fuel.recipe @name`. Its operands, params and family are read from the
    recipe; a recipe equal to one registered before (in canonical form)
    returns that op's entry, whatever its name; a name already used for
    another computation, a static op's name, a step outside the recipe
    vocabulary or a malformed body raise `ValueError` or `TypeError`.
    Builders (`fuel.fused(name, ...)`) then put the recipe into the module
    they build in, so that it is self-contained, and `fuel-fuse` runs in
    this process search for the op (putting the recipe into the modules
    they find it in).

    `register(name, num_operands, params)` registers an op without a
    recipe: `num_operands` float tensors, one result shaped like the
    first, an f64 param for each name in `params`. Registering the same
    name with the same signature again returns the same entry.
    """
    from ._mlir_libs import _site_initialize_0 as _ext

    if callable(recipe_or_num_operands) or isinstance(recipe_or_num_operands, str):
        if params:
            raise TypeError("a recipe's params are read from the recipe")
        return _register_recipe(name, recipe_or_num_operands)
    if isinstance(recipe_or_num_operands, bool) or not isinstance(recipe_or_num_operands, int):
        raise TypeError("register(name, recipe) takes a function or MLIR text; "
                        "register(name, num_operands, params) an int")
    num_operands = recipe_or_num_operands
    params = tuple(params)
    op_id = _ext.register_runtime_op(name, int(num_operands), list(params))
    if op_id in _BY_ID:
        return _BY_ID[op_id]
    entry = _runtime_entry(op_id, name, num_operands, params, "recipe scalar slot",
                           result_doc="shaped like the first operand",
                           summary="runtime-registered fused op")
    _BY_ID[op_id] = entry
    _BY_NAME[name] = entry
    return entry


def _register_recipe(name: str, recipe) -> Entry:
    from . import ir
    from ._mlir_libs import _site_initialize_0 as _ext
    from ._fuel_builder_support import _diagnostics

    if not isinstance(name, str) or not name:
        raise TypeError("a recipe's name is a non-empty string")
    if name in _BY_NAME and not _BY_NAME[name].is_runtime:
        raise ValueError(f"{name!r} is a static fused op")
    if callable(recipe):
        from . import recipes
        text = recipes.trace(recipe, name)
    else:
        text = recipe
    with ir.Context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise ValueError(f"recipe {name!r}: {_diagnostics(e)}") from None
        defs = [op for op in module.body.operations if op.operation.name == "fuel.recipe"]
        others = [op for op in module.body.operations if op.operation.name != "fuel.recipe"]
        if len(defs) != 1 or others:
            raise ValueError(f"recipe {name!r}: expected the text of one fuel.recipe, "
                             f"got {len(defs)} recipes and {len(others)} other ops")
        recipe_op = defs[0].operation
        defined = ir.StringAttr(recipe_op.attributes["sym_name"]).value
        if defined != name:
            raise ValueError(f"recipe {name!r}: the text defines @{defined}")
        param_names = [ir.StringAttr(a).value for a in ir.ArrayAttr(recipe_op.attributes["param_names"])]
        num_args = len(recipe_op.regions[0].blocks[0].arguments)
        canonical_text = str(recipe_op)
    op_id = _ext.lookup_id(name)
    _RECIPE_TEXT[name] = canonical_text
    # `fuel-fuse` runs in this process search for it, as for a library's.
    _ext.add_fusion_recipe(name, canonical_text)
    if op_id in _BY_ID:
        entry = _BY_ID[op_id]
    else:
        num_operands = num_args - len(param_names)
        entry = _runtime_entry(op_id, name, num_operands, param_names,
                               "a param of the recipe",
                               result_doc="shaped like the operands",
                               summary="fused op defined by a recipe",
                               has_recipe=True, decomposable=True,
                               description=canonical_text)
        _BY_ID[op_id] = entry
    _BY_NAME[name] = entry
    return entry


def recipe_text(name: str) -> Optional[str]:
    """The `fuel.recipe` text of an op registered from Python by `name`."""
    return _RECIPE_TEXT.get(name)
