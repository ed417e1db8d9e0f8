import ArgumentParser
import Engine
import Foundation
import Geometry
import Indoor
import Store
import Support

struct IndoorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "indoor",
        abstract: "Indoor positioning: import beacon surveys into venues, locate scans, evaluate the positioning.",
        discussion: """
            Examples:
              vltava indoor import ble-rssi-wmu-labeled.csv --venue wmu_library --grid letter-column --cell-size 1
              vltava indoor import calibration_df.csv --venue flat --beacon-columns 'rssi_*' --time-unit ns
              vltava indoor import survey/ --venue floor2 --name-pattern '{x:3}{y:3}_raw.csv' --position-scale 0.01 --time-unit ms
              vltava indoor track walk.csv --venue flat --beacon-columns 'rssi_*' --time-unit ns
              vltava indoor locate --venue wmu_library b3001=-78 b3006=-77 --k 3
              vltava indoor evaluate --venue wmu_library --k 1,3,5
              vltava indoor evaluate --venue wmu_library --test-latest 0.2
            """,
        subcommands: [IndoorImportCommand.self, IndoorVenuesCommand.self, IndoorLocateCommand.self, IndoorTrackCommand.self, IndoorEvaluateCommand.self]
    )
}

struct IndoorImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a fingerprint survey (CSV) as a venue, in one transaction: a survey with a bad row changes nothing.",
        discussion: """
            Wide surveys have one row per scan and one column per beacon (the other numeric columns); long
            surveys one row per reading (a beacon column and an RSSI column), grouped into scans by point
            and --window. Positions come from x/y columns or from labels through --grid: letter-column reads
            "O02" as column O (x = 15), row 2 (y = 2), times --cell-size.
            """
    )

    @Argument(help: "The survey CSV, or a folder of per-point CSV files (with --name-pattern).") var file: String
    @Option(help: "The venue to create (letters, digits, '_').") var venue: String
    @Option(help: "What people call the venue.") var title: String = ""
    @Option(help: "wide or long (default: long when the file has a beacon and an RSSI column).") var shape: SurveyOptions.Shape?
    @Option(help: "Wide: the cell value meaning 'not heard': a number (-200, 0) or 'empty' (empty cells only).") var missing: String = "-200"
    @Option(help: "The column of point labels (default: location, label, point or cell).") var labelColumn: String?
    @Option(help: "The time column (default: date, time or timestamp).") var timeColumn: String?
    @Option(help: "The x column (default: x).") var xColumn: String?
    @Option(help: "The y column (default: y).") var yColumn: String?
    @Option(help: "The floor column (default: floor or level).") var floorColumn: String?
    @Option(help: "Long: the beacon column (default: beacon, beacon_id, mac, bssid or uuid).") var beaconColumn: String?
    @Option(help: "Long: the RSSI column (default: rssi, dbm or signal).") var rssiColumn: String?
    @Option(help: "Wide: columns kept with each scan as text, not beacons (comma-separated; for --test-where).") var attributeColumns: String?
    @Option(help: "Wide: the beacons' columns, comma-separated; NAME* takes every column starting with NAME (default: every other numeric column).") var beaconColumns: String?
    @Option(help: "Numeric times are Unix s, ms, us or ns (default: ISO text, 10-18-2016 11:15:21, or Unix seconds).") var timeUnit: TimeUnit?
    @Option(help: "The venue's model: unheard=learned-10|learned-MARGIN|DBM, representation=dbm|positive|exponential|powed.") var model: String?
    @Option(help: "Long: readings at one point within this many seconds of a scan's first form the scan.") var window: Double = 1
    @Option(help: "How labels map to positions: letter-column or letter-row.") var grid: String?
    @Option(help: "The grid's cell size, in metres (the frame's units).") var cellSize: Double = 1
    @Option(help: "The floor of every scan when the file has no floor column.") var floor: Int = 0
    @Option(help: "The name of that floor.") var floorName: String = ""
    @Option(help: "The floor frame's origin on the globe, LON,LAT (then answers carry lon/lat).") var origin: String?
    @Option(help: "Degrees clockwise from north of the frame's y axis.") var rotation: Double = 0
    @Option(help: "A CSV of where the beacons hang: id,x,y[,z][,floor] in the frame (an id matches a beacon of that name, or with --beacon-columns NAME* the column NAME+id).") var beaconPositions: String?
    @Option(help: "A folder's files: where a file's name gives its point, e.g. '{x:3}{y:3}_raw.csv' ({x}, {y}, {floor}; :N a width in digits).") var namePattern: String?
    @Option(help: "Numeric labels as positions, e.g. '{x:3}{y:3}' (instead of --grid).") var labelPattern: String?
    @Option(help: "Multiply the positions read by --name-pattern or --label-pattern by this (0.01: centimetres to metres).") var positionScale: Double = 1
    @Flag(help: "Replace a venue of the same name.") var replace = false
    @Flag(help: "Add the scans to the venue of the same name (its points, beacons and model stay; new ones are added).") var append = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        var options = SurveyOptions(venue: venue)
        options.title = title
        options.shape = shape
        if missing.lowercased() == "empty" {
            options.missingValue = nil
        } else {
            guard let value = Double(missing), value.isFinite else { throw CLIError("--missing takes a number (-200, 0) or 'empty', got '\(missing)'") }
            options.missingValue = value
        }
        (options.labelColumn, options.timeColumn, options.xColumn, options.yColumn) = (labelColumn, timeColumn, xColumn, yColumn)
        (options.floorColumn, options.beaconColumn, options.rssiColumn) = (floorColumn, beaconColumn, rssiColumn)
        options.windowSeconds = window
        options.attributeColumns = attributeColumns.map(commaList) ?? []
        options.beaconColumns = beaconColumns.map(commaList)
        options.timeUnit = timeUnit
        if let model {
            do {
                options.model = try ModelSettings.parse(model)
            } catch {
                throw CLIError("--model: \(error)")
            }
        }
        options.floor = floor
        if let grid {
            guard let convention = GridConvention(name: grid, cellSize: cellSize) else { throw CLIError("--grid takes letter-column or letter-row, got '\(grid)'") }
            options.grid = convention
        }
        var frame: LocalFrame?
        if let origin {
            let parts = origin.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let lon = parts[0], let lat = parts[1] else { throw CLIError("--origin takes LON,LAT, got '\(origin)'") }
            do {
                frame = LocalFrame(origin: try Point.checked(lon: lon, lat: lat), rotationDegrees: rotation)
            } catch {
                throw CLIError("--origin: \(error)")
            }
            guard rotation.isFinite else { throw CLIError("--rotation must be a number of degrees") }
        }
        if frame != nil || !floorName.isEmpty { options.floors = [Floor(number: floor, name: floorName, frame: frame)] }
        if let beaconPositions { options.beaconPositions = try readBeaconPositions(beaconPositions, prefixes: (options.beaconColumns ?? []).filter { $0.hasSuffix("*") }.map { String($0.dropLast()) }) }
        guard !(replace && append) else { throw CLIError("give --replace or --append, not both") }
        guard !(append && model != nil) else { throw CLIError("--model is a new venue's: an appended venue keeps its own (re-import it with --replace to change it)") }
        var isFolder: ObjCBool = false
        let folder = FileManager.default.fileExists(atPath: file, isDirectory: &isFolder) && isFolder.boolValue
        if folder && namePattern == nil { throw CLIError("\(file) is a folder: give --name-pattern to read each file's point from its name, e.g. '{x:3}{y:3}_raw.csv'") }
        if !folder && namePattern != nil { throw CLIError("--name-pattern reads a folder of per-point files; \(file) is not a folder") }
        do {
            let pattern = try namePattern.map { text throws(IndoorError) in try PositionPattern(text, scale: positionScale) }
            options.labelPattern = try labelPattern.map { text throws(IndoorError) in try PositionPattern(text, scale: positionScale) }
            // As `vltava import`: a new store is moved into place only when complete, so a
            // failed import leaves no file behind.
            let mode: IndoorStore.ImportMode = append ? .append : replace ? .replace : .create
            let venue = try GeoPackage.write(at: store.db) { geoPackage in
                try IndoorStore.importSurvey(file, into: geoPackage, options: options, folder: pattern, mode: mode)
            }
            let readings = venue.scans.reduce(0) { $0 + $1.readings.count }
            print("imported venue '\(venue.name)': \(venue.scans.count) scans (\(readings) readings) of \(venue.beacons.count) beacons at \(venue.points.count) points on \(venue.floors.count) floor(s)"
                  + (venue.grid.map { "; grid \($0.description)" } ?? ""))
        } catch {
            throw CLIError(error)
        }
    }
}

extension SurveyOptions.Shape: ExpressibleByArgument {}

/// `--beacon-positions`: a CSV with a header naming id, x, y (and optionally floor; other
/// columns, such as z, are left out), keyed by the id and by each column prefix + id
/// (calib2021's anchors.csv names beacon 1, its survey the column rssi_1).
func readBeaconPositions(_ path: String, prefixes: [String]) throws -> [String: Beacon] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw CLIError("--beacon-positions: cannot read \(path)") }
    let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } }
    guard let header = lines.first?.map({ $0.lowercased() }), let id = header.firstIndex(of: "id"), let x = header.firstIndex(of: "x"), let y = header.firstIndex(of: "y") else {
        throw CLIError("--beacon-positions: \(path) needs a header with id, x and y")
    }
    let floor = header.firstIndex(of: "floor")
    var positions: [String: Beacon] = [:]
    for (number, row) in lines.dropFirst().enumerated() where !(row.count == 1 && row[0].isEmpty) {
        guard row.count == header.count, let px = Double(row[x]), let py = Double(row[y]), px.isFinite, py.isFinite else {
            throw CLIError("--beacon-positions: \(path), line \(number + 2): expected \(header.count) columns with numbers for x and y")
        }
        let level = try floor.map { column -> Int in
            guard let value = Int(row[column]) else { throw CLIError("--beacon-positions: \(path), line \(number + 2): the floor must be a whole number") }
            return value
        }
        for name in [row[id]] + prefixes.map({ $0 + row[id] }) { positions[name] = Beacon(id: name, floor: level, x: px, y: py) }
    }
    return positions
}

/// "a, b,c" → ["a", "b", "c"]: the CLI's lists of columns.
func commaList(_ text: String) -> [String] {
    text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
}
extension TimeUnit: ExpressibleByArgument {}

struct IndoorVenuesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "venues", abstract: "List the venues with their floors, beacons, points and scans.")
    @OptionGroup var store: StoreOptions

    func run() throws {
        let snapshot = try loadSnapshot(store)
        let rows = snapshot.venues.map { venue -> [String] in
            let v = venue.venue
            return [v.name, v.title, "\(v.floors.count)", "\(v.beacons.count)", "\(v.points.count)", "\(v.scans.count)", v.grid?.description ?? "x/y"]
        }
        print(Table(header: ["venue", "title", "floors", "beacons", "points", "scans", "positions"], rows: rows, rightAligned: [2, 3, 4, 5]).rendered)
    }
}

struct IndoorLocateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "locate",
        abstract: "Locate one scan: beacon=rssi pairs (dBm).",
        discussion: "Example: vltava indoor locate --venue wmu_library b3001=-78 b3006=-77 --k 3"
    )

    @Argument(help: "The scan, as beacon=rssi (e.g. b3001=-78).") var readings: [String]
    @Option(help: "The venue (optional when the store has one).") var venue: String?
    @Option(help: "How many nearest fingerprints or likeliest cells (default: 10 for gaussian, else 3).") var k: Int?
    @Option(help: "gaussian, knn, wknn or ensemble (default: the venue's, else gaussian).") var method: LocateMethod?
    @Option(help: "scans, mean or median.") var fingerprints: FingerprintKind = .scans
    @Option(help: "table, json or geojson.") var format: QueryFormat = .table
    @OptionGroup var store: StoreOptions

    func run() throws {
        var scan: [(beacon: String, rssi: Double)] = []
        for reading in readings {
            guard let equals = reading.lastIndex(of: "="), let rssi = Double(reading[reading.index(after: equals)...]) else {
                throw CLIError("'\(reading)' is not beacon=rssi (e.g. b3001=-78)")
            }
            scan.append((String(reading[..<equals]), rssi))
        }
        let snapshot = try loadSnapshot(store)
        do {
            let place: IndoorVenue
            if let venue {
                place = try snapshot.venue(venue)
            } else if snapshot.venues.count == 1, let only = snapshot.venues.first {
                place = only
            } else {
                throw EngineError.invalidArgument(parameter: "venue", message: "name the venue with --venue (venues: \(snapshot.venueNames.joined(separator: ", ")))")
            }
            let location = try snapshot.locate(scan, in: place, options: LocateOptions(k: k, method: method, fingerprints: fingerprints))
            var w = JSONWriter(pretty: true)
            switch format {
            case .table:
                print(Self.table(location))
                return
            case .json: Output.location(&w, location)
            case .geojson: Output.locationFeature(&w, location)
            case .csv: throw CLIError("a location is no table: use --format table, json or geojson")
            }
            print(String(decoding: w.bytes, as: UTF8.self))
        } catch {
            throw CLIError(error)
        }
    }

    static func table(_ location: Location) -> String {
        let p = location.position
        let venue = location.venue.venue
        var out = ["\(venue.name), floor \(p.floor): x \(Rounding.metres(p.x)), y \(Rounding.metres(p.y)) (\(Output.frameUnits(venue))), near point \(location.pointLabel), spread \(Rounding.metres(p.spread))"]
        if let lonLat = p.lonLat { out.append("lon \(lonLat.lon), lat \(lonLat.lat)") }
        let rows = p.neighbours.map { n -> [String] in
            let point = venue.points[n.point]
            return [point.label, "\(point.floor)", "\(Rounding.metres(point.x))", "\(Rounding.metres(point.y))", "\(Rounding.metres(n.signalDistance))", "\(Rounding.metres(n.weight))"]
        }
        out.append(Table(header: ["point", "floor", "x", "y", "signal_dB", "weight"], rows: rows, rightAligned: [1, 2, 3, 4, 5]).rendered)
        if !location.ignored.isEmpty { out.append("not beacons of \(venue.name), left out: \(location.ignored.joined(separator: ", "))") }
        return out.joined(separator: "\n")
    }
}

extension LocateMethod: ExpressibleByArgument {}

struct IndoorTrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Locate a walking phone's scans together (a CSV read as a survey, positions not needed): a position per scan.",
        discussion: "Example: vltava indoor track test_walk_df.csv --venue flat --beacon-columns 'rssi_*' --time-unit ns"
    )

    @Argument(help: "The track's CSV: one scan a row (wide) or one reading a row (long), with a time column.") var file: String
    @Option(help: "The venue (optional when the store has one).") var venue: String?
    @Option(help: "Numeric times are Unix s, ms, us or ns.") var timeUnit: TimeUnit?
    @Option(help: "The beacons' columns, as for import (NAME* for a prefix).") var beaconColumns: String?
    @Option(help: "The time column (default: date, time, timestamp or ts).") var timeColumn: String?
    @Option(help: "Walking speed, frame units a second.") var speed: Double = 1.5
    @Option(help: "How many of the most probable cells each position uses.") var k: Int = 5
    @Flag(help: "Forward pass only: each position from the scans up to it (as a live phone has).") var filter = false
    @Option(help: "table, json or csv.") var format: QueryFormat = .table
    @OptionGroup var store: StoreOptions

    func run() throws {
        let snapshot = try loadSnapshot(store)
        let located: TrackLocation
        do {
            let place = try snapshot.onlyOrNamedVenue(venue)
            var read = SurveyOptions(venue: place.name)
            read.timeUnit = timeUnit
            read.timeColumn = timeColumn
            read.beaconColumns = beaconColumns.map(commaList)
            let track = try SurveyReader.readTrack(try IndoorEvaluateCommand.bytes(file), file: (file as NSString).lastPathComponent, options: read)
            let scans = track.scans.map { scan in
                (time: scan.time?.seconds, readings: scan.readings.map { (beacon: track.beacons[$0.beacon], rssi: $0.rssi) })
            }
            located = try snapshot.locateTrack(scans, in: place, options: TrackOptions(speed: speed, smooth: !filter, k: k))
        } catch {
            throw CLIError(error)
        }
        switch format {
        case .json, .geojson:
            var w = JSONWriter(pretty: true)
            Output.track(&w, located)
            print(String(decoding: w.bytes, as: UTF8.self))
        case .table, .csv:
            let venue = located.venue.venue
            let rows = zip(located.positions, located.times).map { position, time -> [String] in
                [time.map { SurveyTime(seconds: $0).iso } ?? "", "\(position.floor)", "\(Rounding.metres(position.x))", "\(Rounding.metres(position.y))",
                 venue.points[position.point].label, "\(Rounding.metres(position.spread))"]
            }
            let header = ["time", "floor", "x", "y", "point", "spread"]
            if format == .csv {
                print(([header] + rows).map { $0.joined(separator: ",") }.joined(separator: "\n"))
            } else {
                print("\(venue.name): \(located.positions.count) scans, \(located.options.smooth ? "smoothed over the whole track" : "forward only"), at a walking speed of \(located.options.speed) \(Output.frameUnits(venue)) a second")
                print(Table(header: header, rows: rows, rightAligned: [1, 2, 3, 5]).rendered)
            }
        }
    }
}

extension IndoorEvaluateCommand {
    static func bytes(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
        return [UInt8](data)
    }
}
extension FingerprintKind: ExpressibleByArgument {}

struct IndoorEvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Evaluate the positioning on a venue's survey: leave-one-out, or a train/test split by time or by a column.",
        discussion: """
            Reports per setting the median, p90 and maximum error (in the frame's units and in cells), the share
            of scans placed in their exact cell, and the time per locate.
              vltava indoor evaluate --venue wmu_library                       (leave-one-out, k 1,3,5, knn and wknn)
              vltava indoor evaluate --venue wmu_library --test-from 2016-10-01T00:00:00
              vltava indoor evaluate --venue wmu_library --test-latest 0.2
              vltava indoor evaluate --venue wmu_library --test-where session=b
            """
    )

    @Option(help: "The venue (optional when the store has one).") var venue: String?
    @Option(help: "The k to try, comma-separated.") var k: String = "1,3,5"
    @Option(help: "Methods, comma-separated: knn, wknn, gaussian, ensemble.") var method: String = "knn,wknn,gaussian,ensemble"
    @Option(help: "Fingerprints, comma-separated: scans, mean, median.") var fingerprints: String = "scans"
    @Option(help: "Test the scans from this time on, train on those before.") var testFrom: String?
    @Option(help: "Test the latest fraction of the scans by time (e.g. 0.2), train on the earlier.") var testLatest: Double?
    @Option(help: "Test the scans whose COLUMN is VALUE (COLUMN=VALUE[,VALUE…]), train on the others.") var testWhere: String?
    @Flag(help: "Store the best setting (method, k and model; scans fingerprints) as the venue's, for locates that name none: choose on the survey alone (leave-one-out or --folds), not on a test track.") var apply = false
    @Option(help: "Cross-validate: cut the survey into N blocks in its order (its runs, for a survey in time order), each tested against the others.") var folds: Int?
    @Option(help: "Test a separate track (CSV, read as a survey: x/y columns when it has them), train on the whole venue; scan by scan, then as a track.") var testTrack: String?
    @Option(help: "With --test-track without positions: the walked path (CSV x0,y0,x1,y1); errors are distances to it.") var path: String?
    @Option(help: "--test-track: its numeric times are Unix s, ms, us or ns.") var timeUnit: TimeUnit?
    @Option(help: "--test-track: its beacon columns, as for import.") var beaconColumns: String?
    @Option(help: "--test-track: walking speed for the track, frame units a second.") var speed: Double = 1.5
    @Option(help: "Model settings to compare, separated by ';' (e.g. 'unheard=-105;unheard=learned-10,representation=powed'); default: the venue's.") var models: String?
    @Flag(help: "JSON: add every test scan's error in cells.") var errors = false
    @Option(help: "table or json.") var format: QueryFormat = .table
    @OptionGroup var store: StoreOptions

    func run() throws {
        var options = EvaluationOptions()
        options.k = try k.split(separator: ",").map { text in
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw CLIError("--k takes whole numbers, got '\(text)'") }
            return value
        }
        options.methods = try method.split(separator: ",").map { text in
            guard let value = LocateMethod(rawValue: text.trimmingCharacters(in: .whitespaces)) else { throw CLIError("--method takes knn, wknn; got '\(text)'") }
            return value
        }
        options.fingerprints = try fingerprints.split(separator: ",").map { text in
            guard let value = FingerprintKind(rawValue: text.trimmingCharacters(in: .whitespaces)) else { throw CLIError("--fingerprints takes scans, mean, median; got '\(text)'") }
            return value
        }
        if let models {
            do {
                options.models = try models.split(separator: ";").map { text throws(IndoorError) in try ModelSettings.parse(String(text)) }
            } catch {
                throw CLIError("--models: \(error)")
            }
        }
        if [testTrack != nil, testFrom != nil, testLatest != nil, testWhere != nil, folds != nil].filter({ $0 }).count > 1 {
            throw CLIError("give one of --test-track, --test-from, --test-latest, --test-where, --folds")
        }
        switch (testFrom, testLatest, testWhere) {
        case (nil, nil, nil): options.split = folds.map { .folds($0) } ?? .leaveOneOut
        case (let time?, nil, nil):
            guard let parsed = SurveyTime.parse(time) else { throw CLIError("--test-from: '\(time)' is not a time (2016-10-01T00:00:00)") }
            options.split = .testFrom(parsed)
        case (nil, let fraction?, nil): options.split = .latest(fraction: fraction)
        case (nil, nil, let condition?):
            guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else { throw CLIError("--test-where takes COLUMN=VALUE, got '\(condition)'") }
            let values = condition[condition.index(after: equals)...].split(separator: ",").map(String.init)
            options.split = .column(String(condition[..<equals]), values: values)
        default:
            throw CLIError("give at most one of --test-from, --test-latest, --test-where")
        }
        let snapshot = try loadSnapshot(store)
        let evaluation: Evaluation
        do {
            let place: IndoorVenue
            if let venue {
                place = try snapshot.venue(venue)
            } else if snapshot.venues.count == 1, let only = snapshot.venues.first {
                place = only
            } else {
                throw EngineError.invalidArgument(parameter: "venue", message: "name the venue with --venue (venues: \(snapshot.venueNames.joined(separator: ", ")))")
            }
            if let testTrack {
                var read = SurveyOptions(venue: place.name)
                read.timeUnit = timeUnit
                read.beaconColumns = beaconColumns.map(commaList)
                let track = try SurveyReader.readTrack(try Self.bytes(testTrack), file: (testTrack as NSString).lastPathComponent, options: read)
                let truth: Evaluator.Truth = try path.map { .path(try SurveyReader.readPath(try Self.bytes($0), file: ($0 as NSString).lastPathComponent)) } ?? .positions
                evaluation = try Evaluator.evaluate(place.venue, track: track, truth: truth, options: options, trackOptions: TrackOptions(speed: speed))
            } else {
                evaluation = try snapshot.evaluate(place, options: options)
            }
        } catch {
            throw CLIError(error)
        }
        if format == .table {
            let cell = evaluation.venue.cellSize
            func f(_ value: Double, _ digits: Int = 3) -> String { value.isFinite ? String(format: "%.\(digits)f", value) : "-" }
            let rows = evaluation.results.map { r -> [String] in
                [r.model.description, r.tracking.map { "track (\($0))" } ?? r.fingerprints.rawValue, r.method.rawValue, "\(r.k)", "\(r.tested)",
                 f(r.median / cell), f(r.p90 / cell), f(r.maximum / cell), f(r.exactShare * 100, 1) + " %", f(r.microsecondsPerLocate, 2)]
            }
            print("venue \(evaluation.venue.name), \(evaluation.split.description); errors in cells (\(Output.frameUnits(evaluation.venue)))"
                  + (path != nil ? ", as distances to the walked path" : ""))
            print(Table(header: ["model", "fingerprints", "method", "k", "tested", "median", "p90", "max", "exact", "µs/locate"], rows: rows,
                        rightAligned: [3, 4, 5, 6, 7, 8, 9]).rendered)
            if let best = evaluation.best, evaluation.results.count > 1 {
                print("best by median, then p90: \(best.method.rawValue) k \(best.k), \(best.fingerprints.rawValue) fingerprints, \(best.model) (median \(f(best.median / cell)), p90 \(f(best.p90 / cell)))")
            }
        } else {
            var w = JSONWriter(pretty: true)
            Output.evaluation(&w, evaluation, errors: errors)
            print(String(decoding: w.bytes, as: UTF8.self))
        }
        if apply {
            guard testTrack == nil else { throw CLIError("--apply chooses on the survey alone: not with --test-track (that would tune on the test)") }
            guard let best = evaluation.results.filter({ $0.fingerprints == .scans }).min(by: { ($0.median, $0.p90) < ($1.median, $1.p90) }) else {
                throw CLIError("--apply: no setting with scans fingerprints was evaluated")
            }
            var settings = best.model
            (settings.method, settings.k) = (best.method, best.k)
            do {
                try GeoPackage.write(at: store.db) { geoPackage in try IndoorStore.setModel(settings, of: evaluation.venue.name, in: geoPackage) }
            } catch {
                throw CLIError(error)
            }
            print("venue \(evaluation.venue.name): model \(settings) (a running server takes it at its next reload)")
        }
    }
}
