# loopscan — two commands for a fresh machine (Python 3.11 + pip):
#   make demo   install, then analyze the bundled incident transcript
#   make test   install with test dependencies, then run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/loopscan analyze fixtures/incident/deepseek-doom-loop.jsonl --format table --fail-on never

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) bench/data .pytest_cache
