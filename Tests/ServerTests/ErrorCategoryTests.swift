// One classification of errors (issue 29): every case of every error type that reaches a
// client answers the same HTTP status from an endpoint (`APIError.engine`, `.route`, the
// problem middleware) as through /v1/query (`Runner.engineError`, then `APIError.query`), and
// that status is the one docs/HTTP_API.md lists for its code.
//
// The samples are built per enum by a switch with no default: a new case fails to compile
// until it has an index, and fails `everyCaseHasASample` until it has a sample.

import Engine
import Geometry
import Indoor
@testable import QueryLanguage
@testable import Server
import SQLite
import Store
import Testing

struct ErrorCategoryTests {
    static let at = SourcePosition(line: 1, column: 1, length: 1)

    // MARK: The samples, one per case

    static func index(_ error: EngineError) -> Int {
        switch error {
        case .unknownLayer: 0
        case .invalidArgument: 1
        case .unsupportedGeometry: 2
        case .unknownFeature: 3
        case .store: 4
        case .unknownTileSet: 5
        case .tiles: 6
        case .tileSetUnavailable: 7
        case .route: 8
        case .tooManyRows: 9
        case .tooManyRowsInRequest: 10
        case .responseTooLarge: 11
        case .deadlineExceeded: 12
        case .noTimeSeries: 13
        case .unknownVenue: 14
        case .scan: 15
        case .leg: 16
        case .databaseUnavailable: 17
        case .notSupportedOnPostGIS: 18
        case .write: 19
        case .unknownStation: 20
        }
    }
    static let engineCases = 21

    static func index(_ error: RouteError) -> Int {
        switch error {
        case .noSegment: 0
        case .noSegmentAt: 1
        case .noRoute: 2
        case .tooMuchWork: 3
        case .invalidPoint: 4
        case .noTarget: 5
        case .tooManyPoints: 6
        }
    }
    static let routeCases = 7

    static func index(_ error: ScanError) -> Int {
        switch error {
        case .rssiOutOfRange: 0
        case .duplicateBeacon: 1
        case .noKnownBeacon: 2
        case .tooManyReadings: 3
        }
    }
    static let scanCases = 4

    static func index(_ error: StoreError) -> Int {
        switch error {
        case .fileNotFound: 0
        case .notAGeoPackage: 1
        case .sqlite: 2
        case .unknownLayer: 3
        case .layerExists: 4
        case .invalidLayerName: 5
        case .corruptGeometry: 6
        case .badFeature: 7
        case .readOnly: 8
        case .importFailed: 9
        case .unsupportedFormat: 10
        case .badWrite: 11
        case .noSuchFeature: 12
        case .featureExists: 13
        }
    }
    static let storeCases = 14

    static func index(_ error: IndoorError) -> Int {
        switch error {
        case .malformedCSV: 0
        case .invalidOption: 1
        case .venueExists: 2
        case .invalidVenueName: 3
        case .store: 4
        }
    }
    static let indoorCases = 5

    static let routeErrors: [RouteError] = [
        .noSegment(waypoint: 1, nearestMetres: 812, maxSnapMetres: 500), .noSegmentAt(coordinate: 2, nearestMetres: nil, maxSnapMetres: 500),
        .noRoute(reason: "different components"), .tooMuchWork(settled: 5_000_001), .invalidPoint("latitude 114 is outside -90…90"),
        .noTarget(waypoint: 0), .tooManyPoints(what: "sources", count: 101, limit: 100),
    ]
    static let scanErrors: [ScanError] = [
        .rssiOutOfRange(beacon: "b3001", value: 7), .duplicateBeacon("b3001"), .noKnownBeacon(venue: "wmu_library", given: ["x"]),
        .tooManyReadings(count: 1001, limit: 1000),
    ]
    static let engineErrors: [EngineError] = [
        .unknownLayer("stationz", known: ["stations"]), .invalidArgument(parameter: "within", message: "must not be negative"),
        .unsupportedGeometry(layer: "stations", operation: "containing", needs: "polygons", has: "points"),
        .unknownFeature(layer: "stations", fid: 99), .store("stations, fid 3: the geometry cannot be read"),
        .unknownTileSet("zoo_mapp", known: ["zoo_map"]), .tiles("tile 0/0/0 of 'zoo_map': not gzip"),
        .tileSetUnavailable("cities", reason: "cities.mbtiles: no such file"), .tooManyRows(count: 10_001, limit: 10_000),
        .tooManyRowsInRequest(count: 12_000, limit: 10_000), .responseTooLarge(limit: 16 << 20), .deadlineExceeded(seconds: 5),
        .noTimeSeries, .unknownStation("layer 'stations' has no station 'ALIBX'"), .unknownVenue("libary", known: ["library"]),
        .leg(index: 2, from: "lions", to: "bears", .route(.noRoute(reason: "different components"))),
        .databaseUnavailable("postgresql://vltava@127.0.0.1:1/none: connection refused"),
        .notSupportedOnPostGIS("LINKED TO"),
        .write(code: "bad_write", category: .invalid, message: "operation 2 of the batch: latitude 95 is outside -90…90; nothing was written"),
    ] + routeErrors.map { .route($0) } + scanErrors.map { .scan($0) }
    static let storeErrors: [StoreError] = [
        .fileNotFound("none.gpkg"), .notAGeoPackage(path: "x.gpkg", reason: "no gpkg_contents"),
        .sqlite(SQLiteError(code: 11, message: "database disk image is malformed")), .unknownLayer("x", known: []),
        .layerExists("stations"), .invalidLayerName("1x", reason: "it must start with a letter"), .corruptGeometry("short blob"),
        .badFeature(layer: "stations", fid: 3, reason: "short blob"), .readOnly("x.gpkg"),
        .importFailed(file: "x.csv", problems: [ImportProblem(location: "line 2", message: "no longitude")]),
        .unsupportedFormat(file: "x.pdf", reason: "it is a PDF"),
        .badWrite(position: 2, reason: "latitude 95 is outside -90…90"), .noSuchFeature(layer: "stations", fid: 99, position: 1),
        .featureExists(layer: "stations", fid: 1, position: 1),
    ]
    static let indoorErrors: [IndoorError] = [
        .malformedCSV(file: "s.csv", problems: []), .invalidOption("--floor"), .venueExists("library"),
        .invalidVenueName("1x", reason: "it must start with a letter or '_'"), .store("cannot read the indoor venues"),
    ]

    @Test func everyCaseHasASample() {
        #expect(Set(Self.engineErrors.map(Self.index)) == Set(0..<Self.engineCases))
        #expect(Set(Self.routeErrors.map(Self.index)) == Set(0..<Self.routeCases))
        #expect(Set(Self.scanErrors.map(Self.index)) == Set(0..<Self.scanCases))
        #expect(Set(Self.storeErrors.map(Self.index)) == Set(0..<Self.storeCases))
        #expect(Set(Self.indoorErrors.map(Self.index)) == Set(0..<Self.indoorCases))
    }

    // MARK: The same status both ways

    /// docs/HTTP_API.md's error table, for the codes of these samples.
    static let documented: [String: Int] = [
        "invalid_parameter": 400, "unsupported_geometry": 400, "bad_write": 400, "InvalidValue": 400, "rssi_out_of_range": 400, "duplicate_beacon": 400,
        "unknown_layer": 404, "unknown_feature": 404, "unknown_tileset": 404, "unknown_venue": 404, "no_time_series": 404, "unknown_location": 404,
        "NoSegment": 422, "NoRoute": 422, "TooBig": 422, "NoTarget": 422, "no_known_beacon": 422, "too_many_readings": 422,
        "too_many_rows": 422, "response_too_large": 422, "deadline_exceeded": 422, "not_supported_on_postgis": 422,
        "store_error": 500, "tiles_error": 500,
        "tileset_unavailable": 503, "database_unavailable": 503,
    ]

    @Test(arguments: engineErrors) func anEngineErrorAnswersTheSameFromAnEndpointAndFromAQuery(_ error: EngineError) throws {
        let endpoint = APIError.engine(error)
        let query = APIError.query(Runner.engineError(error, at: Self.at))
        #expect(endpoint.status.code == query.status.code, "\(error.code): \(endpoint.status.code) from an endpoint, \(query.status.code) from /v1/query")
        #expect(query.code == error.code)
        let documented = try #require(Self.documented[endpoint.code], "\(endpoint.code) is not in the table")
        #expect(Int(endpoint.status.code) == documented, "\(endpoint.code)")
    }

    /// The routing endpoints map a `RouteError` themselves (`APIError.route`); the language
    /// gets it inside `EngineError.route`.
    @Test(arguments: routeErrors) func aRouteErrorAnswersTheSameFromTheRouteEndpointAndFromAQuery(_ error: RouteError) {
        #expect(APIError.route(error).status.code == APIError.query(Runner.engineError(.route(error), at: Self.at)).status.code, "\(error.code)")
        #expect(APIError.route(error).status.code == Self.documented[error.code], "\(error.code)")
    }

    /// The store's and the indoor model's errors reach the server only through the problem
    /// middleware (the engine wraps them as `store_error`); there they answer by category.
    @Test func storeAndIndoorErrorsAnswerByTheirCategory() {
        let statuses = Self.storeErrors.map { APIError.categorized($0).status.code } + Self.indoorErrors.map { APIError.categorized($0).status.code }
        #expect(statuses == [404, 400, 500, 404, 422, 400, 500, 500, 422, 400, 400, 400, 404, 422] + [400, 400, 422, 400, 500])
    }

    /// The cases that answered differently before: 500 against 422 for the store's and the
    /// tiles' errors, 503 against 422 for an unavailable tile set, 404 against 422 for no time
    /// series; and a query's own errors take the same table (syntax 400, limit 422).
    @Test func theFormerDisagreements() {
        for (error, status) in [(EngineError.store("broken"), 500), (.tiles("not gzip"), 500),
                                (.tileSetUnavailable("cities", reason: "gone"), 503), (.noTimeSeries, 404)] as [(EngineError, Int)] {
            #expect(Runner.engineError(error, at: Self.at).kind == error.category)
            #expect(APIError.query(Runner.engineError(error, at: Self.at)).status.code == status, "\(error.code)")
        }
        #expect(APIError.query(QueryError(kind: .syntax, code: "syntax_error", message: "x", line: 1, column: 1)).status.code == 400)
        #expect(APIError.query(QueryError(kind: .internal, code: "store_error", message: "x", line: 1, column: 1)).status.code == 500)
    }

    /// Which end a route error is about is a value (`RouteError.waypoint`), not a word of its
    /// message.
    @Test func aRouteErrorNamesItsEndAsAValue() {
        #expect(RouteError.noTarget(waypoint: 0).waypoint == 0)
        #expect(RouteError.noTarget(waypoint: 1).description == "the destination matched no feature")
        #expect(RouteError.noSegment(waypoint: 1, nearestMetres: nil, maxSnapMetres: 500).waypoint == 1)
        #expect(RouteError.noRoute(reason: "the start and the destination lie apart").waypoint == nil)
        #expect(APIError.route(.noTarget(waypoint: 0)).extra["parameter"] == .string("from"))
    }
}
