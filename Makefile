# psbench front door. `make demo` and `make test` each set up what is missing first.
BUILD_DIR ?= build
PYTEST_ARGS ?=
# pytest-xdist workers: runs mostly wait on processes, so more workers than cores pay
# (on 2 cores, 4 took 277 s where 3 took 311 s, 2026-11-26).
PYTEST_WORKERS ?= 4

.PHONY: all setup bytecode build build-all build-drivers test test-native test-python test-unit test-long style demo bench clean

all: build

setup:
	@scripts/setup-system
	@scripts/setup-python

$(BUILD_DIR)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: setup bytecode $(BUILD_DIR)/build.ninja
	@cmake --build $(BUILD_DIR)

# Python's bytecode: a run's start reads it instead of compiling every module again, also
# where PYTHONDONTWRITEBYTECODE keeps Python from writing it (bench/run_cost.py).
bytecode: setup
	@./.venv/bin/python -m compileall -q python

# Drivers built on request (their manifest: build = "on-request"): all of them, or one.
# build-all also builds psbench criteria's monitoring tools; build-drivers (what make
# test needs) every driver without them.
build-all: setup bytecode $(BUILD_DIR)/build.ninja
	@scripts/setup-system --with all
	@cmake -S . -B $(BUILD_DIR) -DPSBENCH_BUILD_ALL=ON -DPSBENCH_MONITOR_TOOLS=ON > /dev/null
	@cmake --build $(BUILD_DIR)

build-drivers: setup bytecode $(BUILD_DIR)/build.ninja
	@scripts/setup-system --with all
	@cmake -S . -B $(BUILD_DIR) -DPSBENCH_BUILD_ALL=ON > /dev/null
	@cmake --build $(BUILD_DIR)

# A driver built from source (manifest: build = "from-source") first builds its middleware
# into ~/.cache/psbench (scripts/build-source; its variables, e.g. OPENDDS_SRC=, name local
# source trees, docs/source-builds.md).
# VERSION=V: the driver against another version of its middleware, beside the default
# (manifest [[versions]], scripts/build-version, docs/versions.md): runs name it NAME@V.
driver-%: setup bytecode $(BUILD_DIR)/build.ninja
	@test -f drivers/$*/manifest.toml || { echo "make: no driver drivers/$*"; exit 2; }
	@scripts/setup-system --with $*
	@if [ -n "$(VERSION)" ]; then scripts/build-version $* "$(VERSION)" $(BUILD_DIR); else \
	  if grep -q '^build *= *"from-source"' drivers/$*/manifest.toml; then scripts/build-source $*; fi && \
	  cmake -S . -B $(BUILD_DIR) -DPSBENCH_BUILD_$(shell echo $* | tr a-z A-Z)=ON > /dev/null && \
	  cmake --build $(BUILD_DIR); fi

# Every driver: CI builds and tests them all (the monitoring tools with make test-long).
test: build-drivers
	@scripts/check-style
	@$(MAKE) --no-print-directory test-native test-python

# Two at a time; tests of drivers with services take turns (drivers/psbench_driver.cmake).
test-native:
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j2

# Tests that share a machine-wide resource run one at a time (tests/scheduling.py); the
# long ones (reproductions, bench rounds) wait for `make test-long`.
test-python:
	./.venv/bin/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup -m "not long" tests $(PYTEST_ARGS)

# The pure-Python tests listed in tests/unit-tests.txt (statistics, reports from files,
# parsing, the docs' commands): nothing built, no driver, no service, so they run on a clean
# clone with only the Python environment. The build directory they are given does not
# exist: a listed test that needs the node fails here instead of using an old build.
test-unit:
	@scripts/setup-python
	PSBENCH_BUILD=$(CURDIR)/.no-build ./.venv/bin/python -m pytest -q -n $(PYTEST_WORKERS) -m "not long" $$(grep -v '^#' tests/unit-tests.txt) $(PYTEST_ARGS)

test-long: build-all
	./.venv/bin/python -m pytest -q -m long tests $(PYTEST_ARGS)

# Rewrites what ruff and clang-format can (scripts/check-style --fix).
style: setup
	@scripts/check-style --fix

demo: build
	./psbench demo

bench: build
	bench/overhead
	bench/ddsperf_compare
	bench/all_drivers
	bench/throughput
	bench/accounting
	bench/truth
	bench/run_cost

clean:
	rm -rf $(BUILD_DIR) results
