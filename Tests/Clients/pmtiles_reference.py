#!/usr/bin/env python3
"""The reference PMTiles implementation (PyPI `pmtiles` 3.8, by the format's authors) against
Vltava's reader and writer (Sources/VectorTiles/PMTiles*.swift), for
Tests/VectorTilesTests/PMTilesTests.swift.

  pmtiles_reference.py read ARCHIVE            the archive as the reference reads it, as JSON:
                                               {"header": {...}, "metadata": {...},
                                                "tiles": [[z, x, y, "hex bytes"], ...]} in tile id order
  pmtiles_reference.py convert MBTILES OUT     the reference's own MBTiles → PMTiles conversion
  pmtiles_reference.py time ARCHIVE ROUNDS [N]  seconds to read every tile (or every k-th, N in all)
                                               ROUNDS times through the reference's Reader.get (an
                                               mmap'ed file), as JSON. Reader.get decodes the root
                                               directory again on every call, so an archive of many
                                               tiles in one root takes time in proportion to its size
                                               for each tile: N keeps such a run short

Usage: scripts/install-deps.sh --test   (installs pmtiles==3.8.*)
"""

import json
import sys
import time

from pmtiles.convert import mbtiles_to_pmtiles
from pmtiles.reader import MmapSource, Reader, all_tiles


def read(path):
    with open(path, "rb") as f:
        source = MmapSource(f)
        reader = Reader(source)
        header = reader.header()
        # Enums as their numbers, as the header stores them.
        header = {k: (v.value if hasattr(v, "value") else v) for k, v in header.items()}
        tiles = [[z, x, y, bytes(data).hex()] for (z, x, y), data in all_tiles(source)]
        return {"header": header, "metadata": reader.metadata(), "tiles": tiles}


def timed(path, rounds, limit=None):
    with open(path, "rb") as f:
        source = MmapSource(f)
        reader = Reader(source)
        addresses = [zxy for zxy, _ in all_tiles(source)]
        if limit and limit < len(addresses):
            addresses = addresses[:: len(addresses) // limit][:limit]
        start = time.perf_counter()
        total = 0
        for _ in range(rounds):
            for z, x, y in addresses:
                total += len(reader.get(z, x, y))
        seconds = time.perf_counter() - start
        return {"tiles": len(addresses) * rounds, "bytes": total, "seconds": seconds}


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "read" and len(sys.argv) == 3:
        print(json.dumps(read(sys.argv[2])))
    elif command == "convert" and len(sys.argv) == 4:
        mbtiles_to_pmtiles(sys.argv[2], sys.argv[3], None)
    elif command == "time" and len(sys.argv) in (4, 5):
        print(json.dumps(timed(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) == 5 else None)))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
