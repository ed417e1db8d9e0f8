// Fuzzes MBTiles metadata (Sources/VectorTiles/MBTiles.swift): the input is written into the
// metadata and tiles tables of a real SQLite MBTiles file, which is then opened as a tile set
// is (`MBTiles(path:)`), and its name, zooms, bounds, TileJSON (center, vector_layers from the
// `json` row) and tile addresses are read, as the server's /tiles endpoints do.
//
// Input: lines of `name=value` (the value's bytes as stored, any bytes but a newline), e.g.
// `bounds=-180,-85,180,85`; a line `@tile=Z/X/Y` adds a tile at those (TMS) numbers, stored as
// text so SQLite's INTEGER affinity converts them as it would a hand-written file.

import Foundation
import Geometry
import SQLite
import Support
import VectorTiles

/// One file for the whole run, rewritten by each input through one connection kept open.
/// (`nonisolated(unsafe)`: libFuzzer calls the target from one thread only.)
let path = FuzzSupport.scratchDirectory("vltava-fuzz-mbtiles") + "/fuzz.mbtiles"
nonisolated(unsafe) let writer: Database = {
    do {
        let database = try Database(path: path, mode: .readWriteCreate)
        // No journal on disk and no fsync: the file is scratch, and speed is coverage.
        try database.execute("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF")
        try database.execute("CREATE TABLE metadata (name text, value text)")
        try database.execute("CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)")
        return database
    } catch {
        FuzzSupport.fail("cannot create \(path): \(error)")
    }
}()
nonisolated(unsafe) let insertMetadata = prepare("INSERT INTO metadata (name, value) VALUES (?, ?)")
nonisolated(unsafe) let insertTile = prepare("INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)")

func prepare(_ sql: String) -> Statement {
    do { return try writer.prepare(sql) } catch { FuzzSupport.fail("\(sql): \(error)") }
}

/// A tiny MVT tile (one empty layer named "fuzz"), so a listed address has bytes to decode.
let tileBytes: [UInt8] = [0x1A, 0x08, 0x0A, 0x04] + Array("fuzz".utf8) + [0x78, 0x02]

func write(_ bytes: [UInt8]) {
    do {
        try writer.transaction {
            try writer.execute("DELETE FROM metadata; DELETE FROM tiles")
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                let pair = line.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(decoding: pair[0], as: UTF8.self)
                let value = pair.count > 1 ? Array(pair[1]) : []
                if name == "@tile" {
                    let numbers = value.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { SQLiteValue.text(String(decoding: $0, as: UTF8.self)) }
                    guard numbers.count == 3 else { continue }
                    try insertTile.run(numbers + [.blob(tileBytes)])
                } else {
                    // As a blob, so any bytes reach the reader unchanged (SQLite hands it over as text).
                    try insertMetadata.run([.text(name), .blob(value)])
                }
            }
        }
    } catch {
        FuzzSupport.fail("cannot write the MBTiles file: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    write(FuzzSupport.bytes(start, count))
    let tiles: MBTiles
    do {
        tiles = try MBTiles(path: path)
    } catch {
        FuzzSupport.fail("a well-formed MBTiles file refused: \(error)")
    }
    _ = (tiles.name, tiles.bounds)
    // Zooms as TileJSON allows them (issue 30: a minzoom of -2^63, or 20 over a maxzoom of 2).
    for zoom in [tiles.minZoom, tiles.maxZoom].compactMap({ $0 }) where !(0...30).contains(zoom) {
        FuzzSupport.fail("zoom \(zoom) outside 0…30")
    }
    if let low = tiles.minZoom, let high = tiles.maxZoom, low > high { FuzzSupport.fail("minzoom \(low) above maxzoom \(high)") }
    // A NaN, infinite or huge center is set aside when the set opens (issue 19), so TileJSON
    // is fuzzed on every input.
    _ = JSONWriter.encode(tiles.tileJSON(tilesURL: "http://127.0.0.1/v1/tiles/fuzz/{z}/{x}/{y}"))
    if let addresses = try? tiles.tileAddresses() {
        for (z, x, y) in addresses.prefix(4) {
            _ = try? tiles.tile(z: z, x: x, y: y)
            _ = try? tiles.features(z: z, x: x, y: y)
        }
    }
    return 0
}
