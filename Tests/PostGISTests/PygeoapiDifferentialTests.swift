// Vltava against pygeoapi (PyPI 0.21, the OGC API reference implementation, its PostgreSQL
// provider) on the same PostGIS tables of the shared cluster, with PostGIS itself settling each
// difference (Tests/Clients/pygeoapi_differential.py): every CQL2 filter and CRS request must
// answer what PostGIS does; pygeoapi's refusals and differences are counted, so a change in
// either shows. What they are, and why, is in docs/HTTP_API.md ("pygeoapi, side by side").

import Foundation
import Support
import TestSupport
import Testing

extension PostGISStoreTests {
    /// pygeoapi's virtualenv, which scripts/install-deps.sh --test makes.
    static var pygeoapiPython: String {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"] ?? ((environment["HOME"] ?? "/root") + "/.cache")
        return cache + "/vltava/pygeoapi/bin/python"
    }

    @Test func pygeoapiAndVltavaAnswerAsPostGIS() async throws {
        try await onAThreadOfItsOwn {
            let cluster = try PushedStore.pushed.get().cluster
            let server = try ServedStore(cluster.url, cluster: cluster, arguments: ["--max-rows-loaded", "0"])
            defer { server.stop() }
            _ = try server.firstAnswer { try server.post("SHOW LAYERS") }
            let script = Fixtures.root.appendingPathComponent("Tests/Clients/pygeoapi_differential.py").path
            let run = try Fixtures.run(URL(fileURLWithPath: Self.pygeoapiPython),
                                       [script, "--db", cluster.url, "--vltava", "http://127.0.0.1:\(server.port)"], timeout: 300)
            try #require(run.status == 0, "\(run.stdout.suffix(2000)) \(run.stderr.suffix(2000))")
            let report = try JSON.parse(run.stdout.split(separator: "\n").last.map(String.init) ?? "")
            // Vltava answers every filter and CRS request as PostGIS does.
            #expect(report["vltava_differences"] == .array([]))
            #expect(report["filters"] == .integer(29) && report["crs_requests"] == .integer(5) && report["filter_features"] == .integer(385))
            // S-JTSK and EPSG:4326 coordinates: both through PROJ, within 20 nanometres on 38,923 vertices.
            #expect(report["vertices"] == .integer(38_923))
            #expect((report["max_difference"]?.number ?? 1) < 1e-7)
            // pygeoapi: 27 answers as PostGIS; 7 differences (a CQL2 JSON bbox read as x1, x2,
            // y1, y2 by pygeofilter 0.4, a bbox-crs box transformed by two corners); 7 refusals
            // (ECQL's NOT (…), CQL2 JSON's between, and GeoJSON geometries with CRS84 storage).
            #expect(report["pygeoapi_agreed"] == .integer(27))
            #expect(report["pygeoapi_differences"]?.items.count == 7 && report["pygeoapi_refused"]?.items.count == 7)
        }
    }
}
