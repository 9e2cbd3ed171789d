# ratercal: `make reproduce` regenerates the 1990 study into results/; `make test` runs the fast
# tests, `make test-slow` the slow ones (CI, .ci/run, runs both).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN    := runs/denny1990

.PHONY: setup reproduce simulate adjust score report test test-slow lint bench example clean

$(BIN)/ratercal: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/ratercal

simulate: setup
	$(BIN)/ratercal simulate configs/denny1990.yaml --out $(RUN)

adjust: simulate
	$(BIN)/ratercal adjust $(RUN)

score: adjust
	$(BIN)/ratercal score $(RUN)

report: score
	$(BIN)/ratercal report $(RUN) --out results/denny1990

## The whole faithful study, from nothing, into results/denny1990/.
reproduce: report

## examples/ratings.csv: simulated district-like ratings for the README's walk-through; examples/rubric_year*.csv: the rubric walk-through's two administrations.
example: setup
	$(BIN)/ratercal simulate configs/district_example.yaml --out runs/district_example --quiet
	$(BIN)/python examples/make_ratings.py runs/district_example examples/ratings.csv
	$(BIN)/python examples/make_rubric.py examples

## The fast tests (the property suite with its CI profile among them); CI runs test-slow after them.
## -n auto: a process a core (pytest-xdist), each taking the next test as it finishes one (worksteal).
test: setup
	$(BIN)/python -m pytest -q -m "not slow" -n auto --dist worksteal

## ruff over the package and the tests, mypy on the public API's modules ([tool.ruff], [tool.mypy]).
lint: setup
	$(BIN)/ruff check ratercal_cli tests examples benchmarks
	$(BIN)/mypy

## The tests marked slow (whole-report builds and the like) and the property suite with more
## examples (HYPOTHESIS_PROFILE=slow: only the property suite uses Hypothesis, and none of it is marked
## slow): CI runs them after `make test`, in one run so that its processes share the two sets.
test-slow: setup
	HYPOTHESIS_PROFILE=slow $(BIN)/python -m pytest -q -m "slow or property" -n auto --dist worksteal

bench: setup
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf runs .pytest_cache
