// Fingerprint surveys from CSV, in the two shapes that exist in the wild:
//
// - wide: one row per scan, one column per beacon (the WMU library survey: `location, date,
//   b3001, …, b3013`, -200 = not heard). A cell equal to the missing marker (-200 by default,
//   or 0) or empty is a beacon not heard.
// - long: one row per reading (`point` or `x`/`y`, `beacon`, `rssi`, `time`). Readings at the
//   same point whose times lie within a window of the first one form a scan.
//
// Scans keep the file's order (a long survey's by the line of their first reading): ties in
// signal space are broken by it.
//
// Times are ISO text, the WMU's US order, or numbers in a declared unit (`timeUnit`). A column
// without a header is a row number and is left out.
//
// Positions come from x/y columns, or from labels through the venue's grid convention ("O02"
// is column O, row 2). The whole file is read and checked before anything is stored; every
// problem is reported with its line and column (`IndoorError.malformedCSV`).

import Geometry
import Store
import Support

public struct SurveyOptions: Sendable {
    public enum Shape: String, Sendable, CaseIterable {
        case wide, long
    }

    /// The venue the survey is of.
    public var venue: String
    public var title: String = ""
    /// Detected when nil: long when the file has a beacon column and an RSSI column.
    public var shape: Shape?
    /// Wide: the number that means "not heard" (nil: only empty cells do). Empty cells are
    /// never a reading.
    public var missingValue: Double? = -200
    /// The columns, detected from common names when nil: the point's label (`location`, `label`,
    /// `point`, `cell`), the time (`date`, `time`, `timestamp`, `ts`), the position (`x`, `y`), the
    /// floor (`floor`, `level`), and in a long survey the beacon (`beacon`, `beacon_id`, `mac`,
    /// `bssid`, `uuid`) and the strength (`rssi`, `dbm`, `signal`).
    public var labelColumn: String?
    public var timeColumn: String?
    public var xColumn: String?
    public var yColumn: String?
    public var floorColumn: String?
    public var beaconColumn: String?
    public var rssiColumn: String?
    /// Wide: the beacons' columns; nil: every other column with a number in it (and then
    /// every cell of it must be a number or empty).
    public var beaconColumns: [String]?
    /// Columns kept with each scan as text (for splits by a column), never beacons.
    public var attributeColumns: [String] = []
    /// How numeric times count (nil: ISO text, the WMU's US order, or Unix seconds).
    public var timeUnit: TimeUnit?
    /// Long: readings at one point within this many seconds of a scan's first reading join it.
    public var windowSeconds: Double = 1
    /// How labels map to positions when the file has no x/y columns.
    public var grid: GridConvention?
    /// Or numeric labels by a pattern ("120045" with `{x:3}{y:3}`), when there is no grid.
    public var labelPattern: PositionPattern?
    /// Every scan of the file taken at this point (a per-point file of a folder).
    public var fixedPoint: ReferencePoint?
    /// The floor of every scan when the file has no floor column.
    public var floor: Int = 0
    /// The venue's model settings.
    public var model = ModelSettings()
    /// Floors declared with their names and frames; floors the survey uses but does not
    /// declare get a floor without a frame.
    public var floors: [Floor] = []
    /// Where beacons hang, by beacon id (floor, x, y in the frame): set on the beacons read.
    public var beaconPositions: [String: Beacon] = [:]

    public init(venue: String) {
        self.venue = venue
    }
}

/// The unit of numeric times: Unix seconds, milliseconds, microseconds or nanoseconds, written
/// as any number ("1590519143117", "1.627997452227e+18").
public enum TimeUnit: String, Sendable, CaseIterable {
    case s, ms, us, ns

    var perSecond: Double {
        switch self {
        case .s: 1
        case .ms: 1e3
        case .us: 1e6
        case .ns: 1e9
        }
    }
}

/// One scan of a track: when, what was heard (by beacon id), and where it was taken when the
/// file says (the robot's track has positions; a phone's walk has none).
public struct TrackScan: Sendable, Equatable {
    public var time: SurveyTime?
    public var readings: [Reading]
    public var truth: ReferencePoint?
}

public enum SurveyReader {
    /// The most problems one import lists before it stops reading.
    static let maxProblems = 100

    /// Reads a survey file's bytes into a venue (not yet stored). `file` names it in errors.
    public static func read(_ bytes: [UInt8], file: String, options: SurveyOptions) throws(IndoorError) -> Venue {
        try IndoorError.checkVenueName(options.venue)
        if let grid = options.grid, !(grid.cellSize.isFinite && grid.cellSize > 0) {
            throw .invalidOption("the cell size must be a number above 0, got \(grid.cellSize)")
        }
        guard options.windowSeconds.isFinite && options.windowSeconds >= 0 else {
            throw .invalidOption("the time window must be 0 s or more, got \(options.windowSeconds)")
        }
        let table = try SurveyReader.table(bytes, file: file)
        var reader = Reader(table: table, file: file, options: options)
        return try reader.read()
    }

    /// The bytes as a CSV table, or the reason they are not one.
    static func table(_ bytes: [UInt8], file: String) throws(IndoorError) -> CSVTable {
        do {
            return try CSV.parse(bytes)
        } catch {
            throw .malformedCSV(file: file, problems: [ImportProblem(location: "", message: error.description)])
        }
    }

    /// Reads a walked path: a CSV of segments `x0,y0,x1,y1` (spaces after commas allowed).
    public static func readPath(_ bytes: [UInt8], file: String) throws(IndoorError) -> [(x0: Double, y0: Double, x1: Double, y1: Double)] {
        let table = try SurveyReader.table(bytes, file: file)
        let header = table.header.map { $0.trimmingSpaces.lowercased() }
        let columns = ["x0", "y0", "x1", "y1"].map { header.firstIndex(of: $0) }
        let found = columns.compactMap { $0 }
        guard found.count == 4 else { throw .invalidOption("\(file): a path needs the columns x0, y0, x1, y1 (columns: \(table.header.joined(separator: ", ")))") }
        var segments: [(x0: Double, y0: Double, x1: Double, y1: Double)] = []
        var problems: [ImportProblem] = []
        for row in table.rows {
            let values = found.map { Double(row.fields[$0].trimmingSpaces) }
            guard let x0 = values[0], let y0 = values[1], let x1 = values[2], let y1 = values[3],
                  [x0, y0, x1, y1].allSatisfy(\.isFinite) else {
                problems.append(ImportProblem(location: "line \(row.line)", message: "a segment is four finite numbers"))
                continue
            }
            segments.append((x0, y0, x1, y1))
        }
        guard problems.isEmpty else { throw .malformedCSV(file: file, problems: Array(problems.prefix(maxProblems))) }
        guard !segments.isEmpty else { throw .malformedCSV(file: file, problems: [ImportProblem(location: "", message: "the path has no segments")]) }
        return segments
    }

    /// Reads a track: scans in time order, with or without positions; beacons by id
    /// (`Reading.beacon` indexes the returned `beacons`).
    public static func readTrack(_ bytes: [UInt8], file: String, options: SurveyOptions) throws(IndoorError) -> (beacons: [String], scans: [TrackScan]) {
        let table = try SurveyReader.table(bytes, file: file)
        var reader = Reader(table: table, file: file, options: options)
        reader.positionsRequired = false
        let venue = try reader.read()
        let positioned = reader.positioned
        let scans = venue.scans.map { scan in
            TrackScan(time: scan.time, readings: scan.readings, truth: positioned ? venue.points[scan.point] : nil)
        }
        // In time order; scans without a time keep the file's order among themselves.
        let ordered = scans.enumerated().sorted { ($0.element.time?.seconds ?? 0, $0.offset) < ($1.element.time?.seconds ?? 0, $1.offset) }.map(\.element)
        return (venue.beacons.map(\.id), ordered)
    }
}

/// One pass over a parsed table, collecting problems instead of stopping at the first.
private struct Reader {
    let table: CSVTable
    let file: String
    let options: SurveyOptions
    var problems: [ImportProblem] = []
    var points: [ReferencePoint] = []
    var pointIndex: [String: Int] = [:]
    var beacons: [Beacon] = []
    var beaconIndex: [String: Int] = [:]
    /// False for a track, whose scans may have no position.
    var positionsRequired = true
    var positioned = true
    /// A per-point file: every row at `points[0]`.
    var fixedPoint = false

    init(table: CSVTable, file: String, options: SurveyOptions) {
        self.table = table
        self.file = file
        self.options = options
    }

    mutating func problem(_ line: Int, _ column: String?, _ message: String) {
        guard problems.count < SurveyReader.maxProblems else { return }
        let at = column.map { "line \(line), column \(Quote.input($0))" } ?? "line \(line)"
        problems.append(ImportProblem(location: at, message: message))
    }

    /// The column named `given`, or the first of `names` in the header (case-insensitive).
    func column(_ given: String?, _ names: [String], what: String) throws(IndoorError) -> Int? {
        let lowered = table.header.map { $0.lowercased() }
        if let given {
            guard let i = lowered.firstIndex(of: given.lowercased()) else {
                throw .invalidOption("the survey has no \(what) column \(Quote.input(given)) (columns: \(table.header.joined(separator: ", ")))")
            }
            return i
        }
        return names.lazy.compactMap { lowered.firstIndex(of: $0) }.first
    }

    mutating func read() throws(IndoorError) -> Venue {
        let label = try column(options.labelColumn, ["location", "label", "point", "cell", "reference_point"], what: "label")
        let time = try column(options.timeColumn, ["date", "time", "timestamp", "datetime", "ts"], what: "time")
        let x = try column(options.xColumn, ["x"], what: "x")
        let y = try column(options.yColumn, ["y"], what: "y")
        let floor = try column(options.floorColumn, ["floor", "level"], what: "floor")
        let beacon = try column(options.beaconColumn, ["beacon", "beacon_id", "mac", "bssid", "uuid"], what: "beacon")
        let rssi = try column(options.rssiColumn, ["rssi", "dbm", "signal"], what: "RSSI")
        guard (x == nil) == (y == nil) else { throw .invalidOption("the survey has an x column without a y column, or a y without an x") }
        if let fixed = options.fixedPoint {
            fixedPoint = true
            points = [fixed]
        } else if !positionsRequired && label == nil && x == nil {
            positioned = false
            points = [ReferencePoint(label: "", floor: options.floor, x: .nan, y: .nan)]
        }
        guard label != nil || x != nil || !positioned || fixedPoint else {
            throw .invalidOption("the survey needs a label column (location, label, point) or x and y columns; name them with --label-column or --x-column/--y-column")
        }
        if x == nil && options.grid == nil && options.labelPattern == nil && positioned && !fixedPoint {
            throw .invalidOption("labels without x/y columns need a grid convention or a pattern to become positions: pass --grid letter-column (or letter-row) and --cell-size, or --label-pattern '{x:3}{y:3}'")
        }
        let shape = options.shape ?? (beacon != nil && rssi != nil ? .long : .wide)
        let position = Position(label: label, x: x, y: y, floor: floor)
        var scans: [Scan]
        switch shape {
        case .wide:
            scans = try readWide(position, time: time, skipping: [label, time, x, y, floor, beacon, rssi].compactMap { $0 })
        case .long:
            guard let beacon, let rssi else {
                throw .invalidOption("a long survey needs a beacon column and an RSSI column (beacon, rssi); name them with --beacon-column and --rssi-column")
            }
            guard let time else { throw .invalidOption("a long survey needs a time column to group its readings into scans (--time-column)") }
            scans = readLong(position, time: time, beacon: beacon, rssi: rssi)
        }
        if !problems.isEmpty { throw .malformedCSV(file: file, problems: problems) }
        guard !scans.isEmpty else { throw .malformedCSV(file: file, problems: [ImportProblem(location: "", message: "the survey has no scans")]) }
        guard !beacons.isEmpty else { throw .malformedCSV(file: file, problems: [ImportProblem(location: "", message: "the survey has no beacon columns")]) }
        var floors = options.floors
        for number in Set(points.map(\.floor)).sorted() where !floors.contains(where: { $0.number == number }) {
            floors.append(Floor(number: number))
        }
        floors.sort { $0.number < $1.number }
        for i in beacons.indices where beacons[i].floor == nil {
            // A beacon heard on one floor only hangs there, as far as the survey tells.
            let heardOn = Set(scans.filter { $0.readings.contains { $0.beacon == i } }.map { points[$0.point].floor })
            if heardOn.count == 1 { beacons[i].floor = heardOn.first }
        }
        return Venue(name: options.venue, title: options.title, grid: options.grid, floors: floors, beacons: beacons, points: points, scans: scans,
                     model: options.model)
    }

    struct Position {
        var label: Int?, x: Int?, y: Int?, floor: Int?
    }

    /// The reference point of a row (created on first sight), or nil after noting why not.
    mutating func point(_ fields: [String], _ line: Int, _ position: Position) -> Int? {
        if !positioned || fixedPoint { return 0 }
        var floor = options.floor
        if let column = position.floor {
            let text = fields[column].trimmingSpaces
            guard let value = Int(text), abs(value) < 1000 else {
                problem(line, table.header[column], "the floor \(Quote.input(text)) is not a whole number")
                return nil
            }
            floor = value
        }
        let labelText = position.label.map { fields[$0].trimmingSpaces } ?? ""
        var xy: (x: Double, y: Double)
        if let xColumn = position.x, let yColumn = position.y {
            guard let px = number(fields[xColumn], line, table.header[xColumn]), let py = number(fields[yColumn], line, table.header[yColumn]) else { return nil }
            xy = (px, py)
        } else {
            guard !labelText.isEmpty else {
                problem(line, position.label.map { table.header[$0] }, "the label is empty")
                return nil
            }
            if let pattern = options.labelPattern, options.grid == nil {
                guard let at = pattern.match(labelText) else {
                    problem(line, position.label.map { table.header[$0] }, "the label \(Quote.input(labelText)) does not match the pattern \(Quote.input(pattern.description))")
                    return nil
                }
                xy = (at.x, at.y)
                if let labelFloor = at.floor, position.floor == nil { floor = labelFloor }
                return pointAt(name: labelText, floor: floor, xy: xy, line: line)
            }
            guard let grid = options.grid, let at = grid.position(of: labelText) else {
                problem(line, position.label.map { table.header[$0] },
                        "the label \(Quote.input(labelText)) is not a grid cell (\(options.grid?.description ?? "no grid")): 1–3 letters and 1–6 digits, such as O02")
                return nil
            }
            xy = at
        }
        guard labelText.isEmpty else { return pointAt(name: labelText, floor: floor, xy: xy, line: line) }
        // Unlabelled: named by its position to the millimetre, or in full where two positions
        // share the millimetre's name.
        let short = "\(shortNumber((xy.x * 1000).rounded() / 1000)) \(shortNumber((xy.y * 1000).rounded() / 1000))"
        if let known = pointIndex["\(floor)\u{1F}\(short)"], points[known].x != xy.x || points[known].y != xy.y {
            return pointAt(name: "\(shortNumber(xy.x)) \(shortNumber(xy.y))", floor: floor, xy: xy, line: line)
        }
        return pointAt(name: short, floor: floor, xy: xy, line: line)
    }

    /// The point of that name on that floor (created on first sight), or nil after noting that
    /// it was seen at another position.
    mutating func pointAt(name: String, floor: Int, xy: (x: Double, y: Double), line: Int) -> Int? {
        let key = "\(floor)\u{1F}\(name)"
        if let existing = pointIndex[key] {
            let known = points[existing]
            if known.x != xy.x || known.y != xy.y {
                problem(line, nil, "point \(Quote.input(name)) is at (\(shortNumber(xy.x)) \(shortNumber(xy.y))) here and at (\(shortNumber(known.x)) \(shortNumber(known.y))) before")
                return nil
            }
            return existing
        }
        pointIndex[key] = points.count
        points.append(ReferencePoint(label: name, floor: floor, x: xy.x, y: xy.y))
        return points.count - 1
    }

    mutating func number(_ text: String, _ line: Int, _ column: String) -> Double? {
        let trimmed = text.trimmingSpaces
        guard let value = Double(trimmed), value.isFinite, trimmed.utf8.count <= 40 else {
            problem(line, column, "\(Quote.input(trimmed)) is not a finite number")
            return nil
        }
        return value
    }

    mutating func surveyTime(_ text: String, _ line: Int, _ column: String) -> SurveyTime?? {
        let trimmed = text.trimmingSpaces
        if trimmed.isEmpty { return .some(nil) }
        if let unit = options.timeUnit {
            guard trimmed.utf8.count <= 40, let value = Double(trimmed), value.isFinite, abs(value / unit.perSecond) < 1e11 else {
                problem(line, column, "\(Quote.input(trimmed)) is not a time in Unix \(unit.rawValue) (--time-unit)")
                return nil
            }
            return .some(SurveyTime(seconds: value / unit.perSecond))
        }
        guard let time = SurveyTime.parse(trimmed) else {
            problem(line, column, "\(Quote.input(trimmed)) is not a time (2016-10-18T11:15:21, 10-18-2016 11:15:21 or Unix seconds; --time-unit ms, us or ns for other numbers)")
            return nil
        }
        return .some(time)
    }

    /// A strength in range, or nil after noting why not.
    mutating func strength(_ value: Double, _ line: Int, _ column: String) -> Double? {
        guard ScanError.rssiRange.contains(value) else {
            problem(line, column, "\(shortNumber(value)) dBm is out of range: a received strength lies from -200 to 0 dBm")
            return nil
        }
        return value
    }

    mutating func beacon(_ id: String) -> Int {
        if let known = beaconIndex[id] { return known }
        beaconIndex[id] = beacons.count
        beacons.append(Beacon(id: id))
        return beacons.count - 1
    }

    mutating func readWide(_ position: Position, time: Int?, skipping used: [Int]) throws(IndoorError) -> [Scan] {
        // The beacons' columns: named, or every other column whose cells are all numbers.
        var beaconColumns: [Int] = []
        if let names = options.beaconColumns {
            for name in names {
                if name.hasSuffix("*") {
                    // A prefix: rssi_* names rssi_1, rssi_2, … in the file's order.
                    let prefix = name.dropLast().lowercased()
                    let matching = table.header.indices.filter { table.header[$0].lowercased().hasPrefix(prefix) && !used.contains($0) }
                    guard !matching.isEmpty else {
                        throw .invalidOption("the survey has no column starting with \(Quote.input(String(prefix))) (columns: \(table.header.joined(separator: ", ")))")
                    }
                    beaconColumns += matching
                    continue
                }
                guard let i = try column(name, [], what: "beacon") else { continue }
                beaconColumns.append(i)
            }
        } else {
            // A column with a number in it holds a beacon's strengths (a text in it is then a
            // problem, not a reason to read the column as something else); one without is text.
            var attributes: [Int] = []
            for name in options.attributeColumns {
                if let i = try column(name, [], what: "attribute") { attributes.append(i) }
            }
            // A column without a name is a row number (pandas writes its index so), not a beacon.
            for i in table.header.indices where !used.contains(i) && !attributes.contains(i) && !table.header[i].trimmingSpaces.isEmpty {
                if table.rows.contains(where: { Double($0.fields[i].trimmingSpaces) != nil }) { beaconColumns.append(i) }
            }
        }
        for i in beaconColumns { _ = beacon(table.header[i]) }
        let attributeColumns = table.header.indices.filter { !used.contains($0) && !beaconColumns.contains($0) && !table.header[$0].trimmingSpaces.isEmpty }
        var scans: [Scan] = []
        scans.reserveCapacity(table.rows.count)
        for row in table.rows {
            guard problems.count < SurveyReader.maxProblems else { break }
            guard let point = point(row.fields, row.line, position) else { continue }
            var when: SurveyTime?
            if let time {
                guard let parsed = surveyTime(row.fields[time], row.line, table.header[time]) else { continue }
                when = parsed
            }
            var readings: [Reading] = []
            for i in beaconColumns {
                let cell = row.fields[i].trimmingSpaces
                if cell.isEmpty { continue }
                guard let value = number(cell, row.line, table.header[i]) else { continue }
                if value == options.missingValue { continue }
                guard let rssi = strength(value, row.line, table.header[i]) else { continue }
                readings.append(Reading(beacon: beacon(table.header[i]), rssi: rssi))
            }
            var attributes: [String: String] = [:]
            for i in attributeColumns { attributes[table.header[i]] = row.fields[i] }
            scans.append(Scan(point: point, time: when, readings: readings, attributes: attributes))
        }
        return scans
    }

    mutating func readLong(_ position: Position, time: Int, beacon beaconColumn: Int, rssi rssiColumn: Int) -> [Scan] {
        let used = [position.label, position.x, position.y, position.floor, time, beaconColumn, rssiColumn].compactMap { $0 }
        let attributeColumns = table.header.indices.filter { !used.contains($0) }
        struct Row {
            var point: Int, time: SurveyTime, reading: Reading, line: Int, attributes: [String: String]
        }
        var rows: [Row] = []
        rows.reserveCapacity(table.rows.count)
        for row in table.rows {
            guard problems.count < SurveyReader.maxProblems else { break }
            guard let point = point(row.fields, row.line, position) else { continue }
            guard let parsed = surveyTime(row.fields[time], row.line, table.header[time]) else { continue }
            guard let when = parsed else {
                problem(row.line, table.header[time], "the time is empty: a long survey groups readings into scans by time")
                continue
            }
            let id = row.fields[beaconColumn].trimmingSpaces
            guard !id.isEmpty else {
                problem(row.line, table.header[beaconColumn], "the beacon is empty")
                continue
            }
            let cell = row.fields[rssiColumn].trimmingSpaces
            if cell.isEmpty { continue }
            guard let value = number(cell, row.line, table.header[rssiColumn]) else { continue }
            if value == options.missingValue { continue }
            guard let rssi = strength(value, row.line, table.header[rssiColumn]) else { continue }
            var attributes: [String: String] = [:]
            for i in attributeColumns { attributes[table.header[i]] = row.fields[i] }
            rows.append(Row(point: point, time: when, reading: Reading(beacon: beacon(id), rssi: rssi, time: when), line: row.line, attributes: attributes))
        }
        // By point, then time: a scan is a run of readings at one point within the window of
        // its first reading.
        rows.sort { ($0.point, $0.time.seconds, $0.line) < ($1.point, $1.time.seconds, $1.line) }
        var scans: [(scan: Scan, line: Int)] = []
        for row in rows {
            if let last = scans.last, last.scan.point == row.point, let start = last.scan.time, row.time.seconds - start.seconds <= options.windowSeconds {
                scans[scans.count - 1].scan.readings.append(row.reading)
                scans[scans.count - 1].line = min(scans[scans.count - 1].line, row.line)
            } else {
                scans.append((Scan(point: row.point, time: row.time, readings: [row.reading], attributes: row.attributes), row.line))
            }
        }
        // In survey order: by the line of each scan's first reading in the file.
        return scans.sorted { $0.line < $1.line }.map(\.scan)
    }
}
