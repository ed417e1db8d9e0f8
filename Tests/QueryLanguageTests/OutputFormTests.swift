import Engine
import Foundation
import Geometry
import QueryLanguage
import Store
import Support
import TestSupport
import Testing

/// RETURN *, quoted names, WKT/WKB columns, CSV, and the tile layer's own column.
@Suite struct OutputFormTests {
    func rows(_ query: String, _ snapshot: Snapshot) throws -> [JSONObject] {
        let result = try #require(try Query.run(query, on: snapshot).first)
        guard case .object(let answer) = result.json(), case .array(let rows)? = answer["rows"] else { return [] }
        return rows.compactMap { if case .object(let row) = $0 { row } else { nil } }
    }

    /// RETURN * is the columns a FIND without RETURN gives, and can go with more fields.
    @Test func returnStarIsEveryColumn() throws {
        let snapshot = try QueryStore.get()
        let star = try #require(try Query.run("FIND stations NEAREST 2 TO POINT(14.42 50.09) RETURN *", on: snapshot).first)
        let plain = try #require(try Query.run("FIND stations NEAREST 2 TO POINT(14.42 50.09)", on: snapshot).first)
        #expect(star.columns == ["fid", "code", "name", "classif", "owner", "distance_m"] && star.columns == plain.columns)
        #expect(star.json() == plain.json())
        let more = try #require(try Query.run("FIND stations NEAREST 1 TO POINT(14.42 50.09) RETURN *, LATEST(no2)", on: snapshot).first)
        #expect(more.columns == ["fid", "code", "name", "classif", "owner", "distance_m", "latest_no2"])
    }

    /// A CSV column with a space imports and is named in double quotes, in WHERE, GROUP BY and
    /// RETURN; counted against the CSV read line by line.
    @Test func quotedNamesReachAColumnWithASpace() throws {
        let directory = try Fixtures.temporaryDirectory("quoted")
        let csv = try String(contentsOfFile: Fixtures.path("air/stations-prague.csv"), encoding: .utf8)
        let lines = csv.split(whereSeparator: \.isNewline).map(String.init)
        let renamed = ([lines[0].replacingOccurrences(of: "classif", with: "typ stanice")] + lines.dropFirst()).joined(separator: "\n") + "\n"
        let source = directory.appendingPathComponent("stanice.csv").path
        try renamed.write(toFile: source, atomically: true, encoding: .utf8)
        let path = directory.appendingPathComponent("quoted.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        _ = try Importer.importFile(source, into: store, options: ImportOptions(layer: "stanice"))
        let snapshot = try Snapshot.load(storePath: path)
        let traffic = lines.dropFirst().filter { $0.split(separator: ",")[2] == "traffic" }.count
        #expect(traffic == 7)
        let found = try rows(#"FIND stanice WHERE "typ stanice" = 'traffic' RETURN code, "typ stanice""#, snapshot)
        #expect(found.count == traffic && found.allSatisfy { $0["typ stanice"] == .string("traffic") })
        let grouped = try rows(#"FIND stanice RETURN "typ stanice", COUNT(*) GROUP BY "typ stanice""#, snapshot)
        #expect(grouped.map { "\($0["typ stanice"]?.string ?? "")=\($0["count"]?.number ?? 0)" } == ["suburban=4.0", "traffic=7.0", "urban=6.0"])
        // Unquoted, the name is two words: an error that says what was expected.
        #expect(throws: QueryError.self) { try Query.run("FIND stanice WHERE typ stanice = 'traffic'", on: snapshot) }
        // "" is one quote inside a quoted name; a keyword quoted is a name.
        #expect(throws: Never.self) { try Query.run(#"FIND animals WHERE "order" = 'Primáti' RETURN name, "order""#, on: try QueryStore.get()) }
    }

    /// WKT(geom) and WKB(geom) read back as the feature's geometry (Geometry's own codecs, which
    /// GeometryTests check against GEOS).
    @Test func wktAndWKBColumns() throws {
        let snapshot = try QueryStore.get()
        let pens = try snapshot.layer("pens"), districts = try snapshot.layer("districts")
        let row = try #require(try rows("FIND pens WHERE name = 'gorily' RETURN fid, WKT(geom), WKB(geom)", snapshot).first)
        #expect(row["wkt"] == .string("POINT (14.40518699 50.11575607)"))
        let index = try #require(pens.fids.firstIndex(of: 4_791_797_957))
        #expect(try WKT.decode(row["wkt"]?.string ?? "") == pens.geometries[index])
        let hex = Array((row["wkb"]?.string ?? "").utf8)
        let bytes = stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0...($0 + 1)], as: UTF8.self), radix: 16) }
        #expect(try WKB.decode(bytes) == pens.geometries[index])
        let praha1 = try #require(try rows("FIND districts WHERE NAZEV_MC = 'Praha 1' RETURN fid, WKT(geom)", snapshot).first)
        let d = try #require(districts.fids.firstIndex(of: 20))
        #expect(try WKT.decode(praha1["wkt"]?.string ?? "") == districts.geometries[d])
    }

    /// CSV: RFC 4180 quoting, missing values empty, lists as their JSON text, numbers as JSON
    /// writes them (the NO2 values are the fixture's last two hours of AREPA and AKALA).
    @Test func csvOfAnAnswer() throws {
        let snapshot = try QueryStore.get()
        let results = try Query.run("FIND stations NEAREST 2 TO POINT(14.42076 50.08804) RETURN code, name, LATEST(so2), HISTORY(no2, 2 h), distance_m", on: snapshot)
        let text = String(decoding: try QueryResult.csv(results), as: UTF8.self)
        #expect(text == """
            code,name,latest_so2,history_no2_2h,distance_m\r
            AREPA,Praha 1-n. Republiky,,"[[""2019-04-16T20:00:00Z"",50.5],[""2019-04-16T21:00:00Z"",32.9]]",603.576\r
            AKALA,Praha 8-Karlín,,"[[""2019-04-16T20:00:00Z"",47.6],[""2019-04-16T21:00:00Z"",26.8]]",1667.799\r

            """)
        #expect(throws: QueryError.self) { try QueryResult.csv(try Query.run("SHOW LAYERS; SHOW LAYERS", on: snapshot)) }
    }

    /// A tile feature's own `layer` property (OSM's: bridge-level buildings have layer 1) is read
    /// by WHERE and RETURN; the tile layer's name is `tile_layer`.
    @Test func tileFeaturesKeepTheirLayer() throws {
        let snapshot = try QueryStore.get()
        let found = try rows("TILE 15/17695/11097 OF zoo_map WHERE layer = 1 RETURN tile_layer, id, layer, kind", snapshot)
        #expect(found.count == 1)
        #expect(found.first?["tile_layer"] == .string("buildings") && found.first?["layer"]?.number == 1 && found.first?["id"] == .integer(74_572_039))
        let all = try #require(try Query.run("TILE 15/17695/11097 OF zoo_map", on: snapshot).first)
        #expect(all.columns == ["tile_layer", "id", "type", "properties"] && all.count == 476)
    }
}
