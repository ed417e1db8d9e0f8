// Writing one imported layer row by row, inside the import's transaction.
//
// The columns and their types are learned as the rows come: a new attribute name adds a
// column (ALTER TABLE ADD COLUMN, which rewrites nothing), and every value is stored as it
// came (integer, real, text). While the rows are written the attribute columns carry no
// declared type, so SQLite converts nothing; at the end, when every value has been seen, each
// column gets its type by the rules the importers always had (integers and reals: REAL; any
// other mix: TEXT), the few mixed columns are converted in place, and the table's declared
// types are written into its schema (SQLite's documented `writable_schema` edit, which
// changes no stored row). The geometry column's declared type (POLYGON, or GEOMETRY for a
// mix) is settled the same way. The GeoPackage R-tree is packed from the envelopes at the end.

import Foundation
import Geometry
import SQLite

final class LayerWriter {
    /// What the end of the import needs to know of the layer.
    struct Summary {
        var kind: LayerInfo.Kind
        var geometryType: String?
        var featureCount: Int
        var renames: [(from: String, to: String)]
    }

    /// A reason to start the import again from the first record: the features' ids cannot be
    /// their fids after all (a duplicate, or a feature without an integer id, after rows were
    /// written with their ids).
    struct RestartWithoutIDs: Error {}

    enum ValueKind: Hashable { case bool, integer, real, text, json }

    struct Column {
        var name: String
        var kinds: Set<ValueKind> = []
        /// Booleans in a column that also holds other kinds become the text "true"/"false".
        var boolsAsText = false
    }

    let store: GeoPackage
    var database: Database { store.database }
    let name: String
    private(set) var kind: LayerInfo.Kind
    private var columns: [Column] = []
    /// The column of each attribute name (names as the source spells them).
    private var columnOfAttribute: [String: Int] = [:]
    private var taken: Set<String>
    private var renames: [(from: String, to: String)] = []
    private var insert: Statement?
    /// Each stored geometry's fid and envelope, for the R-tree packed at the end (24 bytes a
    /// feature: the one part of an import that grows with the file).
    private var rtreeCells: [RTreeCell] = []
    private var values: [SQLiteValue] = []
    private(set) var count = 0
    private(set) var withoutGeometry = 0
    private(set) var box = BBox.empty
    private var geometryTypes: Set<String> = []
    /// Integer ids are the fids while every feature so far had a distinct one.
    private var usesIDs: Bool

    /// Creates the layer's table (and R-tree) in the open transaction; an existing layer of
    /// the name is dropped first with `replace`, else an error.
    init(store: GeoPackage, layer: String, kind: LayerInfo.Kind, replace: Bool, useIDs: Bool) throws(StoreError) {
        self.store = store
        name = layer
        self.kind = kind
        usesIDs = useIDs
        taken = kind == .features ? ["fid", "geom"] : ["fid"]
        if store.database.isReadOnly { throw .readOnly(store.path) }
        let exists = try store.hasLayer(layer)
        if exists && !replace { throw .layerExists(layer) }
        try store.sqlite {
            if !exists, try store.database.hasTable(layer) {
                throw StoreError.invalidLayerName(layer, reason: "a table of that name exists in the file but is not a GeoPackage layer")
            }
            try store.database.execute(GeoPackage.catalogExtensionsDDL + GeoPackage.schemaExtensionRows)
            if exists { try store.drop(layer) }
            let geometry = kind == .features ? ", geom GEOMETRY" : ""
            try store.database.execute("CREATE TABLE \(quoted(layer)) (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL\(geometry))")
        }
    }

    /// Writes one checked record.
    func write(_ feature: Feature) throws(StoreError) {
        try store.sqlite {
            if insert == nil { try prepareInsert() }
            var added = false
            for (attribute, _) in feature.properties where columnOfAttribute[attribute] == nil {
                try addColumn(attribute)
                added = true
            }
            if added { try prepareInsert() }
            guard let insert else { return }
            values.removeAll(keepingCapacity: true)
            var fid: Int64?
            if usesIDs {
                if case .integer(let id)? = feature.id {
                    fid = id
                } else if count == 0 {
                    usesIDs = false
                } else {
                    throw RestartWithoutIDs()
                }
            }
            values.append(fid.map { .integer($0) } ?? .null)
            if kind == .features {
                if let geometry = feature.geometry {
                    values.append(.blob(GeoPackageBinary.encode(geometry, srsID: 4326)))
                } else {
                    values.append(.null)
                }
            }
            let base = values.count
            for _ in columns { values.append(.null) }
            for (attribute, value) in feature.properties {
                guard let index = columnOfAttribute[attribute] else { continue }
                values[base + index] = try stored(value, column: index)
            }
            do {
                try insert.run(values)
            } catch let error as SQLiteError where fid != nil && error.code == 19 /* SQLITE_CONSTRAINT: a repeated id */ {
                throw RestartWithoutIDs()
            }
            count += 1
            if kind == .features {
                if let geometry = feature.geometry {
                    geometryTypes.insert(geometry.typeName.uppercased())
                    let bbox = geometry.bbox
                    if !bbox.isEmpty {
                        box.extend(bbox)
                        rtreeCells.append(RTreeCell(id: database.lastInsertRowID, box: bbox))
                    }
                } else {
                    withoutGeometry += 1
                }
            }
        }
    }

    /// The column for a new attribute name: the name itself, or with a suffix when it clashes
    /// (as SQLite compares names, case-insensitively) with a reserved or earlier one.
    private func addColumn(_ attribute: String) throws {
        var columnName = attribute
        var suffix = 1
        while taken.contains(columnName.lowercased()) {
            columnName = "\(attribute)_\(suffix)"
            suffix += 1
        }
        if columnName != attribute { renames.append((attribute, columnName)) }
        taken.insert(columnName.lowercased())
        columnOfAttribute[attribute] = columns.count
        columns.append(Column(name: columnName))
        // No declared type while rows come: SQLite stores each value as bound.
        try database.execute("ALTER TABLE \(quoted(name)) ADD COLUMN \(quoted(columnName))")
    }

    private func prepareInsert() throws {
        var names = ["fid"]
        if kind == .features { names.append("geom") }
        names += columns.map(\.name)
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        insert = try database.prepare("INSERT INTO \(quoted(name)) (\(names.map(quoted).joined(separator: ", "))) VALUES (\(placeholders))")
    }

    /// The value as stored while the column's type is open: as it came, but for booleans in
    /// a column that holds other kinds too, which are text (the type will be TEXT).
    private func stored(_ value: AttributeValue, column index: Int) throws -> SQLiteValue {
        let kind: ValueKind
        switch value {
        case .null: return .null
        case .bool: kind = .bool
        case .integer: kind = .integer
        case .real: kind = .real
        case .text: kind = .text
        case .json: kind = .json
        }
        if !columns[index].kinds.contains(kind) {
            columns[index].kinds.insert(kind)
            if columns[index].kinds.count > 1, columns[index].kinds.contains(.bool), !columns[index].boolsAsText {
                // The column was all booleans so far (stored 1/0): they become text now.
                columns[index].boolsAsText = true
                if columns[index].kinds == [.bool, kind] {
                    try database.execute("UPDATE \(quoted(name)) SET \(quoted(columns[index].name)) = CASE \(quoted(columns[index].name)) WHEN 1 THEN 'true' ELSE 'false' END WHERE typeof(\(quoted(columns[index].name))) = 'integer'")
                }
            }
        }
        switch value {
        case .null: return .null
        case .bool(let b): return columns[index].boolsAsText ? .text(b ? "true" : "false") : .integer(b ? 1 : 0)
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .text(let s), .json(let s): return .text(s)
        }
    }

    /// Settles the column types and the geometry type, registers the layer in the GeoPackage
    /// catalog and finishes its R-tree. A features layer whose records all lack a geometry
    /// becomes a table (Vltava's own export of a table layer).
    func finish(description: String, timeSeries: TimeSeriesLink?) throws(StoreError) -> Summary {
        try store.sqlite {
            let finalColumns = try settleColumnTypes()
            // A unit (`vltava import --units`) belongs to a value column of the observations.
            if let units = timeSeries?.units, let unknown = units.keys.sorted().first(where: { column in
                !finalColumns.contains { $0.name == column && ($0.type == .integer || $0.type == .real) }
            }) {
                let numeric = finalColumns.filter { $0.type == .integer || $0.type == .real }.map(\.name)
                throw StoreError.importFailed(file: name, problems: [ImportProblem(
                    location: "--units", message: "'\(unknown)' is not a numeric column of the observations (numeric columns: \(numeric.joined(separator: ", ")))")])
            }
            if kind == .features && count > 0 && withoutGeometry == count {
                kind = .attributes
                try database.execute("ALTER TABLE \(quoted(name)) DROP COLUMN geom")
            }
            let geometryType = kind == .features ? (geometryTypes.count == 1 ? geometryTypes.first ?? "GEOMETRY" : "GEOMETRY") : nil
            try declareTypes(finalColumns, geometryType: geometryType)
            try store.register(name, kind: kind, geometryType: geometryType, columns: finalColumns, box: kind == .features ? box : .empty,
                               description: description, timeSeries: timeSeries)
            if kind == .features { try store.createSpatialIndex(table: name, column: "geom", fidColumn: "fid", cells: &rtreeCells) }
            try store.recordLayerChange(name, .imported)
            return Summary(kind: kind, geometryType: geometryType, featureCount: count, renames: renames)
        }
    }

    /// Each column's type from every kind of value it holds, converting the mixed ones.
    private func settleColumnTypes() throws -> [ColumnInfo] {
        try columns.map { column in
            let c = quoted(column.name), t = quoted(name)
            switch column.kinds {
            case [.integer]: return ColumnInfo(name: column.name, type: .integer)
            case [.real]: return ColumnInfo(name: column.name, type: .real)
            case [.integer, .real]:
                try database.execute("UPDATE \(t) SET \(c) = CAST(\(c) AS REAL) WHERE typeof(\(c)) = 'integer'")
                return ColumnInfo(name: column.name, type: .real)
            case [.bool]: return ColumnInfo(name: column.name, type: .boolean)
            case [.json]: return ColumnInfo(name: column.name, type: .text, isJSON: true)
            default:
                // Text: numbers are written as Swift writes them ("5", "0.1"), as before.
                if column.kinds.contains(.integer) || column.kinds.contains(.real) {
                    let select = try database.prepare("SELECT fid, \(c) FROM \(t) WHERE typeof(\(c)) IN ('integer', 'real')")
                    let update = try database.prepare("UPDATE \(t) SET \(c) = ? WHERE fid = ?")
                    // In batches, so a large mixed column is never held whole.
                    while true {
                        var changes: [(fid: Int64, text: String)] = []
                        select.reset()
                        while changes.count < 10_000, try select.step() { changes.append((select.int64(0), select.value(1).textForm)) }
                        select.reset()
                        if changes.isEmpty { break }
                        for change in changes { try update.run([.text(change.text), .integer(change.fid)]) }
                    }
                }
                return ColumnInfo(name: column.name, type: .text)
            }
        }
    }

    /// Writes the settled declared types into the table's schema: SQLite's documented edit
    /// of `sqlite_schema` for changes that leave the stored rows as they are (no index or
    /// constraint involves these columns), with the schema version bumped so every
    /// connection reads the new definition.
    private func declareTypes(_ finalColumns: [ColumnInfo], geometryType: String?) throws {
        var definitions = ["fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"]
        if let geometryType { definitions.append("geom \(geometryType)") }
        definitions += finalColumns.map { "\(quoted($0.name)) \($0.type.rawValue)" }
        let sql = "CREATE TABLE \(quoted(name)) (\(definitions.joined(separator: ", ")))"
        guard case .integer(let version)? = try database.scalar("PRAGMA schema_version") else { return }
        try database.execute("PRAGMA writable_schema = ON")
        defer { try? database.execute("PRAGMA writable_schema = OFF") }
        try database.prepare("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?").run([.text(sql), .text(name)])
        try database.execute("PRAGMA schema_version = \(version + 1)")
    }
}

private extension SQLiteValue {
    /// A stored number as the importers always wrote numbers into a text column.
    var textForm: String {
        switch self {
        case .integer(let i): String(i)
        case .real(let d): String(d)
        case .text(let s): s
        case .null, .blob: ""
        }
    }
}
