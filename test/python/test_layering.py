"""The libraries are layers (docs/ARCHITECTURE.md): each folder of lib/ is one
CMake library that links, and includes the public headers of, only the
libraries below it, and no file includes another folder's private headers."""

import re

import pytest

from conftest import REPO_ROOT

# Bottom to top: a library may use those before it.
LAYERS = ["IR", "Recipes", "Decompose", "Match", "Codegen", "Transforms", "CAPI"]
# Decompose and Match are one layer, and Codegen (above Decompose) does not
# use Match: neither of a pair uses the other.
PEERS = {("Decompose", "Match"), ("Match", "Decompose"),
         ("Codegen", "Match"), ("Match", "Codegen")}
LIBRARY = {"IR": "MLIRFuelIR", "Recipes": "MLIRFuelRecipes",
           "Decompose": "MLIRFuelDecompose", "Match": "MLIRFuelMatch",
           "Codegen": "MLIRFuelCodegen", "Transforms": "MLIRFuelTransforms",
           "CAPI": "FuelCAPI"}
HEADER_DIR = {"IR": "IR", "Recipes": "Recipes", "Decompose": "Decompose",
              "Match": "Match", "Codegen": "Codegen", "Transforms": "Transforms"}


def allowed(user, used):
    return used == user or (
        (user, used) not in PEERS and LAYERS.index(used) < LAYERS.index(user))


def sources(folder):
    d = REPO_ROOT / "lib" / folder
    return sorted(p for p in d.iterdir() if p.suffix in (".cpp", ".h"))


def test_every_folder_is_a_layer():
    folders = sorted(p.name for p in (REPO_ROOT / "lib").iterdir() if p.is_dir())
    assert folders == sorted(LAYERS)


@pytest.mark.parametrize("folder", LAYERS)
def test_one_library_per_folder_linking_down(folder):
    cmake = (REPO_ROOT / "lib" / folder / "CMakeLists.txt").read_text()
    declared = re.findall(r"add_mlir\w*library\((\w+)", cmake)
    assert declared == [LIBRARY[folder]]
    links = re.search(r"LINK_LIBS PUBLIC(.*?)\)", cmake, re.S).group(1).split()
    for lib in links:
        for other, name in LIBRARY.items():
            if lib == name:
                assert allowed(folder, other), f"{LIBRARY[folder]} links {lib}"


@pytest.mark.parametrize("folder", LAYERS)
def test_includes_go_down_only(folder):
    for path in sources(folder):
        for inc in re.findall(r'#include "([^"]+)"', path.read_text()):
            assert "../" not in inc, f"{path.name} includes {inc}"
            m = re.match(r"FuelFused/(\w+)/", inc)
            if m:
                used = next(k for k, v in HEADER_DIR.items() if v == m.group(1))
                assert allowed(folder, used), f"{path.name} ({folder}) includes {inc}"
            elif "/" not in inc and not inc.endswith(".inc"):
                # A private header: from its own folder.
                assert (path.parent / inc).is_file(), f"{path.name} includes {inc}"


@pytest.mark.parametrize("layer", list(HEADER_DIR))
def test_public_headers_go_down_only(layer):
    for path in sorted((REPO_ROOT / "include" / "FuelFused" / layer).glob("*.h")):
        for inc in re.findall(r'#include "FuelFused/(\w+)/', path.read_text()):
            used = next(k for k, v in HEADER_DIR.items() if v == inc)
            assert allowed(layer, used), f"{path.name} includes FuelFused/{inc}/"


def test_registry_is_data_only():
    # The dialect's library names no recipe or decomposition function.
    text = "".join(p.read_text() for p in sources("IR"))
    assert "lookupRecipe" not in text and "lookupDecomposition" not in text
    assert "decomposeFusedOp" not in text
