import Foundation
import SQLite
import TestSupport
import Testing
import VectorTiles

/// Inputs that crashed a fuzz target (scripts/fuzz.sh), minimised, each rebuilt here from the
/// bytes the fuzzer saved: reading them must now answer instead of trapping.
@Suite(.validatesStores) struct FuzzRegressionTests {
    /// mbtiles-meta target, minimised input `@tile=//-9223720368758082022`: a tile_row beyond
    /// Int64 (SQLite keeps it as a REAL and hands it over as -2^63) overflowed the TMS flip in
    /// tileAddresses(), a trap. Rows outside the tile grid are now skipped.
    @Test func tileRowsOutsideTheGridAreSkipped() throws {
        let url = try Fixtures.temporaryDirectory("tiles").appendingPathComponent("fuzz.mbtiles")
        let database = try Database(path: url.path, mode: .readWriteCreate)
        try database.execute("CREATE TABLE metadata (name text, value text)")
        try database.execute("CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)")
        let insert = try database.prepare("INSERT INTO tiles VALUES (?, ?, ?, ?)")
        // The fuzzer's row, stored as the target stores it: text, converted by INTEGER affinity.
        let row = Array("-9223720368758082022".utf8)
        try insert.run([.text(""), .text(""), .text(String(decoding: row, as: UTF8.self)), .blob([])])
        try insert.run([.integer(1), .integer(1), .integer(0), .blob([])])  // 1/1/1 in XYZ
        try insert.run([.integer(1), .integer(2), .integer(0), .blob([])])  // column 2 of z1's 0…1
        try insert.run([.integer(31), .integer(0), .integer(0), .blob([])])  // beyond z30
        let set = try MBTiles(path: url.path)
        #expect(try set.tileAddresses().map { [$0.z, $0.x, $0.y] } == [[1, 1, 1]])
    }
}
