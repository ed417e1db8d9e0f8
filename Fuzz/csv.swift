// Fuzzes the CSV reader and the two importers that read CSV (Sources/Store/CSV.swift,
// FormatReaders.swift): the RFC 4180 parser (quotes, CR/LF, delimiter detection, BOM), the
// point import end to end (column detection, type inference, coordinate checks, the streaming
// pipeline's checks and writes, column types settled at the end) into a new scratch store that
// is removed after each input, and the observations reader (keys checked against a real
// `stations` layer, UTC intervals, duplicates), which writes nothing.

import Foundation
import Geometry
@testable import Store

/// The stations layer the observations belong to, imported once from the fixtures.
/// (`nonisolated(unsafe)`: libFuzzer calls the target from one thread only.)
nonisolated(unsafe) let store: GeoPackage = {
    let path = FuzzSupport.scratchDirectory("vltava-fuzz-csv") + "/stations.gpkg"
    do {
        let store = try GeoPackage(path: path, mode: .readWrite)
        _ = try Importer.importFile(FuzzSupport.fixture("air/stations-prague.csv"), into: store, options: ImportOptions(layer: "stations"))
        return store
    } catch {
        FuzzSupport.fail("cannot build the stations store: \(error)")
    }
}()

/// The input as a file, and the store a point import of it makes (removed after each input).
let input = FuzzSupport.scratchDirectory("vltava-fuzz-csv") + "/input.csv"
let output = FuzzSupport.scratchDirectory("vltava-fuzz-csv") + "/points.gpkg"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(start, count)
    if let table = try? CSV.parse(bytes) {
        for row in table.rows where row.fields.count != table.header.count || row.line < 1 {
            FuzzSupport.fail("row at line \(row.line) has \(row.fields.count) fields for \(table.header.count) columns")
        }
    }
    if FileManager.default.createFile(atPath: input, contents: Data(bytes)) {
        _ = try? Importer.importFile(input, intoStoreAt: output, options: ImportOptions(layer: "points"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: output + suffix) }
    }
    var options = ImportOptions(layer: "observations")
    options.timeSeriesOf = "stations"
    _ = try? Importer.readObservations(bytes, file: "fuzz.csv", store: store, options: options)
    return 0
}
