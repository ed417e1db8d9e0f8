// The format readers: each turns one kind of file into records for `Importer`, reporting
// problems with the feature index or the line they come from.

import Geometry

extension Importer {
    // MARK: GeoJSON

    static func readGeoJSON(_ bytes: [UInt8], file: String, store _: GeoPackage, options: ImportOptions) throws(StoreError) -> ImportRecords {
        let document: GeoJSONDocument
        do {
            document = try GeoJSON.parseDocument(bytes)
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
        let crs = options.crs ?? document.crs ?? "EPSG:4326"
        return ImportRecords(kind: .features, features: document.features, sourceCRS: crs)
    }

    // MARK: CSV of points

    static let longitudeNames = ["lon", "lng", "long", "longitude", "x", "lon_deg", "longitude_deg"]
    static let latitudeNames = ["lat", "latitude", "y", "lat_deg", "latitude_deg"]

    static func readPointCSV(_ bytes: [UInt8], file: String, store _: GeoPackage, options: ImportOptions) throws(StoreError) -> ImportRecords {
        let table = try parseCSV(bytes, file: file)
        let lonIndex = try column(options.lonColumn, orOneOf: longitudeNames, role: "longitude", option: "--lon", in: table.header, file: file)
        let latIndex = try column(options.latColumn, orOneOf: latitudeNames, role: "latitude", option: "--lat", in: table.header, file: file)
        let valueColumns = table.header.indices.filter { $0 != lonIndex && $0 != latIndex }
        let types = inferCSVTypes(table, columns: valueColumns)

        var features: [Feature] = []
        var problems: [ImportProblem] = []
        for row in table.rows {
            let location = "line \(row.line)"
            guard let lon = Double(row.fields[lonIndex].trimmingSpaces), let lat = Double(row.fields[latIndex].trimmingSpaces) else {
                problems.append(ImportProblem(location: location, message: "longitude '\(row.fields[lonIndex])' or latitude '\(row.fields[latIndex])' is not a number"))
                continue
            }
            // With a projected CRS the range check happens after reprojection.
            if options.crs == nil || options.crs == "EPSG:4326", let problem = coordinateProblem(lon: lon, lat: lat) {
                problems.append(ImportProblem(location: location, message: problem))
                continue
            }
            if let problem = nonFiniteCell(row.fields, valueColumns, types, header: table.header) {
                problems.append(ImportProblem(location: location, message: problem))
                continue
            }
            var properties = Attributes()
            for (column, type) in zip(valueColumns, types) {
                properties[table.header[column]] = csvValue(row.fields[column], type)
            }
            features.append(Feature(geometry: .point(Point(lon: lon, lat: lat)), properties: properties))
        }
        if !problems.isEmpty { throw .importFailed(file: file, problems: problems) }
        return ImportRecords(kind: .features, features: features, sourceCRS: options.crs ?? "EPSG:4326")
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
        throw .importFailed(file: file, problems: [ImportProblem(location: "header", message: "no \(role) column found (looked for \(names.joined(separator: ", "))); name it with \(option)")])
    }

    enum CSVType { case integer, real, bool, text }

    /// A column is integer or real if every non-empty cell parses as one, bool if every
    /// non-empty cell is true/false, text otherwise. Empty cells are nulls.
    static func inferCSVTypes(_ table: CSVTable, columns: [Int]) -> [CSVType] {
        columns.map { column in
            var allInteger = true, allReal = true, allBool = true
            for row in table.rows {
                let cell = row.fields[column].trimmingSpaces
                if cell.isEmpty { continue }
                if Int64(cell) == nil { allInteger = false }
                if Double(cell) == nil { allReal = false }
                if cell.lowercased() != "true" && cell.lowercased() != "false" { allBool = false }
            }
            return allInteger ? .integer : allReal ? .real : allBool ? .bool : .text
        }
    }

    /// The first cell of a number column that reads as NaN or an infinity ("NaN", "inf",
    /// "1e309", which overflows), as "column 'no2': '1e309' is not a finite number". Such a
    /// value cannot be stored honestly (SQLite writes NaN as NULL, JSON has no infinity), so
    /// the import fails naming the line and the column rather than change it silently.
    static func nonFiniteCell(_ fields: [String], _ columns: [Int], _ types: [CSVType], header: [String]) -> String? {
        for (column, type) in zip(columns, types) where type == .real {
            let cell = fields[column].trimmingSpaces
            if let value = Double(cell), !value.isFinite { return "column '\(header[column])': '\(cell)' is not a finite number" }
        }
        return nil
    }

    static func csvValue(_ cell: String, _ type: CSVType) -> AttributeValue {
        let trimmed = cell.trimmingSpaces
        if trimmed.isEmpty { return .null }
        switch type {
        case .integer: return Int64(trimmed).map { .integer($0) } ?? .text(cell)
        case .real: return Double(trimmed).map { .real($0) } ?? .text(cell)
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
        let keyIndex = try column(options.keyColumn, orOneOf: keyColumnNames, role: "station key", option: "--key", in: table.header, file: file)
        let startIndex = try column(nil, orOneOf: startColumnNames, role: "interval start", option: "a column named datefromutc or interval_start", in: table.header, file: file)
        let endIndex = try column(nil, orOneOf: endColumnNames, role: "interval end", option: "a column named datetoutc or interval_end", in: table.header, file: file)
        let keyName = table.header[keyIndex]
        guard let layerKey = keyLayer.columns.first(where: { $0.name.lowercased() == keyName.lowercased() }) else {
            throw .importFailed(file: file, problems: [ImportProblem(location: "header", message: "layer '\(keyLayerName)' has no column '\(keyName)' to link the series to")])
        }
        let known = Set(try store.features(of: keyLayerName).compactMap { $0.feature.properties[layerKey.name]?.stringValue })

        let pointColumns = Set(keyLayer.columns.map { $0.name.lowercased() } + longitudeNames + latitudeNames)
        let valueColumns = table.header.indices.filter { i in
            i != keyIndex && i != startIndex && i != endIndex && !pointColumns.contains(table.header[i].lowercased())
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
            if let problem = nonFiniteCell(row.fields, valueColumns, types, header: table.header) {
                problems.append(ImportProblem(location: location, message: problem))
                continue
            }
            var properties = Attributes()
            properties[keyName] = .text(key)
            properties["interval_start"] = .text(start.iso)
            properties["interval_end"] = .text(end.iso)
            for (column, type) in zip(valueColumns, types) {
                properties[table.header[column]] = csvValue(row.fields[column], type)
            }
            rows.append(Feature(geometry: nil, properties: properties))
        }
        if !problems.isEmpty { throw .importFailed(file: file, problems: problems) }
        let link = TimeSeriesLink(keyLayer: keyLayerName, layerKeyColumn: layerKey.name, keyColumn: keyName,
                                  startColumn: "interval_start", endColumn: "interval_end")
        return ImportRecords(kind: .attributes, features: rows, sourceCRS: nil, timeSeries: link)
    }
}
