from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_demo_answers_the_two_hop_question() -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")], capture_output=True, text=True, check=True
    ).stdout
    two_hop = out.split("hops=2")[1]
    assert "Jensen Huang" in two_hop and "-found->" in two_hop
