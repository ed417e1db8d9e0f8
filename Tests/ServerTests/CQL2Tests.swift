// OGC API – Features Part 3 on the demo store: CQL2 filters, in text and in JSON, answer the
// features the same condition written as the query language's WHERE answers (the hand-written
// reference, through /v1/query); a filter names only queryables; what CQL2 has beyond what is
// declared (CASEI, ACCENTI, arithmetic) is refused by name. CQL2FunctionTests checks the spatial,
// temporal and LIKE functions against GEOS and hand-written references through the library.

import Foundation
import Support
import TestSupport
import Testing

@Suite struct CQL2Tests {
    /// (collection, CQL2 text, CQL2 JSON, the same as a WHERE clause). The kinds of the CQL2
    /// conformance tests of Basic CQL2 that the demo data has: equality and order on text,
    /// integers and reals, <>, IS NULL, NOT, AND before OR, parentheses, a literal first, a
    /// quoted property name, a quote in a string; and IN, NOT IN and BETWEEN.
    static let cases: [(String, String, String, String)] = [
        ("districts", "KOD_MC > 547000", #"{"op":">","args":[{"property":"KOD_MC"},547000]}"#, "KOD_MC > 547000"),
        ("districts", "NAZEV_MC = 'Praha 1'", #"{"op":"=","args":[{"property":"NAZEV_MC"},"Praha 1"]}"#, "NAZEV_MC = 'Praha 1'"),
        ("districts", "NAZEV_MC <> 'Praha 1' AND KOD_MC <= 539000", #"{"op":"and","args":[{"op":"<>","args":[{"property":"NAZEV_MC"},"Praha 1"]},{"op":"<=","args":[{"property":"KOD_MC"},539000]}]}"#,
         "NAZEV_MC <> 'Praha 1' AND KOD_MC <= 539000"),
        ("districts", "KOD_MC < 539000 OR KOD_MC > 547300 AND NAZEV_MC <> 'Praha 22'",
         #"{"op":"or","args":[{"op":"<","args":[{"property":"KOD_MC"},539000]},{"op":"and","args":[{"op":">","args":[{"property":"KOD_MC"},547300]},{"op":"<>","args":[{"property":"NAZEV_MC"},"Praha 22"]}]}]}"#,
         "KOD_MC < 539000 OR (KOD_MC > 547300 AND NAZEV_MC <> 'Praha 22')"),
        ("districts", "NOT (KOD_MC >= 500000 AND KOD_MC < 547000)", #"{"op":"not","args":[{"op":"and","args":[{"op":">=","args":[{"property":"KOD_MC"},500000]},{"op":"<","args":[{"property":"KOD_MC"},547000]}]}]}"#,
         "NOT (KOD_MC >= 500000 AND KOD_MC < 547000)"),
        ("districts", "547000 < \"KOD_MC\"", #"{"op":"<","args":[547000,{"property":"KOD_MC"}]}"#, "KOD_MC > 547000"),
        ("districts", "NAZEV_MC IN ('Praha 1', 'Praha 2', 'Praha-Troja')", #"{"op":"in","args":[{"property":"NAZEV_MC"},["Praha 1","Praha 2","Praha-Troja"]]}"#,
         "NAZEV_MC IN ('Praha 1', 'Praha 2', 'Praha-Troja')"),
        ("districts", "NAZEV_MC NOT IN ('Praha 1', 'Praha 2')", #"{"op":"not","args":[{"op":"in","args":[{"property":"NAZEV_MC"},["Praha 1","Praha 2"]]}]}"#,
         "NAZEV_MC NOT IN ('Praha 1', 'Praha 2')"),
        ("districts", "KOD_MC BETWEEN 538000 AND 539500", #"{"op":"between","args":[{"property":"KOD_MC"},538000,539500]}"#, "KOD_MC >= 538000 AND KOD_MC <= 539500"),
        ("districts", "KOD_MC NOT BETWEEN 538000 AND 547000", #"{"op":"not","args":[{"op":"between","args":[{"property":"KOD_MC"},538000,547000]}]}"#,
         "NOT (KOD_MC >= 538000 AND KOD_MC <= 547000)"),
        ("stations", "classif = 'urban' AND owner = 'CHMI'", #"{"op":"and","args":[{"op":"=","args":[{"property":"classif"},"urban"]},{"op":"=","args":[{"property":"owner"},"CHMI"]}]}"#,
         "classif = 'urban' AND owner = 'CHMI'"),
        ("stations", "name = 'Praha 2-Legerova (hot spot)' or name = 'Praha 4-Libuš'", #"{"op":"or","args":[{"op":"=","args":[{"property":"name"},"Praha 2-Legerova (hot spot)"]},{"op":"=","args":[{"property":"name"},"Praha 4-Libuš"]}]}"#,
         "name = 'Praha 2-Legerova (hot spot)' OR name = 'Praha 4-Libuš'"),
        ("pens", "is_animal_pen = TRUE AND name IS NOT NULL", #"{"op":"and","args":[{"op":"=","args":[{"property":"is_animal_pen"},true]},{"op":"not","args":[{"op":"isNull","args":[{"property":"name"}]}]}]}"#,
         "is_animal_pen = true AND name IS NOT NULL"),
        ("pens", "name IS NULL", #"{"op":"isNull","args":[{"property":"name"}]}"#, "name IS NULL"),
        ("animals", "name = 'Lachtan jihoafrický' OR name = 'Gorila nížinná'", #"{"op":"or","args":[{"op":"=","args":[{"property":"name"},"Lachtan jihoafrický"]},{"op":"=","args":[{"property":"name"},"Gorila nížinná"]}]}"#,
         "name = 'Lachtan jihoafrický' OR name = 'Gorila nížinná'"),
        ("parking", "CATEGORY = 'VIS' AND NOT (OBJECTID < 100)", #"{"op":"and","args":[{"op":"=","args":[{"property":"CATEGORY"},"VIS"]},{"op":"not","args":[{"op":"<","args":[{"property":"OBJECTID"},100]}]}]}"#,
         "CATEGORY = 'VIS' AND NOT (OBJECTID < 100)"),
        // Advanced comparison and the functions, against the language's nearest equivalents:
        // a point is in a box exactly when it intersects it; a district contains the point the
        // language's CONTAINING finds it by.
        ("stations", "name LIKE 'Praha 4%' OR name NOT LIKE 'Praha 1_-%' AND name LIKE '%(%)'",
         #"{"op":"or","args":[{"op":"like","args":[{"property":"name"},"Praha 4%"]},{"op":"and","args":[{"op":"not","args":[{"op":"like","args":[{"property":"name"},"Praha 1_-%"]}]},{"op":"like","args":[{"property":"name"},"%(%)"]}]}]}"#,
         "name IN ('Praha 4-Chodov', 'Praha 4-Libuš', 'Praha 2-Legerova (hot spot)', 'Letiště Praha (Ruzyně)')"),
        ("pens", "S_INTERSECTS(geom, BBOX(14.405, 50.115, 14.412, 50.119)) AND is_animal_pen = TRUE",
         #"{"op":"and","args":[{"op":"s_intersects","args":[{"property":"geom"},{"bbox":[14.405,50.115,14.412,50.119]}]},{"op":"=","args":[{"property":"is_animal_pen"},true]}]}"#,
         "INTERSECTING BBOX(14.405 50.115, 14.412 50.119) WHERE is_animal_pen = TRUE"),
        ("districts", "S_CONTAINS(geom, POINT(14.4208 50.0875))",
         #"{"op":"s_contains","args":[{"property":"geom"},{"type":"Point","coordinates":[14.4208,50.0875]}]}"#,
         "CONTAINING POINT(14.4208 50.0875)"),
    ]

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// The fids the items endpoint answers for a filter, in order.
    static func filtered(_ server: RoutedServer, _ collection: String, _ filter: String, language: String) async throws -> [Int64] {
        let answer = try await get(server, "/ogc/collections/\(collection)/items?limit=10000&filter-lang=\(language)&filter=\(encoded(filter))")
        #expect(answer.status == 200, "\(filter): \(answer.text.prefix(300))")
        return (answer.json["features"]?.items ?? []).compactMap { if case .integer(let id)? = $0["id"] { id } else { nil } }
    }

    @Test func filtersAnswerAsTheSameWhere() async throws {
        let server = try await RoutedServer.shared.value
        var nonEmpty = 0
        for (collection, text, json, whereClause) in Self.cases {
            // A spatial clause of the language, or a WHERE.
            let clause = whereClause.hasPrefix("INTERSECTING") || whereClause.hasPrefix("CONTAINING") ? whereClause : "WHERE " + whereClause
            let reference = try await post(server, "/v1/query", body: "FIND \(collection) \(clause) RETURN fid")
            #expect(reference.status == 200, "\(whereClause): \(reference.text)")
            let fids = (reference.json["rows"]?.items ?? []).compactMap { if case .integer(let id)? = $0["fid"] { id } else { nil } }
            let byText = try await Self.filtered(server, collection, text, language: "cql2-text")
            let byJSON = try await Self.filtered(server, collection, json, language: "cql2-json")
            #expect(byText == fids && byJSON == fids, "\(collection): \(text)")
            if !fids.isEmpty { nonEmpty += 1 }
        }
        // Every case selects something and none selects everything, so each can fail.
        #expect(nonEmpty == Self.cases.count - 1)
        // Checked figures: 20 districts above 547000, and the filter with a property filter.
        #expect(try await Self.filtered(server, "districts", "KOD_MC > 547000", language: "cql2-text").count == 20)
        let both = try await get(server, "/ogc/collections/stations/items?classif=urban&filter=\(Self.encoded("owner = 'CHMI'"))&limit=100")
        #expect(both.json["numberMatched"] == .integer(5))
    }

    @Test func theQueryablesAreTheColumns() async throws {
        let server = try await RoutedServer.shared.value
        let queryables = try await get(server, "/ogc/collections/stations/queryables")
        #expect(queryables.status == 200 && queryables.header("Content-Type") == "application/schema+json")
        let geometry = JSONValue.object(JSONObject([("format", .string("geometry-point-or-multi")), ("x-ogc-role", .string("primary-geometry"))]))
        #expect(queryables.json["properties"] == .object(JSONObject([("geom", geometry), ("code", .object(JSONObject([("type", .string("string"))]))),
                                                                     ("name", .object(JSONObject([("type", .string("string"))]))),
                                                                     ("classif", .object(JSONObject([("type", .string("string"))]))),
                                                                     ("owner", .object(JSONObject([("type", .string("string"))])))])))
        #expect(try await get(server, "/ogc/collections/districts/queryables").json["properties"]?["KOD_MC"]?["type"] == .string("integer"))
        let collection = try await get(server, "/ogc/collections/stations")
        #expect(collection.json["links"]?.items.contains { $0["rel"] == .string("http://www.opengis.net/def/rel/ogc/1.0/queryables") } == true)
        let conformance = try await get(server, "/ogc/conformance").json["conformsTo"]?.items.compactMap(\.string) ?? []
        #expect(conformance.contains("http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2") && conformance.contains("http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter"))
    }

    @Test func whatIsNotTakenIsNamed() async throws {
        let server = try await RoutedServer.shared.value
        let cases: [(String, String, String)] = [
            ("stations", "clasif = 'urban'", "'clasif' is not a queryable of 'stations' — did you mean 'classif'?"),
            ("stations", "CASEI(name) = 'praha 4-libuš'", "the function 'CASEI' is not supported"),
            ("stations", "S_INTERSECTS(location, POINT(14.4 50.1))", "'location' is not the geometry of 'stations': its spatial queryable is 'geom'"),
            ("stations", "classif = ", "expected a value"),
            ("stations", "classif = 'urban' AND", "expected a property name"),
            ("stations", "(classif = 'urban'", "expected ')'"),
            ("stations", "TRUE", "TRUE or FALSE alone is not a filter here"),
            ("stations", String(repeating: "(", count: 200) + "classif = 'urban'" + String(repeating: ")", count: 200), "nested more than 64 deep"),
            ("stations", String(repeating: "NOT ", count: 100) + "classif = 'urban'", "nested more than 64 deep"),
        ]
        for (collection, filter, words) in cases {
            let answer = try await get(server, "/ogc/collections/\(collection)/items?filter=\(Self.encoded(filter))")
            #expect(answer.status == 400 && answer.json["parameter"] == .string("filter") && answer.text.contains(words), "\(filter): \(answer.text)")
        }
        let json = try await get(server, "/ogc/collections/stations/items?filter-lang=cql2-json&filter=\(Self.encoded(#"{"op":"casei","args":[{"property":"name"}]}"#))")
        #expect(json.status == 400 && json.text.contains("'casei' is not supported"))
        let lang = try await get(server, "/ogc/collections/stations/items?filter-lang=ecql&filter=x")
        #expect(lang.status == 400 && lang.text.contains("is not cql2-text or cql2-json"))
    }
}

extension CQL2Tests {
    /// docs/HTTP_API.md's CQL2 example, sent with curl as written (curl encodes the filter as a
    /// form does), answers the gorillas' pen.
    @Test func theDocumentedCurlExample() async throws {
        let document = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/HTTP_API.md"), encoding: .utf8)
        let line = try #require(document.split(separator: "\n").first { $0.hasPrefix("curl -s -G 'localhost:8080/ogc/collections/pens/items'") })
        let url = try #require(line.split(separator: "'").dropFirst().first)
        let filter = try #require(line.split(separator: "\"").dropFirst().first)
        let server = try await RunningServer.shared.value
        let (status, _, body) = try await WriteEndpointTests.curl(["-G", url.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(server.port)"),
                                                                   "--data-urlencode", String(filter)])
        #expect(status == 200, "\(body)")
        let answer = (try? JSON.parse(Array(body.utf8))) ?? .null
        #expect(answer["features"]?.items.map { $0["properties"]?["name"] } == [.string("gorily")])
    }
}
