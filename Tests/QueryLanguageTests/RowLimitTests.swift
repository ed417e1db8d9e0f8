import Engine
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// Issue 19, item 5: every form of FIND and TILE keeps the row limit with an error, never a
/// silent cut, and LIMIT asks for fewer rows in each of them.
@Suite(.validatesStores) struct RowLimitTests {
    /// The demo store with an answer limit of 1,000 rows; the parking layer has 1,548 zones.
    static func small() throws -> Snapshot { try QueryStore.smallLimits.get() }

    @Test func withinPastTheLimitIsAnError() throws {
        // Every parking zone lies within 50 km of the Old Town: 1,548 rows against 1,000. WITHIN
        // used to be NEAREST with k = 10,000 and cut the answer there without a word.
        let statement = "FIND parking WITHIN 50 km OF POINT(14.4208 50.0880) RETURN fid"
        let snapshot = try Self.small()
        do throws(QueryError) {
            _ = try Query.run(statement, on: snapshot)
            Issue.record("no error for \(statement)")
        } catch {
            #expect(error.code == "too_many_rows")
            #expect(error.kind == .limit)
            #expect(error.message == "the answer has more than 1000 rows, more than the limit of 1000")
            #expect(error.hint == "add LIMIT n or narrow the WHERE")
        }
    }

    @Test func withinWithLimitGivesTheNearest() throws {
        let snapshot = try Self.small()
        let results: [QueryResult] = try Query.run("FIND parking WITHIN 50 km OF POINT(14.4208 50.0880) LIMIT 5 RETURN fid, distance_m", on: snapshot)
        let limited = try #require(results.first)
        // The same five as the engine's nearest search (brute-force checked in EngineTests).
        let nearest = try snapshot.nearest(snapshot.layer("parking"), to: Point(lon: 14.4208, lat: 50.0880), k: 5)
        guard case .object(let answer) = limited.json(), case .array(let rows)? = answer["rows"] else { Issue.record("no rows"); return }
        let fids: [Double?] = rows.map { row in if case .object(let o) = row { o["fid"]?.number } else { nil } }
        let metres: [Double?] = rows.map { row in if case .object(let o) = row { o["distance_m"]?.number } else { nil } }
        #expect(fids == nearest.map { Double($0.fid) })
        #expect(metres == nearest.map { Rounding.metres($0.metres ?? -1) })
    }

    @Test func limitInFindOfATileSet() throws {
        let snapshot = try QueryStore.get()
        let statement = "FIND * OF zoo_map AT POINT(14.404891 50.115400) ZOOM 16 WHERE kind = 'building' RETURN layer, type, name"
        // Two features there (docs/QUERY_LANGUAGE.md): LIMIT 1 keeps the first, which LIMIT used
        // to ignore.
        let all: [QueryResult] = try Query.run(statement, on: snapshot)
        #expect(all.first?.count == 2)
        let limited: [QueryResult] = try Query.run(statement + " LIMIT 1", on: snapshot)
        let one = try #require(limited.first)
        #expect(one.count == 1)
        guard case .object(let answer) = one.json(), case .array(let rows)? = answer["rows"] else { Issue.record("no rows"); return }
        guard case .object(let first)? = rows.first else { Issue.record("no row"); return }
        #expect(first["type"] == .string("Polygon"))
    }

    @Test func limitInTile() throws {
        let snapshot = try QueryStore.get()
        let statement = "TILE 16/35388/22194 OF zoo_map LAYER pois WHERE kind IN ('toilets', 'tram_stop', 'bus_stop')"
        let all: [QueryResult] = try Query.run(statement + " RETURN kind", on: snapshot)
        #expect(all.first?.count == 4)
        let two: [QueryResult] = try Query.run(statement + " LIMIT 2 RETURN kind, name", on: snapshot)
        #expect(two.first?.count == 2)
    }
}
