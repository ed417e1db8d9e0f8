// The indoor model in the GeoPackage: six attribute tables (registered in gpkg_contents, so GDAL
// and QGIS list them; not layers of the engine), one row per venue, floor, beacon, reference
// point, scan and reading. Raw readings are kept, so fingerprints can be rebuilt by another
// method. A venue is written whole in one transaction, replacing its old rows under `replace`.
//
//   indoor_venues    venue, title, grid ('letter-column' | 'letter-row' | NULL), cell_size, model
//                    (ModelSettings: 'unheard=learned-10,representation=dbm')
//   indoor_floors    venue, floor, name, origin_lon, origin_lat, rotation_deg (NULL: no frame)
//   indoor_beacons   venue, beacon, dimension (its place in signal space), floor, x, y
//   indoor_points    venue, label, floor, x, y
//   indoor_scans     venue, label, floor (its reference point), time, attributes (JSON)
//   indoor_readings  scan (indoor_scans.fid), beacon, rssi (dBm), time

import Foundation
import Geometry
import SQLite
import Store
import Support

public enum IndoorStore {
    static let schema: [(table: String, columns: String, description: String)] = [
        ("indoor_venues", "venue TEXT NOT NULL UNIQUE, title TEXT, grid TEXT, cell_size REAL, model TEXT",
         "Indoor venues (Vltava): name, title, grid-label convention"),
        ("indoor_floors", "venue TEXT NOT NULL, floor INTEGER NOT NULL, name TEXT, origin_lon REAL, origin_lat REAL, rotation_deg REAL, UNIQUE (venue, floor)",
         "Floors of indoor venues: local frame in metres, origin lon/lat, y axis rotation_deg clockwise from north"),
        ("indoor_beacons", "venue TEXT NOT NULL, beacon TEXT NOT NULL, dimension INTEGER NOT NULL, floor INTEGER, x REAL, y REAL, UNIQUE (venue, beacon)",
         "Beacons of indoor venues: id, floor and local position when known"),
        ("indoor_points", "venue TEXT NOT NULL, label TEXT NOT NULL, floor INTEGER NOT NULL, x REAL NOT NULL, y REAL NOT NULL, UNIQUE (venue, floor, label)",
         "Reference points of indoor surveys: label, floor, local x/y"),
        ("indoor_scans", "venue TEXT NOT NULL, label TEXT NOT NULL, floor INTEGER NOT NULL, time TEXT, attributes TEXT",
         "Survey scans of indoor venues: the reference point and time of each"),
        ("indoor_readings", "scan INTEGER NOT NULL REFERENCES indoor_scans(fid), beacon TEXT NOT NULL, rssi REAL NOT NULL, time TEXT",
         "Raw beacon readings of indoor survey scans, dBm"),
    ]

    /// Writes `venue` with its survey in one transaction. Without `replace`, a venue of that
    /// name already in the store is an error; with it, its old rows go in the same transaction.
    public static func write(_ venue: Venue, into store: GeoPackage, replace: Bool) throws(IndoorError) {
        try IndoorError.checkVenueName(venue.name)
        let database = store.database
        if database.isReadOnly { throw .store("\(store.path) is open read-only") }
        do {
            try database.transaction {
                try createTables(database)
                let exists = try database.scalar("SELECT 1 FROM indoor_venues WHERE venue = ?", .text(venue.name)) != nil
                if exists {
                    guard replace else { throw IndoorError.venueExists(venue.name) }
                    try delete(venue.name, database)
                }
                try insert(venue, database)
            }
        } catch let error as IndoorError {
            throw error
        } catch {
            throw .store("cannot write venue \(Quote.input(venue.name)): \(error)")
        }
    }

    /// Sets a venue's model settings (the next load builds its model with them).
    public static func setModel(_ settings: ModelSettings, of venue: String, in store: GeoPackage) throws(IndoorError) {
        do {
            try store.database.transaction {
                try createTables(store.database)
                guard try store.database.scalar("SELECT 1 FROM indoor_venues WHERE venue = ?", .text(venue)) != nil else {
                    throw IndoorError.invalidOption("the store has no venue \(Quote.input(venue))")
                }
                try store.database.prepare("UPDATE indoor_venues SET model = ? WHERE venue = ?").run([.text(settings.description), .text(venue)])
            }
        } catch let error as IndoorError {
            throw error
        } catch {
            throw .store("cannot set venue \(Quote.input(venue))'s model: \(error)")
        }
    }

    /// The names of the venues in the store.
    public static func venueNames(in store: GeoPackage) throws(IndoorError) -> [String] {
        do {
            guard try store.database.hasTable("indoor_venues") else { return [] }
            let statement = try store.database.prepare("SELECT venue FROM indoor_venues ORDER BY venue")
            var names: [String] = []
            while try statement.step() { names.append(statement.text(0) ?? "") }
            return names
        } catch {
            throw .store("cannot read the indoor venues: \(error)")
        }
    }

    /// Every venue of the store with its survey, in name order.
    public static func venues(in store: GeoPackage) throws(IndoorError) -> [Venue] {
        var venues: [Venue] = []
        for name in try venueNames(in: store) { venues.append(try venue(name, in: store)) }
        return venues
    }

    public static func venue(_ name: String, in store: GeoPackage) throws(IndoorError) -> Venue {
        do {
            return try read(name, store.database)
        } catch let error as IndoorError {
            throw error
        } catch {
            throw .store("cannot read venue \(Quote.input(name)): \(error)")
        }
    }

    // MARK: - Writing

    static func createTables(_ database: Database) throws {
        for (table, columns, description) in schema where try !database.hasTable(table) {
            try database.execute("CREATE TABLE \(table) (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, \(columns))")
            try database.prepare("INSERT INTO gpkg_contents (table_name, data_type, identifier, description) VALUES (?, 'attributes', ?, ?)")
                .run([.text(table), .text(table), .text(description)])
        }
        try database.execute("CREATE INDEX IF NOT EXISTS indoor_readings_scan ON indoor_readings (scan)")
        // Stores written before venues had model settings.
        if try database.scalar("SELECT 1 FROM pragma_table_info('indoor_venues') WHERE name = 'model'") == nil {
            try database.execute("ALTER TABLE indoor_venues ADD COLUMN model TEXT")
        }
        if try database.hasTable("gpkg_data_columns"),
           try database.scalar("SELECT 1 FROM gpkg_data_columns WHERE table_name = 'indoor_scans' AND column_name = 'attributes'") == nil {
            try database.execute("""
                INSERT INTO gpkg_data_columns (table_name, column_name, name, mime_type)
                VALUES ('indoor_scans', 'attributes', 'indoor_scans_attributes', 'application/json')
                """)
        }
    }

    static func delete(_ venue: String, _ database: Database) throws {
        try database.prepare("DELETE FROM indoor_readings WHERE scan IN (SELECT fid FROM indoor_scans WHERE venue = ?)").run([.text(venue)])
        for table in ["indoor_scans", "indoor_points", "indoor_beacons", "indoor_floors", "indoor_venues"] {
            try database.prepare("DELETE FROM \(table) WHERE venue = ?").run([.text(venue)])
        }
    }

    static func optional(_ value: Double?) -> SQLiteValue { value.map { .real($0) } ?? .null }

    static func insert(_ venue: Venue, _ database: Database) throws {
        try database.prepare("INSERT INTO indoor_venues (venue, title, grid, cell_size, model) VALUES (?, ?, ?, ?, ?)")
            .run([.text(venue.name), .text(venue.title), venue.grid.map { .text($0.name) } ?? .null, optional(venue.grid?.cellSize), .text(venue.model.description)])
        try insertSurvey(venue, from: (floors: [], beacons: 0, points: 0, scans: 0), database)
    }

    /// Inserts the venue's floors, beacons, points and scans from the given counts on: all of
    /// them for a new venue, the appended ones for `append`.
    /// (Floors are kept in number order, so the new ones are those the venue had not.)
    static func insertSurvey(_ venue: Venue, from start: (floors: Set<Int>, beacons: Int, points: Int, scans: Int), _ database: Database) throws {
        let name = SQLiteValue.text(venue.name)
        let floor = try database.prepare("INSERT INTO indoor_floors (venue, floor, name, origin_lon, origin_lat, rotation_deg) VALUES (?, ?, ?, ?, ?, ?)")
        for f in venue.floors where !start.floors.contains(f.number) {
            try floor.run([name, .integer(Int64(f.number)), .text(f.name), optional(f.frame?.origin.lon), optional(f.frame?.origin.lat),
                           optional(f.frame?.rotationDegrees)])
        }
        let beacon = try database.prepare("INSERT INTO indoor_beacons (venue, beacon, dimension, floor, x, y) VALUES (?, ?, ?, ?, ?, ?)")
        for (i, b) in venue.beacons.enumerated().dropFirst(start.beacons) {
            try beacon.run([name, .text(b.id), .integer(Int64(i)), b.floor.map { .integer(Int64($0)) } ?? .null, optional(b.x), optional(b.y)])
        }
        let point = try database.prepare("INSERT INTO indoor_points (venue, label, floor, x, y) VALUES (?, ?, ?, ?, ?)")
        for p in venue.points.dropFirst(start.points) { try point.run([name, .text(p.label), .integer(Int64(p.floor)), .real(p.x), .real(p.y)]) }
        let scan = try database.prepare("INSERT INTO indoor_scans (venue, label, floor, time, attributes) VALUES (?, ?, ?, ?, ?)")
        let reading = try database.prepare("INSERT INTO indoor_readings (scan, beacon, rssi, time) VALUES (?, ?, ?, ?)")
        for s in venue.scans.dropFirst(start.scans) {
            let p = venue.points[s.point]
            let attributes: SQLiteValue = s.attributes.isEmpty
                ? .null
                : .text(JSON.serialize(.object(JSONObject(s.attributes.keys.sorted().map { ($0, .string(s.attributes[$0] ?? "")) }))))
            try scan.run([name, .text(p.label), .integer(Int64(p.floor)), s.time.map { .text($0.iso) } ?? .null, attributes])
            let id = database.lastInsertRowID
            for r in s.readings {
                try reading.run([.integer(id), .text(venue.beacons[r.beacon].id), .real(r.rssi), r.time.map { .text($0.iso) } ?? .null])
            }
        }
    }

    /// Adds `part`'s scans (with their new points, beacons and floors) to the stored venue of
    /// the same name, in one transaction: only the new rows are written. Returns the venue as
    /// it now is. The venue's title, grid and model stay.
    public static func append(_ part: Venue, into store: GeoPackage) throws(IndoorError) -> Venue {
        let database = store.database
        if database.isReadOnly { throw .store("\(store.path) is open read-only") }
        do {
            return try database.transaction { () throws -> Venue in
                try createTables(database)
                guard try database.scalar("SELECT 1 FROM indoor_venues WHERE venue = ?", .text(part.name)) != nil else {
                    throw IndoorError.invalidOption("there is no venue \(Quote.input(part.name)) to append to; import it without --append first")
                }
                let existing = try read(part.name, database)
                let merged = try existing.merging(part)
                try insertSurvey(merged, from: (Set(existing.floors.map(\.number)), existing.beacons.count, existing.points.count, existing.scans.count), database)
                return merged
            }
        } catch let error as IndoorError {
            throw error
        } catch {
            throw .store("cannot append to venue \(Quote.input(part.name)): \(error)")
        }
    }

    // MARK: - Reading

    static func read(_ name: String, _ database: Database) throws -> Venue {
        let hasModel = try database.scalar("SELECT 1 FROM pragma_table_info('indoor_venues') WHERE name = 'model'") != nil
        let venueRow = try database.prepare("SELECT title, grid, cell_size, \(hasModel ? "model" : "NULL") FROM indoor_venues WHERE venue = ?")
        try venueRow.bind([.text(name)])
        guard try venueRow.step() else { throw IndoorError.store("the store has no venue \(Quote.input(name))") }
        var venue = Venue(name: name, title: venueRow.text(0) ?? "")
        if let grid = venueRow.text(1) {
            let size = venueRow.isNull(2) ? 1 : venueRow.double(2)
            guard let convention = GridConvention(name: grid, cellSize: size), size.isFinite, size > 0 else {
                throw IndoorError.store("venue \(Quote.input(name)): the grid \(Quote.input(grid)) with cell size \(size) is not a grid convention")
            }
            venue.grid = convention
        }
        if let model = venueRow.text(3) {
            do {
                venue.model = try ModelSettings.parse(model)
            } catch {
                throw IndoorError.store("venue \(Quote.input(name)): its model \(Quote.input(model)) does not read: \(error)")
            }
        }
        let floors = try database.prepare("SELECT floor, name, origin_lon, origin_lat, rotation_deg FROM indoor_floors WHERE venue = ? ORDER BY floor")
        try floors.bind([.text(name)])
        while try floors.step() {
            var frame: LocalFrame?
            if !floors.isNull(2) && !floors.isNull(3) {
                let (lon, lat, rotation) = (floors.double(2), floors.double(3), floors.isNull(4) ? 0 : floors.double(4))
                // A frame another tool wrote with an impossible origin is refused, not used.
                guard (try? Point.checked(lon: lon, lat: lat)) != nil, rotation.isFinite else {
                    throw IndoorError.store("venue \(Quote.input(name)), floor \(floors.int64(0)): the frame's origin (\(lon) \(lat)) or rotation \(rotation) is not a position")
                }
                frame = LocalFrame(origin: Point(lon: lon, lat: lat), rotationDegrees: rotation)
            }
            venue.floors.append(Floor(number: Int(clamping: floors.int64(0)), name: floors.text(1) ?? "", frame: frame))
        }
        var beaconIndex: [String: Int] = [:]
        let beacons = try database.prepare("SELECT beacon, floor, x, y FROM indoor_beacons WHERE venue = ? ORDER BY dimension, fid")
        try beacons.bind([.text(name)])
        while try beacons.step() {
            let id = beacons.text(0) ?? ""
            beaconIndex[id] = venue.beacons.count
            venue.beacons.append(Beacon(id: id, floor: beacons.isNull(1) ? nil : Int(clamping: beacons.int64(1)),
                                        x: beacons.isNull(2) ? nil : finite(beacons.double(2)), y: beacons.isNull(3) ? nil : finite(beacons.double(3))))
        }
        var pointIndex: [String: Int] = [:]
        let points = try database.prepare("SELECT label, floor, x, y FROM indoor_points WHERE venue = ? ORDER BY fid")
        try points.bind([.text(name)])
        while try points.step() {
            let (x, y) = (points.double(2), points.double(3))
            let label = points.text(0) ?? ""
            guard x.isFinite, y.isFinite else { throw IndoorError.store("venue \(Quote.input(name)): point \(Quote.input(label)) has a position that is not finite") }
            let floor = Int(clamping: points.int64(1))
            pointIndex["\(floor)\u{1F}\(label)"] = venue.points.count
            venue.points.append(ReferencePoint(label: label, floor: floor, x: x, y: y))
        }
        var scanIndex: [Int64: Int] = [:]
        let scans = try database.prepare("SELECT fid, label, floor, time, attributes FROM indoor_scans WHERE venue = ? ORDER BY fid")
        try scans.bind([.text(name)])
        while try scans.step() {
            let label = scans.text(1) ?? ""
            guard let point = pointIndex["\(scans.int64(2))\u{1F}\(label)"] else {
                throw IndoorError.store("venue \(Quote.input(name)): scan \(scans.int64(0)) names point \(Quote.input(label)), which the venue does not have")
            }
            var attributes: [String: String] = [:]
            if let text = scans.text(4), case .object(let object)? = try? JSON.parse(text) {
                for (key, value) in object { attributes[key] = value.string ?? JSON.serialize(value) }
            }
            scanIndex[scans.int64(0)] = venue.scans.count
            venue.scans.append(Scan(point: point, time: scans.text(3).flatMap(SurveyTime.parse), readings: [], attributes: attributes))
        }
        let readings = try database.prepare("""
            SELECT r.scan, r.beacon, r.rssi, r.time FROM indoor_readings r JOIN indoor_scans s ON s.fid = r.scan
            WHERE s.venue = ? ORDER BY r.scan, r.fid
            """)
        try readings.bind([.text(name)])
        while try readings.step() {
            let id = readings.text(1) ?? ""
            guard let scan = scanIndex[readings.int64(0)], let beacon = beaconIndex[id] else {
                throw IndoorError.store("venue \(Quote.input(name)): a reading of scan \(readings.int64(0)) names beacon \(Quote.input(id)), which the venue does not have")
            }
            let rssi = readings.double(2)
            guard ScanError.rssiRange.contains(rssi) else {
                throw IndoorError.store("venue \(Quote.input(name)): a reading of scan \(readings.int64(0)) has \(rssi) dBm, outside -200…0")
            }
            venue.scans[scan].readings.append(Reading(beacon: beacon, rssi: rssi, time: readings.text(3).flatMap(SurveyTime.parse)))
        }
        return venue
    }

    static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}

extension IndoorStore {
    /// How an import meets a venue of the same name: an error, replaced, or added to.
    public enum ImportMode: Sendable {
        case create, replace, append
    }

    /// Reads the survey at `path` (a CSV, or with `folder` a folder of per-point files whose
    /// names give their positions) and writes it as a venue: nothing is written unless all of it
    /// reads. With `.append`, the new scans are added to the stored venue (`append`). Returns the
    /// venue as stored.
    public static func importSurvey(_ path: String, into store: GeoPackage, options: SurveyOptions, folder: PositionPattern? = nil,
                                    mode: ImportMode = .create) throws(IndoorError) -> Venue {
        var venue: Venue
        if let folder {
            venue = try SurveyReader.readFolder(path, pattern: folder, options: options)
        } else {
            guard let data = FileManager.default.contents(atPath: path) else { throw .store("no such file: \(path)") }
            venue = try SurveyReader.read([UInt8](data), file: (path as NSString).lastPathComponent, options: options)
        }
        for i in venue.beacons.indices {
            guard let known = options.beaconPositions[venue.beacons[i].id] else { continue }
            (venue.beacons[i].floor, venue.beacons[i].x, venue.beacons[i].y) = (known.floor ?? options.floor, known.x, known.y)
        }
        if mode == .append { return try append(venue, into: store) }
        try write(venue, into: store, replace: mode == .replace)
        return venue
    }
}
