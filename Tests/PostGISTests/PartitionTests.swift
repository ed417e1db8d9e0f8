// A layer partitioned by grid cell (Benchmarks/partition-layer.sql): the same answers as the
// unpartitioned layer, and PostgreSQL reads only some of its partitions for a CONTAINING, an
// INTERSECTING and a NEAREST … WITHIN, because the statements Vltava sends name the cells.

import Engine
import Foundation
import Geometry
@testable import PostGIS
import QueryLanguage
import Support
import TestSupport
import Testing
import Vltava

extension PostGISStoreTests {
    /// Benchmarks/partition-layer.sql, from this file's place in the repository.
    static let partitionScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Benchmarks/partition-layer.sql")

    @Test func aLayerPartitionedByGridCellAnswersTheSameAndIsPruned() async throws {
        try await onAThreadOfItsOwn {
            let url = try PushedStore.database("partitioned")
            let cluster = try PushedStore.pushed.get().cluster
            try cluster.psql(try String(contentsOf: Self.partitionScript, encoding: .utf8), database: "partitioned")
            try cluster.psql("CALL vltava_partition_layer('parking', 50, 8)", database: "partitioned")
            #expect(try cluster.psql("SELECT count(*) FROM pg_inherits WHERE inhparent = 'parking'::regclass", database: "partitioned") == "8")
            #expect(try cluster.psql("SELECT count(*) FROM parking", database: "partitioned") == "1548")
            // Rows in more than half the partitions, so that pruning to fewer is not luck.
            let used = try cluster.psql("SELECT count(DISTINCT tableoid) FROM parking", database: "partitioned")
            #expect((Int(used) ?? 0) >= 5, "\(used) partitions hold rows")

            var limits = EngineLimits()
            limits.maxRowsLoadedPerLayer = 0
            let partitioned = try StoreLocation.snapshot(url, limits: limits)
            let reference = try PushedStore.kept.get()
            let box = try PushedStore.embedded.get().layer("parking").bounds
            var generator = SplitMix(state: 38)
            var differences: [String] = []
            for _ in 0..<150 {
                let lon = Double.random(in: box.minLon...box.maxLon, using: &generator), lat = Double.random(in: box.minLat...box.maxLat, using: &generator)
                for statement in ["FIND parking CONTAINING POINT(\(lon) \(lat)) RETURN fid",
                                  "FIND parking NEAREST 3 TO POINT(\(lon) \(lat)) WITHIN 800 m RETURN fid, distance_m",
                                  "FIND parking WITHIN 300 m OF POINT(\(lon) \(lat)) RETURN COUNT(*)",
                                  "FIND parking INTERSECTING BBOX(\(lon) \(lat), \(lon + 0.02) \(lat + 0.01)) RETURN COUNT(*)"] {
                    let (got, expected) = (answer(statement, on: partitioned), answer(statement, on: reference))
                    if got != expected || got.hasPrefix("error") { differences.append("\(statement): \(got) against \(expected)") }
                }
            }
            #expect(differences.isEmpty, "\(differences.count) of 600 differ: \(differences.prefix(3))")
            // Not every answer empty: the comparison compared rows.
            #expect(answer("FIND parking CONTAINING POINT(14.42 50.08) RETURN COUNT(*)", on: partitioned) != #"{"count":1,"rows":[{"COUNT(*)":0}]}"#)

            // EXPLAIN of the statement Vltava sends, with its bound parameters: the grid keys are
            // in its WHERE, and the plan reads fewer partitions than the eight.
            for statement in ["EXPLAIN FIND parking CONTAINING POINT(14.42 50.08)",
                              "EXPLAIN FIND parking INTERSECTING BBOX(14.40 50.07, 14.43 50.09)",
                              "EXPLAIN FIND parking NEAREST 3 TO POINT(14.42 50.08) WITHIN 1000 m"] {
                let plan = answer(statement, on: partitioned)
                #expect(plan.contains("vltava_grid_key(t.geom, 50) IN ($"), "\(statement): \(plan)")
                let scanned = Set(plan.matches(of: /parking_p[0-9]+/).map { String($0.output) })
                #expect(!scanned.isEmpty && scanned.count < 8, "\(statement) reads \(scanned.sorted()): \(plan)")
            }
            // NEAREST without WITHIN has no region: every partition, each by its index, merged.
            let unbounded = answer("EXPLAIN FIND parking NEAREST 3 TO POINT(14.42 50.08)", on: partitioned)
            #expect(!unbounded.contains("vltava_grid_key") && Set(unbounded.matches(of: /parking_p[0-9]+/).map { String($0.output) }).count == 8, "\(unbounded)")
            // A feature wider than a cell is refused by the table, whoever writes it.
            #expect(throws: (any Error).self) {
                try cluster.psql("INSERT INTO parking (fid, geom) VALUES (99999, ST_MakeEnvelope(14.0, 50.0, 14.1, 50.01, 4326))", database: "partitioned")
            }
        }
    }

    @Test func gridCellsCoverTheRegionAndOneCellLeftAndBelow() {
        // 50 thousandths: the point (14.42, 50.08) is in column 288, row 1001.
        let keys = Fetch.gridCells(.containing(Point(lon: 14.42, lat: 50.08)), points: false, millidegrees: 50)
        let key = { (i: Int64, j: Int64) in (i + 1_000_000) * 10_000_000 + (j + 1_000_000) }
        #expect(keys == [key(287, 1000), key(287, 1001), key(288, 1000), key(288, 1001)])
        #expect(Fetch.gridCells(.nearest(k: 3, to: Point(lon: 14.42, lat: 50.08), within: nil), points: false, millidegrees: 50) == nil)
        #expect(Fetch.gridCells(.containing(Point(lon: 14.42, lat: 89.9)), points: false, millidegrees: 50)?.count == 4)
        #expect(Fetch.gridCells(.within(metres: 1000, of: Point(lon: 14.42, lat: 89.9)), points: false, millidegrees: 50) == nil)
        #expect(Fetch.gridCell(partitionKey: "HASH (vltava_grid_key(geom, 50))") == 50)
        #expect(Fetch.gridCell(partitionKey: "LIST (grid_key)") == nil)
    }
}
