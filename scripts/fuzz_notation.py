"""A long fuzz run of the notation reader and writer (hypothesis, many examples).

    python scripts/fuzz_notation.py --examples 20000

Checks that ``parse_notation`` on arbitrary text either parses or raises ``ValueError`` (nothing
else, no hang), and that encode -> parse -> encode is the identity on generated graphs. Prints the
number of cases run.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_notation import NOTATION_LINES, graphs  # noqa: E402

import noema  # noqa: E402

COUNTS = {"text": 0, "soup": 0, "graphs": 0}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=20_000, help="examples per property")
    args = parser.parse_args()
    config = settings(
        max_examples=args.examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )

    @config
    @given(st.text(max_size=400))
    def arbitrary_text(text: str) -> None:
        COUNTS["text"] += 1
        with contextlib.suppress(ValueError):
            noema.parse_notation(text)

    @config
    @given(st.lists(st.sampled_from(NOTATION_LINES) | st.text(max_size=30), max_size=12))
    def line_soup(lines: list[str]) -> None:
        COUNTS["soup"] += 1
        try:
            noema.parse_notation("\n".join(lines))
        except ValueError as exc:
            assert str(exc).startswith("line ")

    @config
    @given(graphs())
    def round_trip(graph: noema.SemanticGraph) -> None:
        COUNTS["graphs"] += 1
        text = noema.encode_graph(graph)
        noema.parse_notation(text)
        assert noema.check_round_trip(graph).ok

    start = time.perf_counter()
    arbitrary_text()
    line_soup()
    round_trip()
    total = sum(COUNTS.values())
    print(f"fuzz: {total:,} cases in {time.perf_counter() - start:.0f}s ({COUNTS}); no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
