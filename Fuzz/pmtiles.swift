// Fuzzes the PMTiles reader (Sources/VectorTiles/PMTilesReader.swift): the input is an archive,
// written to a file and opened as a tile set is (`PMTiles(path:)`); then what the server reads
// of one: its zooms, bounds and TileJSON, what its tiles hold (the first tiles read and
// decoded), every tile entry walked, and tiles read by address. Any bytes must give an archive
// or a PMTilesError, never a trap; what opens must keep TileJSON's rules.
//
// Seeds (Fuzz/seeds.py) are small archives with uncompressed directories and metadata, so that
// mutations reach the directory decoder rather than stopping at gzip's checksum, and one as the
// reference writer makes them (gzip).

import Foundation
import Support
@testable import VectorTiles

let path = FuzzSupport.scratchDirectory("vltava-fuzz-pmtiles") + "/fuzz.pmtiles"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    do {
        try Data(bytes: start, count: count).write(to: URL(fileURLWithPath: path))
    } catch {
        FuzzSupport.fail("cannot write \(path): \(error)")
    }
    let archive: PMTiles
    do {
        archive = try PMTiles(path: path)
    } catch {
        return 0
    }
    for zoom in [archive.minZoom, archive.maxZoom].compactMap({ $0 }) where !(0...30).contains(zoom) {
        FuzzSupport.fail("zoom \(zoom) outside 0…30")
    }
    if let low = archive.minZoom, let high = archive.maxZoom, low > high { FuzzSupport.fail("minzoom \(low) above maxzoom \(high)") }
    _ = (archive.name, archive.metadata, archive.contents)
    _ = JSONWriter.encode(archive.tileJSON(tilesURL: "http://127.0.0.1/v1/tiles/fuzz/{z}/{x}/{y}"))
    // Every entry (leaves followed), then the first few tiles by their address; in an archive
    // of a root alone (ids strictly ascending, so the search finds that very entry) each with
    // as many bytes as its entry says.
    var entries: [PMTilesEntry] = []
    var tiles: UInt64 = 0
    try? archive.forEachEntry { entry in
        tiles += UInt64(entry.runLength)
        if entries.count < 8 { entries.append(entry) }
        return tiles < 1 << 20
    }
    for entry in entries {
        guard let (z, x, y) = PMTilesTileID.address(entry.tileID), z <= 30 else { continue }
        if let bytes = try? archive.tile(z: z, x: x, y: y), archive.header.leafLength == 0, bytes.count != Int(entry.length) {
            FuzzSupport.fail("tile \(z)/\(x)/\(y): \(bytes.count) bytes for an entry of \(entry.length)")
        }
        _ = try? archive.features(z: z, x: x, y: y)
    }
    // Listing every address allocates one per tile: only for archives of modest size.
    if tiles < 1 << 16 { _ = try? archive.tileAddresses() }
    return 0
}
