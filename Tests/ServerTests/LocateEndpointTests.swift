// POST /v1/locate over real HTTP against the demo store (with the WMU library venue). The
// expected position is the brute force's of IndoorTests (three scans at P01, 122 dB each:
// x 16, y 1).

import Engine
import Foundation
import Geometry
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct LocateEndpointTests {
    @Test func locatesAScan() async throws {
        let server = try await RunningServer.shared.value
        let response = try await post(server.port, "/v1/locate?venue=wmu_library&k=3&method=wknn", body: #"{"b3001": -78, "b3006": -77, "x9": -60}"#,
                                      headers: [("Content-Type", "application/json")])
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        let answer = response.json
        #expect(answer["venue"] == .string("wmu_library") && answer["floor"] == .integer(1) && answer["floor_name"] == .string("first floor"))
        #expect(answer["x"]?.number == 16 && answer["y"]?.number == 1)
        #expect(answer["lon"] == .null && answer["point"] == .string("P01"))
        #expect(answer["spread"]?.number == 0)
        #expect(answer["neighbours"]?.items.compactMap { $0["point"]?.string } == ["P01", "P01", "P01"])
        #expect(answer["neighbours"]?.items.compactMap { $0["signal_distance"]?.number } == [122, 122, 122])
        #expect(answer["ignored_beacons"] == .array([.string("x9")]))
        // The one venue of the store is the default; knn with k 1 takes the nearest alone.
        let one = try await post(server.port, "/v1/locate?k=1&method=knn", body: #"{"b3006": -78}"#)
        #expect(one.status == 200 && one.json["k"] == .integer(1) && one.json["method"] == .string("knn"))
        #expect(one.json["neighbours"]?.items.count == 1 && one.json["neighbours"]?[0]?["signal_distance"]?.number == 0)
        // As GeoJSON: a Feature without geometry (the venue is not on the globe).
        let feature = try await post(server.port, "/v1/locate?geometry=true", body: #"{"b3006": -78}"#)
        #expect(feature.header("Content-Type") == "application/geo+json")
        #expect(feature.json["type"] == .string("Feature") && feature.json["geometry"] == .null && feature.json["properties"]?["venue"] == .string("wmu_library"))
    }

    /// POST /v1/locate/track: a position per scan, the engine's answer through the one output
    /// path; a bad scan is named by its place.
    @Test func locatesATrack() async throws {
        let server = try await RunningServer.shared.value
        let body = #"{"scans": [{"time": 0, "readings": {"b3006": -78}}, {"time": 1, "readings": {"b3006": -75, "b3005": -80}}, {"readings": {"b3005": -70}}]}"#
        let response = try await post(server.port, "/v1/locate/track?venue=wmu_library&speed=1&k=3", body: body)
        #expect(response.status == 200, "\(response.text)")
        let positions = try #require(response.json["positions"]?.items)
        #expect(positions.count == 3 && positions[2]["time"] == .null && response.json["speed"]?.number == 1 && response.json["k"] == .integer(3))
        let snapshot = try Snapshot.load(storePath: try await DemoStore.path())
        let track = try snapshot.locateTrack([(0, [("b3006", -78)]), (1, [("b3006", -75), ("b3005", -80)]), (nil, [("b3005", -70)])],
                                             in: snapshot.venue("wmu_library"), options: TrackOptions(speed: 1, k: 3))
        var w = JSONWriter()
        Output.track(&w, track)
        #expect(JSONWriter.encode(response.json) == w.bytes)
        // Each position is where the cells the walk allows put it: not the scan's own answer
        // when the walk cannot get there in a second.
        #expect(zip(positions, track.positions).allSatisfy { $0["x"]?.number == Rounding.metres($1.x) && $0["point"] == .string(snapshot.venues[0].venue.points[$1.point].label) })
        for (target, body, status, message) in [
            ("/v1/locate/track", #"{"scans": [{"readings": {"b3006": -78}}, {"readings": {"b3006": 5}}]}"#, 400, "scan 2:"),
            ("/v1/locate/track", #"{"scans": [{"time": 5, "readings": {"b3006": -78}}, {"time": 4, "readings": {"b3006": -70}}]}"#, 400, "scan 2: its time 4"),
            ("/v1/locate/track", #"{"scans": []}"#, 400, "a track has 1 to 10000 scans"),
            ("/v1/locate/track", #"{"b3006": -78}"#, 400, "no array"),
            ("/v1/locate/track?speed=0", #"{"scans": [{"readings": {"b3006": -78}}]}"#, 400, "speed"),
        ] {
            let bad = try await post(server.port, target, body: body)
            #expect(bad.status == status && (bad.json["detail"]?.string ?? "").contains(message), "\(target) \(body): \(bad.text)")
        }
    }

    /// POST /v1/venues/{venue}/scans: a surveyor's uploads, durable and located by the very next
    /// request; the store holds them after a reload; a bad scan changes nothing; writes need a
    /// token that covers the venue.
    @Test func surveyScansAreCollected() async throws {
        let (server, store) = try await WriteEndpointTests.writableServer("survey-upload")
        defer { server.stop() }
        let auth = [("Authorization", "Bearer \(WriteEndpointTests.token)"), ("Content-Type", "application/json")]
        // A new spot at (40, 40) that hears a beacon no survey scan heard: before the upload it
        // is not a beacon of the venue.
        let before = try await post(server.port, "/v1/locate?venue=wmu_library&method=knn&k=1", body: #"{"b9999": -60}"#)
        #expect(before.status == 422 && before.json["code"] == .string("no_known_beacon"))
        let upload = #"{"scans": [{"x": 40, "y": 40, "floor": 1, "label": "new1", "time": "2026-11-28T10:00:00", "readings": {"b9999": -60, "b3001": -90}}, {"x": 40, "y": 40, "floor": 1, "label": "new1", "time": 1795860001, "readings": {"b9999": -61}}]}"#
        let added = try await post(server.port, "/v1/venues/wmu_library/scans", body: upload, headers: auth)
        #expect(added.status == 201, "\(added.text)")
        #expect(added.json["added"] == .integer(2) && added.json["scans"] == .integer(1422) && added.json["points"] == .integer(106) && added.json["beacons"] == .integer(14))
        let after = try await post(server.port, "/v1/locate?venue=wmu_library&method=knn&k=1", body: #"{"b9999": -60}"#)
        #expect(after.status == 200 && after.json["point"] == .string("new1") && after.json["x"]?.number == 40, "\(after.text)")
        // Durable: the store file holds them.
        let stored = try IndoorStoreProbe.scans(store, venue: "wmu_library")
        #expect(stored == 1422)
        // All or nothing, with the scan at fault named; no token, no write.
        let bad = #"{"scans": [{"x": 1, "y": 1, "readings": {"b3001": -70}}, {"x": 1, "y": 1, "readings": {"b3001": 7}}]}"#
        let refused = try await post(server.port, "/v1/venues/wmu_library/scans", body: bad, headers: auth)
        #expect(refused.status == 400 && (refused.json["detail"]?.string ?? "").contains("scan 2, beacon 'b3001'"), "\(refused.text)")
        #expect(try IndoorStoreProbe.scans(store, venue: "wmu_library") == 1422)
        let anonymous = try await post(server.port, "/v1/venues/wmu_library/scans", body: upload)
        #expect(anonymous.status == 401)
        let stationsOnly = try await post(server.port, "/v1/venues/wmu_library/scans", body: upload,
                                          headers: [("Authorization", "Bearer \(WriteEndpointTests.stationsToken)")])
        #expect(stationsOnly.status == 403)
        let unknown = try await post(server.port, "/v1/venues/nowhere/scans", body: upload, headers: auth)
        #expect(unknown.status == 404 && unknown.json["code"] == .string("unknown_venue"))
    }

    /// "Who entered which room": a venue on the globe (calib2021 with an origin) locates a phone
    /// into a live layer, and a fence around the spot fires; a track's positions go in order. A
    /// venue without a frame is refused, and placing needs a write token.
    @Test func locatedPhonesEnterFences() async throws {
        let store = try await DemoStore.copy()
        let imported = try CLI.run(["indoor", "import", Fixtures.path("indoor/calib2021/calibration_df.csv"), "--venue", "flat",
                                    "--beacon-columns", "rssi_*", "--time-unit", "ns", "--origin", "14.42,50.08", "--db", store])
        #expect(imported.status == 0, "\(imported.stderr)")
        guard let (server, port) = try await FenceEndpointTests.serve(store) else { return }
        defer { server.stop() }
        #expect(try await FenceEndpointTests.put(port, "/v1/live/people", #"{"ttl_s": 600}"#).status == 200)
        // The robot's first test scan, at (0.60, 5.82) in the flat.
        let scan = #"{"rssi_1": -72.55, "rssi_2": -53.89, "rssi_3": -58.94, "rssi_4": -61.84, "rssi_5": -73.50, "rssi_6": -66.89}"#
        let plain = try await post(port, "/v1/locate?venue=flat", body: scan)
        let (lon, lat) = (try #require(plain.json["lon"]?.number), try #require(plain.json["lat"]?.number))
        let fence = #"{"watch": {"layer": "people"}, "area": {"point": ["# + "\(lon), \(lat)" + #"], "radius_m": 1}}"#
        #expect(try await FenceEndpointTests.put(port, "/v1/fences/corner", fence).status == 200)
        let placed = try await post(port, "/v1/locate?venue=flat&live=people&id=phone-1", body: scan, headers: FenceEndpointTests.auth)
        #expect(placed.status == 200, "\(placed.text)")
        let event = placed.json["live"]?["events"]?[0]
        #expect(event?["fence"] == .string("corner") && event?["event"] == .string("enter") && event?["object"] == .string("phone-1"), "\(placed.text)")
        #expect(placed.json["x"] == plain.json["x"] && placed.json["live"]?["layer"] == .string("people"))
        let object = try await get(port, "/v1/live/people/objects/phone-1").json
        #expect(object["properties"]?["fields"]?["venue"] == .string("flat") && object["properties"]?["fields"]?["floor"] == .integer(0), "\(object)")
        // A track (Unix times, after the phone's last position): its positions in order; the
        // phone walks out of the 1 m circle.
        let now = Int(Date().timeIntervalSince1970)
        let far = #"{"rssi_1": -60.0, "rssi_2": -80.0, "rssi_3": -75.0, "rssi_4": -70.0, "rssi_5": -55.0, "rssi_6": -62.0}"#
        let track = #"{"scans": [{"time": "# + "\(now + 10)" + #", "readings": "# + scan + #"}, {"time": "# + "\(now + 30)" + #", "readings": "# + far + #"}]}"#
        let walked = try await post(port, "/v1/locate/track?venue=flat&live=people&id=phone-1", body: track, headers: FenceEndpointTests.auth)
        #expect(walked.status == 200 && walked.json["live"]?["events"]?.items.map { $0["event"] } == [.string("exit")], "\(walked.text)")
        #expect(walked.json["live"]?["stale"] == .integer(0))
        // Times before the phone's last position are left out, and counted.
        let old = #"{"scans": [{"time": 10, "readings": "# + scan + #"}]}"#
        let late = try await post(port, "/v1/locate/track?venue=flat&live=people&id=phone-1", body: old, headers: FenceEndpointTests.auth)
        #expect(late.json["live"]?["stale"] == .integer(1) && late.json["live"]?["events"]?.items.count == 0, "\(late.text)")
        // Refused: no token; a venue with no frame on the globe; an id without a layer.
        #expect(try await post(port, "/v1/locate?venue=flat&live=people&id=phone-1", body: scan).status == 401)
        let noFrame = try await post(port, "/v1/locate?venue=wmu_library&live=people&id=p", body: #"{"b3006": -78}"#, headers: FenceEndpointTests.auth)
        #expect(noFrame.status == 400 && (noFrame.json["detail"]?.string ?? "").contains("--origin"), "\(noFrame.text)")
        #expect(try await post(port, "/v1/locate?venue=flat&id=p", body: scan).status == 400)
    }

    @Test func badScansGetTheirCodes() async throws {
        let server = try await RunningServer.shared.value
        for (target, body, status, code) in [
            ("/v1/locate?venue=wmu_libary", #"{"b3001": -78}"#, 404, "unknown_venue"),
            ("/v1/locate", #"{"b3001": -78, "b3001": -70}"#, 400, "duplicate_beacon"),
            ("/v1/locate", #"{"b3001": 12}"#, 400, "rssi_out_of_range"),
            ("/v1/locate", #"{"x1": -60, "x2": -70}"#, 422, "no_known_beacon"),
            ("/v1/locate", #"{}"#, 422, "no_known_beacon"),
            ("/v1/locate", #"{"b3001": "strong"}"#, 400, "invalid_body"),
            ("/v1/locate", #"[-78]"#, 400, "invalid_body"),
            ("/v1/locate", #"{"b3001": -78"#, 400, "invalid_body"),
            ("/v1/locate?k=0", #"{"b3001": -78}"#, 400, "invalid_parameter"),
            ("/v1/locate?k=101", #"{"b3001": -78}"#, 400, "invalid_parameter"),
            ("/v1/locate?method=nearest", #"{"b3001": -78}"#, 400, "invalid_parameter"),
            ("/v1/locate?fingerprints=mode", #"{"b3001": -78}"#, 400, "invalid_parameter"),
        ] {
            let response = try await post(server.port, target, body: body)
            #expect(response.status == status && response.json["code"] == .string(code), "\(target) \(body): \(response.status) \(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
        }
        let unknown = try await post(server.port, "/v1/locate?venue=wmu_libary", body: #"{"b3001": -78}"#)
        #expect(unknown.json["detail"] == .string("unknown venue 'wmu_libary' — did you mean 'wmu_library'?"))
        let duplicate = try await post(server.port, "/v1/locate", body: #"{"b3001": -78, "b3001": -70}"#)
        #expect(duplicate.json["beacon"] == .string("b3001"))
        // Issue 30: one bound for k, the engine's (`maxLocateK`), in both directions. Before,
        // k=0 was refused by the server's own wider bound, "between 1 and 2147483647".
        for k in [0, 101, -5] {
            let outside = try await post(server.port, "/v1/locate?k=\(k)", body: #"{"b3001": -78}"#)
            #expect(outside.json["detail"] == .string("k: must be between 1 and 100, got \(k)"))
        }
        // So for nearest's k, whose bound is the engine's row limit.
        let none = try await get(server.port, "/v1/layers/stations/nearest?lon=14.42&lat=50.08&k=0")
        #expect(none.status == 400 && none.json["detail"] == .string("k: must be between 1 and 10000, got 0"))
        let positive = try await post(server.port, "/v1/locate", body: #"{"b3001": 12}"#)
        #expect(positive.json["detail"] == .string("beacon 'b3001': 12 dBm is out of range; a received strength lies from -200 to 0 dBm (negative numbers)"))
    }
}

/// Counts a venue's scans in the store file, through Python's sqlite3, not through Vltava's reader.
enum IndoorStoreProbe {
    static func scans(_ store: String, venue: String) throws -> Int {
        let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM indoor_scans WHERE venue = ?', (sys.argv[2],)).fetchone()[0])"
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, store, venue])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
