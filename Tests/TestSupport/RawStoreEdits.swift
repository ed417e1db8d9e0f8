// Edits a store the way another tool would (GDAL, the sqlite3 shell): raw SQL through the
// project's own SQLite wrapper, past every check of the importers. For the tests of what the
// engine does with data it did not write itself.

import Foundation
import Geometry
import SQLite

public enum RawStoreEdits {
    /// Runs one statement on the file, with `?` bound to `values` in order.
    public static func execute(_ sql: String, _ values: [SQLiteValue] = [], in path: String) throws {
        // Not a store Vltava wrote any more: the sweep of `.validatesStores` leaves it out.
        StoreSweep.current?.exclude(path)
        let database = try Database(path: path, mode: .readWrite)
        try database.prepare(sql).run(values)
    }

    /// Sets the geometry of one feature to `blob`.
    public static func setGeometry(of layer: String, fid: Int64, to blob: [UInt8], in path: String) throws {
        try execute("UPDATE \"\(layer)\" SET geom = ? WHERE fid = ?", [.blob(blob), .integer(fid)], in: path)
    }

    /// Sets (or adds) one row of an MBTiles file's metadata.
    public static func setMBTilesMetadata(_ name: String, to value: String, in path: String) throws {
        try execute("DELETE FROM metadata WHERE name = ?", [.text(name)], in: path)
        try execute("INSERT INTO metadata (name, value) VALUES (?, ?)", [.text(name), .text(value)], in: path)
    }

    /// A copy of a fixture in a fresh temporary directory, to edit.
    public static func copy(ofFixture fixture: String, as name: String) throws -> String {
        let target = try Fixtures.temporaryDirectory("edited").appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: Fixtures.path(fixture), toPath: target)
        return target
    }

    /// "47500001…" → bytes.
    public static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16) }
    }

    /// A GeoPackage geometry blob as GDAL writes one: "GP", version 0, little-endian, no
    /// envelope (the empty flag when `empty`), SRS 4326, then the WKB.
    public static func geoPackageBlob(_ wkb: [UInt8], empty: Bool = false) -> [UInt8] {
        [0x47, 0x50, 0x00, empty ? 0x11 : 0x01, 0xE6, 0x10, 0x00, 0x00] + wkb
    }

    /// GDAL's POINT EMPTY: the empty flag, and a WKB point of NaN coordinates.
    public static let pointEmpty = bytes(hex: "47500011E61000000101000000000000000000F87F000000000000F87F")

    /// The blob of the report: POINT (14.42 inf), as `sqlite3 … "update stations set geom=X'…'"` writes it.
    public static let infiniteLatitude = bytes(hex: "47500001E61000000101000000D7A3703D0AD72C40000000000000F07F")
}
