// GET /v1/search: what a visitor app asks at every keystroke, its answer's shape and values
// (checked against the zoo's own names, as SearchTests does in process), its refusals, and
// the curl example of docs/HTTP_API.md run as written.

import Foundation
import Server
import TestSupport
import Testing

@Suite struct SearchEndpointTests {
    @Test func typedBeginningsFindThePens() async throws {
        let server = try await RoutedServer.shared.value
        let response = try await get(server, "/v1/search?q=gori&lon=14.4085&lat=50.117&limit=3")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/geo+json")
        let features = response.json["features"]?.items ?? []
        #expect(features.map { $0["properties"]?["name"]?.string } == ["gorily", "Gorila nížinná", "Pavilon goril"])
        let pen = try #require(features.first)
        #expect(pen["geometry"]?["coordinates"]?.items.compactMap(\.number) == [14.40518699, 50.11575607])
        #expect(pen["properties"]?["distance_m"]?.number == 273.74)
        #expect(pen["properties"]?["matched"]?.items.first?["how"]?.string == "prefix")
        // The animal has no geometry of its own; it leads to its pen and pavilion.
        let animal = features[1]
        #expect(animal["geometry"] == .null)
        #expect(animal["properties"]?["linked"]?.items.compactMap { $0["name"]?.string } == ["gorily", "Pavilon goril"])
        // Polygons only when asked for.
        let pavilion = features[2]
        #expect(pavilion["geometry"] == .null)
        let withShapes = try await get(server, "/v1/search?q=pavilon%20goril&geometry=true&limit=1")
        #expect(withShapes.json["features"]?.items.first?["geometry"]?["type"]?.string == "Polygon")
    }

    @Test func refusalsNameTheParameter() async throws {
        let server = try await RoutedServer.shared.value
        for (target, status, code, parameter) in [
            ("/v1/search", 400, "missing_parameter", "q"), ("/v1/search?q=%20", 400, "invalid_parameter", "q"),
            ("/v1/search?q=x&limit=0", 400, "invalid_parameter", "limit"), ("/v1/search?q=x&lon=14.4", 400, "missing_parameter", "lat"),
            ("/v1/search?q=x&lon=14.4&lat=95", 400, "invalid_parameter", "lat"), ("/v1/search?q=x&layers=nope", 404, "unknown_layer", nil),
            ("/v1/search?q=x&layers=observations", 400, "invalid_parameter", "layers"), ("/v1/search?q=x&radius=3", 400, "unknown_parameter", nil),
        ] as [(String, Int, String, String?)] {
            let response = try await get(server, target)
            #expect(response.status == status, "\(target)")
            #expect(response.json["code"]?.string == code, "\(target): \(response.text)")
            if let parameter { #expect(response.json["parameter"]?.string == parameter, "\(target): \(response.text)") }
        }
    }

    /// docs/HTTP_API.md's example, sent with curl to a server on loopback.
    @Test func theDocumentedCurlExample() async throws {
        let document = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/HTTP_API.md"), encoding: .utf8)
        let line = try #require(document.split(separator: "\n").first { $0.hasPrefix("curl -s 'localhost:8080/v1/search?") })
        let url = try #require(line.split(separator: "'").dropFirst().first).replacingOccurrences(of: "localhost:8080", with: "127.0.0.1")
        let server = await RunningServer.start(store: try await DemoStore.path())
        defer { server.stop() }
        try await server.ready()
        let (status, _, body) = try await WriteEndpointTests.curl([url.replacingOccurrences(of: "127.0.0.1", with: "127.0.0.1:\(server.port)")])
        #expect(status == 200)
        let features = WriteEndpointTests.json(body)["features"] as? [[String: Any]] ?? []
        #expect(features.compactMap { ($0["properties"] as? [String: Any])?["name"] as? String } == ["Žirafa núbijská", "žirafy, pštrosi, přímorožci, antilopy losí"])
    }
}
