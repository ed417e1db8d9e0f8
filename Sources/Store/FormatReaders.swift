// The format readers: each turns one kind of file into records for `Importer`, reporting
// problems with the feature index or the line they come from.

import Foundation
import Geometry
import Support

extension Importer {
    // MARK: GeoJSON

    static func readGeoJSON(_ bytes: [UInt8], file: String, options: ImportOptions) throws(StoreError) -> ImportRecords {
        let document: GeoJSONDocument
        do {
            document = try GeoJSON.parseDocument(bytes)
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
        return records(document, options: options)
    }

    /// A FeatureCollection read feature by feature (`GeoJSONStream`), 1 MiB at a time, each
    /// feature handed on as soon as it is parsed. The CRS comes from the collection's `crs`
    /// member, which precedes the features in every writer's output; one that follows them
    /// starts the import again with it.
    static func streamGeoJSON(_ source: ImportSource, options: ImportOptions, into sink: ImportSink) throws(StoreError) {
        struct Cancelled: Error {}
        var sentCRS: String??
        func sendHeader(_ crs: String?) {
            let declared = options.crs ?? crs
            sink.header(ImportHeader(kind: .features, sourceCRS: declared ?? "EPSG:4326", crsAssumed: declared == nil))
            sentCRS = .some(crs)
        }
        let header: (crs: String?, name: String?)
        do {
            header = try GeoJSONStream.read(path: source.path, header: { crs, _ in sendHeader(crs) }) { _, feature in
                if sink.cancelled { throw Cancelled() }
                sink.record(feature)
            }
        } catch is Cancelled {
            return
        } catch {
            throw .importFailed(file: source.file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
        guard let sent = sentCRS else {
            sendHeader(header.crs)  // no features
            return
        }
        if options.crs == nil, sent != header.crs, let crs = header.crs { sink.restartCRS = crs }
    }

    static func records(_ document: GeoJSONDocument, options: ImportOptions) -> ImportRecords {
        let declared = options.crs ?? document.crs
        // A collection with no geometry at all is a table (Vltava's own export of one).
        if !document.features.isEmpty, document.features.allSatisfy({ $0.geometry == nil }) {
            return ImportRecords(kind: .attributes, features: document.features, sourceCRS: nil)
        }
        return ImportRecords(kind: .features, features: document.features, sourceCRS: declared ?? "EPSG:4326", crsAssumed: declared == nil)
    }

    // MARK: CSV of points

    /// Column names, compared folded (lower case, no diacritics, letters and digits only):
    /// "zem. šířka" is "zemsirka".
    static let longitudeNames = ["lon", "lng", "long", "longitude", "x", "londeg", "longitudedeg", "delka", "zemdelka", "zemepisnadelka"]
    static let latitudeNames = ["lat", "latitude", "y", "latdeg", "latitudedeg", "sirka", "zemsirka", "zemepisnasirka"]
    static let wktNames = ["wkt", "geometry", "geom", "thegeom", "wktgeom", "geometrie"]

    /// A CSV of points with longitude/latitude columns, or of any geometry in a WKT column,
    /// read twice from the file, a record at a time: once for the header, the WKT column and
    /// the columns' types (a column is a number column only if every cell is a number), then
    /// again for the features.
    static func streamPointCSV(_ source: ImportSource, options: ImportOptions, into sink: ImportSink) throws(StoreError) {
        let file = source.file
        var header: [String]?
        var firstRow: [String]?
        var tallies: [CSVTypeTally] = []
        var table = CSVTable(header: [], rows: [])
        do {
            try CSV.forEachRecord(path: source.path) { line, fields, decimalComma in
                guard let header else {
                    try CSV.checkImportHeader(fields)
                    table.decimalComma = decimalComma
                    header = fields.map { $0.trimmingSpaces }
                    tallies = Array(repeating: CSVTypeTally(), count: fields.count)
                    return
                }
                guard fields.count == header.count else { throw CSVError.wrongFieldCount(line: line, expected: header.count, found: fields.count) }
                if firstRow == nil { firstRow = fields }
                for (index, cell) in fields.enumerated() { tallies[index].add(cell, table) }
            }
        } catch let error as CSVError {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: error.description)])
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
        guard let header else { throw .importFailed(file: file, problems: [ImportProblem(location: "", message: CSVError.empty.description)]) }
        table.header = header
        let wktIndex = options.lonColumn == nil && options.latColumn == nil ? wktColumn(header: header, firstRow: firstRow) : nil
        let coordinateColumns: [Int]
        if let wktIndex {
            coordinateColumns = [wktIndex]
        } else {
            let lonIndex = try column(options.lonColumn, orOneOf: longitudeNames, role: "longitude", option: "--lon", in: header, file: file)
            let latIndex = try column(options.latColumn, orOneOf: latitudeNames, role: "latitude", option: "--lat", in: header, file: file)
            coordinateColumns = [lonIndex, latIndex]
        }
        let valueColumns = header.indices.filter { !coordinateColumns.contains($0) }
        let types = valueColumns.map { tallies[$0].type }
        // Ranges are checked after reprojection, with the hint for projected metres.
        sink.header(ImportHeader(kind: .features, sourceCRS: options.crs ?? "EPSG:4326", crsAssumed: options.crs == nil))

        struct Cancelled: Error {}
        do {
            var isHeader = true
            try CSV.forEachRecord(path: source.path) { line, fields, _ in
                if isHeader {
                    isHeader = false
                    return
                }
                if sink.cancelled { throw Cancelled() }
                let location = "line \(line)"
                let geometry: Geometry
                if let wktIndex {
                    do {
                        geometry = try WKT.decode(fields[wktIndex])
                    } catch {
                        sink.problem(ImportProblem(location: location, message: "column '\(header[wktIndex])': \(error)"))
                        return
                    }
                } else {
                    let lonCell = fields[coordinateColumns[0]], latCell = fields[coordinateColumns[1]]
                    guard let lon = table.number(lonCell), let lat = table.number(latCell), lon.isFinite, lat.isFinite else {
                        sink.problem(ImportProblem(location: location, message: "longitude '\(lonCell)' or latitude '\(latCell)' is not a finite number"))
                        return
                    }
                    geometry = .point(Point(lon: lon, lat: lat))
                }
                if let problem = nonFiniteCell(fields, valueColumns, types, table) {
                    sink.problem(ImportProblem(location: location, message: problem))
                    return
                }
                var properties = Attributes()
                for (column, type) in zip(valueColumns, types) {
                    properties[header[column]] = csvValue(fields[column], type, table)
                }
                sink.record(Feature(geometry: geometry, properties: properties), location: location)
            }
        } catch is Cancelled {
            return
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
    }

    /// "Zem. šířka" → "zemsirka": lower case, diacritics and punctuation dropped.
    static func foldedName(_ name: String) -> String {
        let folded = name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
        return String(folded.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.map(Character.init))
    }

    /// The WKT geometry column: one named like one (wkt, geometry, the_geom, …) or whose first
    /// non-empty cell starts with a WKT geometry keyword.
    static func wktColumn(header: [String], firstRow: [String]?) -> Int? {
        if let named = header.firstIndex(where: { wktNames.contains(foldedName($0)) }) { return named }
        let keywords = ["POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"]
        guard let first = firstRow else { return nil }
        return first.firstIndex { cell in
            let upper = cell.trimmingSpaces.uppercased()
            return keywords.contains { upper.hasPrefix($0 + " ") || upper.hasPrefix($0 + "(") || upper.hasPrefix($0 + " (") }
        }
    }

    static func parseCSV(_ bytes: [UInt8], file: String) throws(StoreError) -> CSVTable {
        do {
            return try CSV.parse(bytes)
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: error.description)])
        }
    }

    /// The index of the named column, or of the first header matching one of `names`.
    static func column(_ explicit: String?, orOneOf names: [String], role: String, option: String, in header: [String], file: String) throws(StoreError) -> Int {
        let lowered = header.map { $0.lowercased() }
        if let explicit {
            guard let index = lowered.firstIndex(of: explicit.lowercased()) else {
                throw .importFailed(file: file, problems: [ImportProblem(location: "header", message: "no column '\(explicit)' (columns: \(header.joined(separator: ", ")))")])
            }
            return index
        }
        for name in names { if let index = lowered.firstIndex(of: name) { return index } }
        let folded = header.map(foldedName)
        for name in names { if let index = folded.firstIndex(of: foldedName(name)) { return index } }
        throw .importFailed(file: file, problems: [ImportProblem(location: "header", message: "no \(role) column found (looked for \(names.joined(separator: ", "))); name it with \(option)")])
    }

    enum CSVType { case integer, real, bool, text }

    /// A column is integer or real if every non-empty cell parses as one, bool if every
    /// non-empty cell is true/false, text otherwise. Empty cells are nulls.
    static func inferCSVTypes(_ table: CSVTable, columns: [Int]) -> [CSVType] {
        columns.map { column in
            var tally = CSVTypeTally()
            for row in table.rows { tally.add(row.fields[column], table) }
            return tally.type
        }
    }

    /// What the cells of one column seen so far allow it to be.
    struct CSVTypeTally {
        var allInteger = true, allReal = true, allBool = true

        mutating func add(_ cell: String, _ table: CSVTable) {
            let cell = cell.trimmingSpaces
            if cell.isEmpty { return }
            if allInteger, Int64(cell) == nil { allInteger = false }
            if allReal, table.number(cell) == nil { allReal = false }
            if allBool, cell.lowercased() != "true" && cell.lowercased() != "false" { allBool = false }
        }

        var type: CSVType { allInteger ? .integer : allReal ? .real : allBool ? .bool : .text }
    }

    /// The first cell of a number column that reads as NaN or an infinity ("NaN", "inf",
    /// "1e309", which overflows), as "column 'no2': '1e309' is not a finite number". Such a
    /// value cannot be stored honestly (SQLite writes NaN as NULL, JSON has no infinity), so
    /// the import fails naming the line and the column rather than change it silently.
    static func nonFiniteCell(_ fields: [String], _ columns: [Int], _ types: [CSVType], _ table: CSVTable) -> String? {
        for (column, type) in zip(columns, types) where type == .real {
            let cell = fields[column].trimmingSpaces
            if let value = table.number(cell), !value.isFinite { return "column '\(table.header[column])': '\(cell)' is not a finite number" }
        }
        return nil
    }

    static func csvValue(_ cell: String, _ type: CSVType, _ table: CSVTable) -> AttributeValue {
        let trimmed = cell.trimmingSpaces
        if trimmed.isEmpty { return .null }
        switch type {
        case .integer: return Int64(trimmed).map { .integer($0) } ?? .text(cell)
        case .real: return table.number(trimmed).map { .real($0) } ?? .text(cell)
        case .bool: return .bool(trimmed.lowercased() == "true")
        case .text: return .text(cell)
        }
    }

    // MARK: Observations (time series)

    static let keyColumnNames = ["code", "station", "station_code", "station_id", "id", "key"]
    static let startColumnNames = ["datefromutc", "interval_start", "start_utc", "start", "from"]
    static let endColumnNames = ["datetoutc", "interval_end", "end_utc", "end", "to"]

    /// Rows keyed to the features of a point layer. The columns that describe the point
    /// (those the point layer has too, and coordinates) are dropped; the rest are the values.
    /// Empty cells are stored as NULL and zeros as 0: telling "not measured" from "zero" is the
    /// engine's job, which sees the whole series.
    static func readObservations(_ bytes: [UInt8], file: String, store: GeoPackage, options: ImportOptions) throws(StoreError) -> ImportRecords {
        guard let keyLayerName = options.timeSeriesOf else {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "observations need the point layer they belong to: pass --time-series-of LAYER")])
        }
        let keyLayer = try store.layer(keyLayerName)
        let table = try parseCSV(bytes, file: file)
        let (rows, link) = try observationRows(table, file: file, keyLayer: keyLayer, keyColumn: options.keyColumn) { (column: String) throws(StoreError) in
            Set(try store.features(of: keyLayerName).compactMap { $0.feature.properties[column]?.stringValue })
        }
        return ImportRecords(kind: .attributes, features: rows, sourceCRS: nil, timeSeries: link)
    }

    /// The observations of a CSV table as a time series stores them, for an import and for
    /// rows appended to a series (`TimeSeriesRows`): the station key checked against the point
    /// layer's (`keys` gives them, for the layer's key column), the interval as ISO UTC, the
    /// columns that describe the point dropped; every problem with its line, and any fails all.
    static func observationRows(_ table: CSVTable, file: String, keyLayer: LayerInfo, keyColumn: String?,
                                keys: (String) throws(StoreError) -> Set<String>) throws(StoreError) -> (rows: [Feature], link: TimeSeriesLink) {
        let keyLayerName = keyLayer.name
        do {
            try CSV.checkImportHeader(table.header)
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: error.description)])
        }
        let keyIndex = try column(keyColumn, orOneOf: keyColumnNames, role: "station key", option: "--key", in: table.header, file: file)
        let startIndex = try column(nil, orOneOf: startColumnNames, role: "interval start", option: "a column named datefromutc or interval_start", in: table.header, file: file)
        let endIndex = try column(nil, orOneOf: endColumnNames, role: "interval end", option: "a column named datetoutc or interval_end", in: table.header, file: file)
        let keyName = table.header[keyIndex]
        guard let layerKey = keyLayer.columns.first(where: { $0.name.lowercased() == keyName.lowercased() }) else {
            throw .importFailed(file: file, problems: [ImportProblem(location: "header", message: "layer '\(keyLayerName)' has no column '\(keyName)' to link the series to")])
        }
        let known = try keys(layerKey.name)
        let pointColumns = Set(keyLayer.columns.map { $0.name.lowercased() })
        let coordinateNames = Set(longitudeNames + latitudeNames)
        let valueColumns = table.header.indices.filter { i in
            i != keyIndex && i != startIndex && i != endIndex && !pointColumns.contains(table.header[i].lowercased())
                && !coordinateNames.contains(foldedName(table.header[i]))
        }
        let types = inferCSVTypes(table, columns: valueColumns)

        var rows: [Feature] = []
        var problems: [ImportProblem] = []
        var seen: Set<String> = []
        for row in table.rows {
            let location = "line \(row.line)"
            let key = row.fields[keyIndex].trimmingSpaces
            guard known.contains(key) else {
                problems.append(ImportProblem(location: location, message: "'\(key)' is not a \(layerKey.name) of layer '\(keyLayerName)'"))
                continue
            }
            guard let start = UTCTime.parse(row.fields[startIndex]), let end = UTCTime.parse(row.fields[endIndex]) else {
                problems.append(ImportProblem(location: location, message: "cannot read the interval '\(row.fields[startIndex])' – '\(row.fields[endIndex])' as UTC times"))
                continue
            }
            guard start.seconds < end.seconds else {
                problems.append(ImportProblem(location: location, message: "the interval ends (\(end.iso)) before it starts (\(start.iso))"))
                continue
            }
            guard seen.insert("\(key)\u{0}\(start.seconds)").inserted else {
                problems.append(ImportProblem(location: location, message: "a second row for \(key) at \(start.iso)"))
                continue
            }
            if let problem = nonFiniteCell(row.fields, valueColumns, types, table) {
                problems.append(ImportProblem(location: location, message: problem))
                continue
            }
            var properties = Attributes()
            properties[keyName] = .text(key)
            properties["interval_start"] = .text(start.iso)
            properties["interval_end"] = .text(end.iso)
            for (column, type) in zip(valueColumns, types) {
                properties[table.header[column]] = csvValue(row.fields[column], type, table)
            }
            rows.append(Feature(geometry: nil, properties: properties))
        }
        if !problems.isEmpty { throw .importFailed(file: file, problems: problems) }
        let link = TimeSeriesLink(keyLayer: keyLayerName, layerKeyColumn: layerKey.name, keyColumn: keyName,
                                  startColumn: "interval_start", endColumn: "interval_end")
        return (rows, link)
    }
}
