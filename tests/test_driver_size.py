"""scripts/driver-size counts every source file of a driver folder, in every subfolder, and
nothing else (issue 33, item 1): checked on made-up driver folders with known line counts."""

import subprocess
from pathlib import Path

from conftest import REPO

SCRIPT = REPO / "scripts" / "driver-size"


def _write(folder: Path, files: dict[str, int]) -> None:
    for name, count in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"line {i}\n" for i in range(count)))


def _sizes(drivers: Path) -> dict[str, str]:
    proc = subprocess.run([str(SCRIPT), str(drivers)], capture_output=True, text=True, check=True)
    return {line.split()[0]: line.split(None, 1)[1] for line in proc.stdout.splitlines()}


def test_every_source_file_counts_in_every_subfolder_and_tests_and_manifests_do_not(tmp_path):
    _write(
        tmp_path / "rusty",
        {
            "CMakeLists.txt": 10,
            "src/lib.rs": 100,
            "src/deep/more.rs": 50,
            "build.rs": 7,
            "clean_shm.py": 5,
            "helpers.cmake": 3,
            "src/settings_test.rs": 400,  # a test: left out
            "Cargo.toml": 30,  # manifests, configuration and docs: left out
            "Cargo.lock": 900,
            "manifest.toml": 20,
            "README.md": 80,
            "target/debug/generated.rs": 999,  # a build's own folder: left out
        },
    )
    _write(
        tmp_path / "cpp",
        {
            "CMakeLists.txt": 4,
            "driver.cpp": 200,
            "driver.h": 20,
            "parse.c": 30,
            "parse.hpp": 6,
            "driver_test.cpp": 300,
            "log4j2.properties": 40,
            "pom.xml": 50,
        },
    )
    _write(tmp_path / "minimal", {"CMakeLists.txt": 2, "minimal_driver.cpp": 190})
    _write(tmp_path / "big", {"CMakeLists.txt": 1, "x.cpp": 999})
    _write(tmp_path / "not-a-driver", {"notes.cpp": 50})  # no CMakeLists.txt
    sizes = _sizes(tmp_path)
    assert sizes["rusty"] == "175"
    assert sizes["cpp"] == "260"
    assert sizes["big"] == "1000"
    assert sizes["minimal"].startswith("192") and "template" in sizes["minimal"]
    assert "not-a-driver" not in sizes
    # The median of the three drivers, the template left out: 260.
    assert sizes["median"].split()[0] == "260" and "of 3 drivers" in sizes["median"]


def test_the_repositorys_drivers_are_all_listed():
    sizes = _sizes(REPO / "drivers")
    folders = {p.parent.name for p in (REPO / "drivers").glob("*/CMakeLists.txt")}
    assert folders <= set(sizes) and "median" in sizes
