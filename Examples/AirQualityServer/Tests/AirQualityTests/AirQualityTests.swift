import AirQuality
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import Vltava
#if canImport(TestSupport)
import TestSupport
#endif

/// The example served on a free loopback port and asked over real HTTP, on the demo store that
/// scripts/build-demo-store.sh builds. The expected values come from the fixture files, worked
/// out in Python: haversine distances (R = 6,371,008.8 m) from the stations CSV, and AREPA's
/// hours from the observations CSV with the missing-versus-zero rule.
@Suite struct AirQualityTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../..").standardizedFileURL

    /// The demo store, built once with the `vltava` binary of the repository's own build
    /// (`swift build` at the root, as CI does before this test), or $VLTAVA_BINARY.
    static let store: Result<String, any Error> = Result {
        let binary = ProcessInfo.processInfo.environment["VLTAVA_BINARY"] ?? repository.appendingPathComponent(".build/debug/vltava").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no vltava binary at \(binary): run `swift build` at the repository root"])
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("air-quality-\(UUID().uuidString)/demo.gpkg").path
        let script = Process()
        script.executableURL = URL(fileURLWithPath: "/bin/bash")
        script.arguments = [repository.appendingPathComponent("scripts/build-demo-store.sh").path, path, binary]
        script.standardOutput = FileHandle.nullDevice
        try script.run()
        script.waitUntilExit()
        guard script.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "build-demo-store.sh failed"]) }
        return path
    }

    /// One engine for every test, as the app has one.
    static let engine: Result<Engine, any Error> = Result { try Engine(path: try store.get()) }

    func withApp(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        #if canImport(TestSupport)
        // Inside Vltava's own `swift test`, hundreds of tests share a cooperative pool of two
        // threads, and the test client gives up after 20 s; so the app gets a thread of its own.
        try await onAThreadOfItsOwn { try await Self.serve(test) }
        #else
        try await Self.serve(test)
        #endif
    }

    static func serve(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = Application(router: router(engine: try engine.get()),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live, test)
    }

    static func json(_ response: TestResponse) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
    }

    @Test func listsEveryStation() async throws {
        try await withApp { client in
            let response = try await client.execute(uri: "/stations", method: .get)
            #expect(response.status == .ok)
            let stations = try #require(try Self.json(response) as? [[String: Any]])
            // The 17 rows of Fixtures/air/stations-prague.csv, in file order.
            #expect(stations.compactMap { $0["code"] as? String } == [
                "ABREA", "ACHOA", "AKALA", "AKOBA", "ALEGA", "ALERA", "ALIBA", "APRUA", "AREPA",
                "ARERA", "ARIEA", "ASMIA", "ASROA", "ASTOA", "ASUCA", "AVRSA", "AVYNA",
            ])
            let arepa = try #require(stations.first { $0["code"] as? String == "AREPA" })
            #expect(arepa["name"] as? String == "Praha 1-n. Republiky")
            #expect(arepa["lon"] as? Double == 14.42922 && arepa["lat"] as? Double == 50.088066)
        }
    }

    @Test func oneStationWithItsLatestValues() async throws {
        try await withApp { client in
            let response = try await client.execute(uri: "/stations/AREPA", method: .get)
            #expect(response.status == .ok)
            let station = try #require(try Self.json(response) as? [String: Any])
            let latest = try #require(station["latest"] as? [String: [String: Any]])
            // AREPA measures aqi, NO2, PM10 and PM10 (24 h); its O3, PM2.5, SO2 and CO are all 0.
            #expect(Set(latest.keys) == ["aqi", "no2", "pm10", "pm10_24"])
            #expect(latest["no2"]?["value"] as? Double == 32.9)
            #expect(latest["pm10"]?["value"] as? Double == 43)
            #expect(latest["no2"]?["end"] as? String == "2019-04-16T21:00:00Z")
            #expect(station["observed_until"] as? String == "2019-04-16T21:00:00Z")

            let unknown = try await client.execute(uri: "/stations/NOPE", method: .get)
            #expect(unknown.status == .notFound)
            #expect(unknown.headers[.contentType] == "application/problem+json")
            let problem = try #require(try Self.json(unknown) as? [String: Any])
            #expect(problem["code"] as? String == "unknown_station" && problem["status"] as? Int == 404)
        }
    }

    @Test func historyOfTheLastHours() async throws {
        try await withApp { client in
            let response = try await client.execute(uri: "/stations/AREPA/history?hours=24", method: .get)
            #expect(response.status == .ok)
            let history = try #require(try Self.json(response) as? [String: Any])
            #expect(history["code"] as? String == "AREPA" && history["hours"] as? Int == 24)
            let hours = try #require(history["observations"] as? [[String: Any]])
            #expect(hours.count == 24)
            #expect(hours.first?["end"] as? String == "2019-04-15T22:00:00Z")
            #expect((hours.first?["values"] as? [String: Double]) == ["aqi": 3, "no2": 33.3, "pm10": 20, "pm10_24": 29.3])
            #expect(hours.last?["end"] as? String == "2019-04-16T21:00:00Z")
            #expect((hours.last?["values"] as? [String: Double]) == ["aqi": 3, "no2": 32.9, "pm10": 43, "pm10_24": 32])

            for bad in ["0", "745", "x"] {
                let response = try await client.execute(uri: "/stations/AREPA/history?hours=\(bad)", method: .get)
                #expect(response.status == .badRequest)
                #expect(try Self.json(response) as? [String: Any] != nil && response.headers[.contentType] == "application/problem+json")
            }
        }
    }

    @Test func nearestStations() async throws {
        try await withApp { client in
            let response = try await client.execute(uri: "/stations/nearest", method: .post, headers: [.contentType: "application/json"],
                                                    body: ByteBuffer(string: #"{"lon":14.4208,"lat":50.0880,"k":3}"#))
            #expect(response.status == .ok)
            let text = String(buffer: response.body)
            let stations = try #require(try Self.json(response) as? [[String: Any]])
            #expect(stations.compactMap { $0["code"] as? String } == ["AREPA", "AKALA", "ARIEA"])
            #expect(stations.compactMap { $0["distance_m"] as? Double } == [600.76, 1667.047, 1721.927])
            #expect(text.contains(#""distance_m":600.76"#))

            let outside = try await client.execute(uri: "/stations/nearest", method: .post, headers: [.contentType: "application/json"],
                                                   body: ByteBuffer(string: #"{"lon":14.4208,"lat":150}"#))
            #expect(outside.status == .badRequest)
            let problem = try #require(try Self.json(outside) as? [String: Any])
            #expect(problem["detail"] as? String == "$2: latitude 150 is outside -90…90 — did you swap longitude and latitude?")
            #expect(problem["code"] as? String == "invalid_value")

            let garbage = try await client.execute(uri: "/stations/nearest", method: .post, body: ByteBuffer(string: "lon=14.42"))
            #expect(garbage.status == .badRequest)
            #expect((try Self.json(garbage) as? [String: Any])?["code"] as? String == "invalid_body")
        }
    }
}
