"""Saving an opened bundle again: the time and memory of ``load`` then ``save`` with nothing
written between, the members copied from the bundle (or, with ``--make``, made again as a save
after a write makes them).

python benchmarks/resave.py BUNDLE OUT [--make]

Memory is sampled on a thread every 50 ms from /proc/self/status (Linux): the peak resident set
(``VmRSS``, which counts the pages of the mapped bundle a save reads) and the peak of anonymous
memory (``RssAnon``: what the process itself holds), against what opening held. ``OUT`` is
written (and overwritten); use a path beside ``BUNDLE``'s file system with room for a copy.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, print_table, timer  # noqa: E402


def _status_mb() -> dict[str, float]:
    """VmRSS and RssAnon of this process, in MiB."""
    found: dict[str, float] = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                found[key] = int(value.split()[0]) / 1024
    return found


class _Peaks:
    """The peaks of :func:`_status_mb` since the last :meth:`reset`, sampled on a thread."""

    def __init__(self, every: float = 0.05) -> None:
        self.peaks = {"VmRSS": 0.0, "RssAnon": 0.0}
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            for key, value in _status_mb().items():
                self.peaks[key] = max(self.peaks[key], value)
            self._stop.wait(self._every)

    def reset(self) -> None:
        self.peaks = dict.fromkeys(self.peaks, 0.0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--make", action="store_true", help="make every member again instead of copying"
    )
    args = parser.parse_args()
    from noema import KnowledgeBase
    from noema.storage.store import Store

    if args.make:  # as a save after a write: nothing copied
        Store._copying = lambda self, snapshot, names_kept: None  # type: ignore[method-assign]
    peaks = _Peaks()
    with timer() as load:
        kb = KnowledgeBase.load(args.bundle)
    opened = _status_mb()["RssAnon"]
    time.sleep(0.1)
    peaks.reset()
    with timer() as save:
        kb.save(args.out)
    peaks.stop()
    print(f"{machine()}; {args.bundle} ({args.bundle.stat().st_size / 1e9:.1f} GB)")
    print_table(
        ["members", "load", "save", "peak RSS", "peak anonymous", "beyond opening"],
        [
            [
                "made" if args.make else "copied",
                f"{load[0]:.1f} s",
                f"{save[0]:.1f} s",
                f"{peaks.peaks['VmRSS']:,.0f} MiB",
                f"{peaks.peaks['RssAnon']:,.0f} MiB",
                f"+{peaks.peaks['RssAnon'] - opened:,.0f} MiB",
            ]
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
