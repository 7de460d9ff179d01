"""Each optional extra, when missing, names the pip command that installs it."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("hidden", "use", "extra"),
    [
        ("langchain_core", "import noema_langchain", "langchain"),
        ("llama_index.core", "import noema_llamaindex", "llamaindex"),
        ("ray", "import noema.distributed as d; d.build_on_ray(['x'])", "ray"),
    ],
)
def test_a_missing_extra_is_named(hidden: str, use: str, extra: str) -> None:
    code = f"import sys; sys.modules[{hidden!r}] = None\ntry:\n    {use}\nexcept (ImportError, LookupError) as e:\n    print(e)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert f"pip install 'noema[{extra}]'" in out
