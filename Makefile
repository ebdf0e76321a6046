# Two entry points: `make demo` and `make test`. Each builds .venv from pyproject.toml when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs clean

$(STAMP): pyproject.toml
	@echo "setting up $(VENV) (log in $(VENV)/install.log)"
	$(PYTHON) -m venv $(VENV)
	@( $(BIN)/python -m pip install --upgrade pip && $(BIN)/python -m pip install -e '.[test]' ) \
		> $(VENV)/install.log 2>&1 || { tail -n 30 $(VENV)/install.log; exit 1; }
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/anonbandits decompose examples/ads_60x4.json --C 3 --method auto -o examples/ads_60x4.decomposition.json
	$(BIN)/anonbandits verify examples/ads_60x4.json examples/ads_60x4.decomposition.json --C 3

# ruff (lint and the complexity limit, then format), mypy of each layer from the project root, then pytest on
# every core (pytest-xdist)
test: $(STAMP)
	$(BIN)/ruff check solvers src tests benchmarks
	$(BIN)/ruff format --check solvers src tests benchmarks
	$(BIN)/mypy solvers
	$(BIN)/mypy src
	$(BIN)/python -m pytest -q -n auto

# the API reference (Sphinx + numpydoc, installed by the test extra), warnings as errors, into build/docs
docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs/api build/docs

lint: $(STAMP)
	$(BIN)/ruff check solvers src tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
