# The two set-up commands of the README. Both create .venv and install on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bundle

run: $(STAMP)
	$(BIN)/whiteboard

STRICT := coreapi rmp mtp whiteboard/board whiteboard/transport whiteboard/security

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/mypy --strict $(STRICT)

# A self-contained build for machines without Python (docs/install.md): dist/whiteboard-*/.
bundle: $(STAMP)
	bash packaging/bundle.sh "$(PYTHON)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/mypy --strict $(STRICT)

# A new top-level package (rmp/, mtp/, analytics/) needs the editable install redone.
$(STAMP): pyproject.toml setup.py packaging/bootstrap.sh $(wildcard */__init__.py)
	bash packaging/bootstrap.sh "$(PYTHON)" "$(VENV)"
	touch $(STAMP)
