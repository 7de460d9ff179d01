# The two commands: `make demo` and `make test`. Both create .venv on a fresh clone and work offline.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test lint typecheck pytest pytest-other-precision browser clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@echo "==> creating $(VENV) and installing noema with every extra (about 2.5 minutes the first time)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -e '.[all,dev]'
	@touch $(STAMP)
	@echo "==> installed"

demo: $(STAMP)
	@echo "==> building a knowledge base from examples/docs and asking it a question"
	$(PY) examples/demo.py

lint: $(STAMP)
	@echo "==> ruff"
	$(PY) -m ruff check noema noema_langchain noema_llamaindex tests benchmarks examples scripts training
	$(PY) -m ruff format --check noema noema_langchain noema_llamaindex tests benchmarks examples scripts training

typecheck: $(STAMP)
	@echo "==> mypy"
	$(PY) -m mypy

browser:
	@# the HTML view is checked in a real headless browser; Debian's chromium is the one we use
	@command -v chromium >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "==> installing Debian's chromium for the HTML view test"; \
	    { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
	      || echo "==> chromium could not be installed: its test will be skipped"; \
	  else echo "==> chromium not found and cannot be installed here: its test will be skipped"; fi; }

pytest: $(STAMP) browser
	@echo "==> pytest"
	$(PY) -m pytest -q

# The tests whose vectors or bundle bytes depend on the precision, once more in the precision
# this CPU does not choose by itself (float32 on a CPU with bfloat16, bfloat16 elsewhere), so both
# kinds of CPU are exercised on any machine.
PRECISION_TESTS := tests/test_embed.py tests/test_bundle.py tests/test_distributed.py

pytest-other-precision: $(STAMP)
	@other=$$($(PY) -c "from noema.vectors.embed import resolved_precision as r; print('float32' if r('auto') == 'bfloat16' else 'bfloat16')"); \
	  echo "==> pytest with NOEMA_PRECISION=$$other (the other kind of CPU)"; \
	  NOEMA_PRECISION=$$other $(PY) -m pytest -q $(PRECISION_TESTS)

test: lint typecheck pytest pytest-other-precision
	@echo "==> all checks passed"

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
