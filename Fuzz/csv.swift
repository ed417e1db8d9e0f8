// Fuzzes the CSV reader and the two importers that read CSV (Sources/Store/CSV.swift,
// FormatReaders.swift): the RFC 4180 parser (quotes, CR/LF, delimiter detection, BOM), the
// point reader (column detection, type inference, coordinate checks, then the importer's
// validation and column inference) and the observations reader (keys checked against a real
// `stations` layer, UTC intervals, duplicates). Nothing is written to the store.

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

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(start, count)
    if let table = try? CSV.parse(bytes) {
        for row in table.rows where row.fields.count != table.header.count || row.line < 1 {
            FuzzSupport.fail("row at line \(row.line) has \(row.fields.count) fields for \(table.header.count) columns")
        }
    }
    if var prepared = try? Importer.readPointCSV(bytes, file: "fuzz.csv", store: store, options: ImportOptions(layer: "points")) {
        _ = try? Importer.validate(&prepared, file: "fuzz.csv", options: ImportOptions(layer: "points"))
        _ = Importer.inferColumns(prepared.features, reserved: ["fid", "geom"])
    }
    var options = ImportOptions(layer: "observations")
    options.timeSeriesOf = "stations"
    if let prepared = try? Importer.readObservations(bytes, file: "fuzz.csv", store: store, options: options) {
        _ = Importer.inferColumns(prepared.features, reserved: ["fid"])
    }
    return 0
}
