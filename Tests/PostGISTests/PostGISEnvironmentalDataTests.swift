// OGC API – EDR's operation (Engine/EnvironmentalData.swift) on the PostGIS store: the
// observations of a time window are fetched per answer (PostGISFetch.swift, `SeriesNeeds.window`)
// and give what the GeoPackage store gives, station by station and value by value.

import Engine
import Geometry
import Support
import TestSupport
import Testing

// In the serialized suite of the shared cluster: other tests there stop and start it.
extension PostGISStoreTests {
    struct EDRPlace: Equatable {
        let key: String
        let position: Point
        let observations: [TimeSeries.Observation]
    }

    static func edrPlaces(_ snapshot: Snapshot, _ request: EnvironmentalRequest) throws -> (parameters: [String], places: [EDRPlace]) {
        let stations = try snapshot.stations(try snapshot.layer("stations"))
        let data = try snapshot.environmentalData(stations, request)
        return (data.parameters, data.places.map { EDRPlace(key: $0.key, position: $0.position, observations: $0.observations) })
    }

    @Test func windowsOfObservationsAreTheGeoPackagesAnswers() async throws {
        try await onAThreadOfItsOwn {
            let postgis = try PushedStore.postgis.get()
            let reference = try PushedStore.embedded.get()
            #expect(postgis.readsSeriesFromStore && !reference.readsSeriesFromStore)
            #expect(postgis.timeSeriesByLayer["stations"]?.link.units == DemoFixtureStore.airUnits)
            func at(_ text: String) -> UTCTime? { UTCTime.parse(text) }
            let box = Geometry.polygon(Polygon(coordinates: [14.38, 50.07, 14.46, 50.07, 14.46, 50.11, 14.38, 50.11, 14.38, 50.07], ringOffsets: [0, 5]))
            let selections: [StationSelection] = [.nearest([Point(lon: 14.42, lat: 50.08), Point(lon: 14.25, lat: 50.0)]), .within(metres: 3000, of: Point(lon: 14.42, lat: 50.08)),
                                                  .inside(box), .station("ALEGA"), .all]
            let times: [TimeRange?] = [nil, TimeRange(start: at("2019-04-15T10:00:00Z"), end: at("2019-04-15T12:00:00Z")),
                                       TimeRange(start: at("2019-04-16T20:00:00Z"), end: nil), TimeRange(start: nil, end: at("2019-04-14T23:00:00Z")),
                                       TimeRange(start: at("2019-04-15T00:00:00Z"), end: at("2019-04-15T00:00:00Z")),
                                       TimeRange(start: at("2030-01-01T00:00:00Z"), end: nil)]
            var compared = 0
            for selection in selections {
                for time in times {
                    for parameters in [nil, ["no2"], ["aqi", "pm10"], ["CO"]] as [[String]?] {
                        let request = EnvironmentalRequest(selection: selection, time: time, parameters: parameters)
                        let (a, b) = (try Self.edrPlaces(postgis, request), try Self.edrPlaces(reference, request))
                        #expect(a.parameters == b.parameters && a.places == b.places, "\(selection) \(String(describing: time)) \(String(describing: parameters))")
                        compared += b.places.reduce(0) { $0 + $1.observations.count }
                    }
                }
            }
            // Every station's 48 hours, and the windows' hours, each compared.
            #expect(compared > 17 * 48 * 4)
        }
    }
}
