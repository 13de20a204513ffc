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

INCIDENT := fixtures/incident/deepseek-doom-loop.jsonl

demo: $(STAMP)
	$(BIN)/loopscan analyze $(INCIDENT) --format table --fail-on never
	@echo "\nThe same session under loopscan's own profile (--profile loopscan):"
	@$(BIN)/loopscan analyze $(INCIDENT) --profile loopscan --format json --fail-on never \
		| $(BIN)/python -c "import json, sys; print(json.load(sys.stdin)['verdict'])"

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) bench/data .pytest_cache
