@testable import Engine
import Engine
import Foundation
import Geometry
@testable import Live
import SpatialIndex
import Store
import Support
import TestSupport
import Testing

/// Live layers and fences: the hub's rules on hand-made tracks whose events are worked out
/// here by hand (distances by the haversine written out in WriteTests), and the engine's side:
/// fences on a layer's features, kept in the store across a restart, and threshold fences on
/// the stations' series. The random-walk comparison with shapely is Tests/Clients/fences_bruteforce.py.
@Suite(.validatesStores) struct FenceTests {
    /// 1 m north of `p`, in degrees of latitude, on R = 6,371,008.8 m.
    static let metreOfLatitude = 180 / (Double.pi * 6_371_008.8)
    static let centre = Point(lon: 14.40519, lat: 50.11576)

    static func north(_ metres: Double, of p: Point = centre) -> Point {
        Point(lon: p.lon, lat: p.lat + metres * metreOfLatitude)
    }

    static func hub(_ fences: [Fence], layers: [String] = ["phones"], limits: LiveLimits = LiveLimits()) throws -> LiveHub {
        let hub = LiveHub(limits: limits)
        for layer in layers { try hub.declare(layer, settings: LiveLayerSettings(history: .last(3))) }
        try hub.setFences(fences, unchanged: [])
        return hub
    }

    static func circle(_ name: String, radius: Double, rules: FenceRules = FenceRules(), object: String? = nil) -> Fence {
        Fence(name: name, watch: FenceWatch(layer: "phones", object: object), target: .areas([FenceArea(shape: .point(centre), within: radius)]), rules: rules)
    }

    /// One object walking north through `metres` from the centre, one update a second.
    static func walk(_ hub: LiveHub, _ metres: [Double], id: String = "p", start: Double = 1_000) throws -> [String] {
        var kinds: [String] = []
        for (n, m) in metres.enumerated() {
            kinds += try hub.update("phones", [PositionUpdate(id: id, point: north(m), time: start + Double(n))], now: start).events.map(\.kind)
        }
        return kinds
    }

    @Test func aCircleFiresEnterAndExitOnceEach() throws {
        let hub = try Self.hub([Self.circle("c", radius: 50, rules: FenceRules(detect: [.enter, .exit, .inside]))])
        #expect(try Self.walk(hub, [120, 80, 49, 10, 49.9, 50.1, 200]) == ["enter", "inside", "inside", "exit"])
        let events = hub.events(after: 0, limit: 100).events
        #expect(events.map(\.object) == ["p", "p", "p", "p"])
        #expect(events.map(\.time) == [1002, 1003, 1004, 1005])
        // Numbered in order, one apart.
        #expect(zip(events, events.dropFirst()).allSatisfy { $1.id == $0.id + 1 })
    }

    @Test func hysteresisKeepsJitterAtTheEdgeFromFlapping() throws {
        let jitter: [Double] = [60, 48, 52, 47, 55, 49, 58, 45, 51, 80]
        let plain = try Self.hub([Self.circle("c", radius: 50)])
        #expect(try Self.walk(plain, jitter) == ["enter", "exit", "enter", "exit", "enter", "exit", "enter", "exit"])
        // 10 m: leaving needs more than 60 m from the centre, reached only at the end.
        let steady = try Self.hub([Self.circle("c", radius: 50, rules: FenceRules(hysteresisMetres: 10))])
        #expect(try Self.walk(steady, jitter) == ["enter", "exit"])
        #expect(steady.events(after: 0, limit: 10).events.map(\.time) == [1001, 1009])
    }

    @Test func dwellWaitsUntilTheChangeHasHeld() throws {
        let hub = try Self.hub([Self.circle("c", radius: 50, rules: FenceRules(dwellSeconds: 3))])
        // In for 2 s (t 1001–1002), out, then in from t 1004: enter at 1007, 3 s after it held.
        // Out from 1009: exit at 1012.
        let track: [Double] = [90, 10, 10, 90, 10, 10, 10, 10, 10, 90, 90, 90, 90]
        #expect(try Self.walk(hub, track) == ["enter", "exit"])
        #expect(hub.events(after: 0, limit: 10).events.map(\.time) == [1007, 1012])
    }

    @Test func crossFiresWhenAMovePassesThroughWithBothEndsOutside() throws {
        let rules = FenceRules(detect: [.enter, .exit, .cross])
        // 150 m north-east of the circle, apart from it.
        let square = Polygon(coordinates: [14.407, 50.117, 14.408, 50.117, 14.408, 50.118, 14.407, 50.118, 14.407, 50.117], ringOffsets: [0, 5])
        let fences = [Self.circle("a-circle", radius: 30, rules: rules),
                      Fence(name: "b-square", watch: FenceWatch(layer: "phones"), target: .areas([FenceArea(shape: .polygon(square))]), rules: rules)]
        let hub = try Self.hub(fences)
        func at(_ lon: Double, _ lat: Double, _ t: Double) throws -> [String] {
            try hub.update("phones", [PositionUpdate(id: "p", point: Point(lon: lon, lat: lat), time: t)], now: t).events.map { "\($0.fence) \($0.kind)" }
        }
        let west0 = try at(14.4065, 50.1175, 1)
        #expect(west0 == [])              // west of the square
        let east0 = try at(14.4085, 50.1175, 2)
        #expect(east0 == ["b-square cross"])  // east of it: passed through
        #expect(try at(14.4085, 50.1140, 3) == [])                // south, passing 40 m from the circle
        // Across the circle's centre, 60 m either side: both ends outside it.
        let west = Point(lon: Self.centre.lon - 60 * Self.metreOfLatitude / cos(Self.centre.lat * .pi / 180), lat: Self.centre.lat)
        let east = Point(lon: Self.centre.lon + 60 * Self.metreOfLatitude / cos(Self.centre.lat * .pi / 180), lat: Self.centre.lat)
        let westOfCircle = try at(west.lon, west.lat, 4)
        #expect(westOfCircle == [])
        let eastOfCircle = try at(east.lon, east.lat, 5)
        #expect(eastOfCircle == ["a-circle cross"])
        // Into the square is an enter, not a cross.
        #expect(try at(14.4075, 50.1175, 6) == ["b-square enter"])
    }

    @Test func aRoamingFenceFollowsTheOtherObject() throws {
        let fence = Fence(name: "friends", watch: FenceWatch(layer: "phones", object: "a"),
                          target: .roaming(layer: "phones", object: "b", radius: 40), rules: FenceRules())
        let hub = try Self.hub([fence])
        func move(_ id: String, _ metres: Double, _ t: Double) throws -> [String] {
            try hub.update("phones", [PositionUpdate(id: id, point: Self.north(metres), time: t)], now: t).events.map { "\($0.object ?? "") \($0.kind) near \($0.near ?? "")" }
        }
        #expect(try move("a", 0, 1) == [])                 // b not there yet
        #expect(try move("b", 100, 2) == [])
        #expect(try move("b", 30, 3) == ["a enter near b"])  // b came to a
        #expect(try move("a", 20, 4) == [])                 // still 10 m apart
        #expect(try move("b", 200, 5) == ["a exit near b"])
        #expect(try move("b", 55, 6) == ["a enter near b"])
        // b leaves for good: a's exit, with the reason.
        #expect(hub.remove("phones", id: "b", now: 7))
        let last = try #require(hub.events(after: 0, limit: 10).events.last)
        #expect(last.kind == "exit" && last.object == "a" && last.values?["reason"] == .string("deleted"))
    }

    @Test func objectsExpireWithTheirExitsAndKeepTheirHistory() throws {
        let hub = try Self.hub([Self.circle("c", radius: 50)])
        try hub.declare("phones", settings: LiveLayerSettings(history: .last(2), ttlSeconds: 60))
        for (n, metres) in [200.0, 150, 100, 10].enumerated() {
            try hub.update("phones", [PositionUpdate(id: "p", point: Self.north(metres), time: 100 + Double(n))], now: 100)
        }
        let object = try #require(hub.object("phones", id: "p"))
        #expect(object.history.map(\.time) == [101, 102])
        #expect(object.expires == 160)
        #expect(hub.expire(now: 159.9).isEmpty)
        let exits = hub.expire(now: 160)
        #expect(exits.map(\.kind) == ["exit"] && exits.first?.values?["reason"] == .string("expired"))
        #expect(hub.object("phones", id: "p") == nil)
    }

    @Test func aBatchIsAllOrNothingAndBounded() throws {
        var limits = LiveLimits()
        limits.maxObjectsPerLayer = 3
        let hub = try Self.hub([Self.circle("c", radius: 50)], limits: limits)
        let good = PositionUpdate(id: "a", point: Self.centre, time: 1)
        #expect(throws: LiveError.invalid("update 2: the id must be 1 to 256 bytes")) {
            try hub.update("phones", [good, PositionUpdate(id: "", point: Self.centre, time: 1)])
        }
        #expect(hub.object("phones", id: "a") == nil)
        #expect(hub.events(after: 0, limit: 10).events.isEmpty)
        let four = (1...4).map { PositionUpdate(id: "o\($0)", point: Self.centre, time: 1) }
        #expect(throws: LiveError.limit("the live layer phones would hold 4 objects; at most 3")) { try hub.update("phones", four) }
        #expect(throws: LiveError.notFound("no live layer named 'cars'")) { try hub.update("cars", [good]) }
        // A library caller's NaN or out-of-range position is refused, naming the update.
        for bad in [Point(lon: .nan, lat: 50), Point(lon: 14, lat: 91)] {
            #expect { try hub.update("phones", [good, PositionUpdate(id: "x", point: bad, time: 1)]) } throws: { error in
                (error as? LiveError)?.category == .invalid && (error as? LiveError)?.message.hasPrefix("update 2: ") == true
            }
        }
        // A late fix (older than the object's position) is left out: no move back, no event.
        let inside = try hub.update("phones", [PositionUpdate(id: "a", point: Self.centre, time: 5)])
        let late = try hub.update("phones", [PositionUpdate(id: "a", point: Self.north(500), time: 3), PositionUpdate(id: "a", point: Self.north(10), time: 6)])
        #expect(inside.events.map(\.kind) == ["enter"] && inside.stale == 0)
        #expect(late.events.isEmpty && late.stale == 1)
        #expect(hub.object("phones", id: "a")?.time == 6 && hub.object("phones", id: "a")?.history.map(\.time) == [5])
    }

    /// Events a second are bounded: a batch that comes while the budget is spent is refused
    /// whole (nothing moves, no event), and let in again once the budget has refilled.
    @Test func eventsASecondAreBounded() throws {
        var limits = LiveLimits()
        limits.maxEventsPerSecond = 20
        let hub = try Self.hub([Self.circle("c", radius: 50)], limits: limits)
        // 30 objects entering: the budget of 20 is positive, so the batch goes in and overdraws it.
        let first = try hub.update("phones", (0..<30).map { PositionUpdate(id: "o\($0)", point: Self.centre, time: 1) })
        #expect(first.events.count == 30)
        let refused = #expect(throws: LiveError.self) {
            try hub.update("phones", [PositionUpdate(id: "o0", point: Self.north(500), time: 2)])
        }
        #expect(refused?.code == "too_many_events" && refused?.category == .unavailable)
        #expect(refused?.message.hasPrefix("position updates made more than 20 fence events a second; nothing of this batch was applied: send it again in ") == true, "\(String(describing: refused))")
        #expect(hub.object("phones", id: "o0")?.time == 1 && hub.events(after: 0, limit: 100).events.count == 30)
        // 30 − 20 = 10 over: after half a second (10 refilled) it is still spent; after 0.6 s it is not.
        Thread.sleep(forTimeInterval: 0.6)
        let later = try hub.update("phones", [PositionUpdate(id: "o0", point: Self.north(500), time: 2)])
        #expect(later.events.map(\.kind) == ["exit"])
    }

    @Test func theEventLogResumesAndSaysWhatWasMissed() {
        var log = EventLog(capacity: 3, startingAt: 1_000)
        for n in 0..<5 {
            var event = FenceEvent(fence: n % 2 == 0 ? "even" : "odd", kind: "enter", time: Double(n))
            log.append(&event)
        }
        // 1000 and 1001 were dropped: the ring holds 1002–1004.
        let all = log.events(after: 0, limit: 10)
        #expect(all.events.map(\.id) == [1002, 1003, 1004] && all.missed && all.last == 1004)
        let resumed = log.events(after: 1002, limit: 10)
        #expect(resumed.events.map(\.id) == [1003, 1004] && !resumed.missed)
        let even = log.events(after: 1002, fences: ["even"], limit: 10)
        #expect(even.events.map(\.id) == [1004] && even.last == 1004)
        // An id of an earlier run (below this run's first) missed events; one never given resumes from the oldest.
        #expect(log.events(after: 500, limit: 10).missed)
        #expect(log.events(after: 9_999, limit: 10).events.map(\.id) == [1002, 1003, 1004])
    }

    /// The grid an update searches finds the slots the R-tree finds (each at least once).
    @Test func theSlotGridFindsWhatTheRTreeFinds() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let count = [1, 5, 200, 600][round % 4]
            let boxes: [BBox] = (0..<count).map { i in
                if i % 17 == 3 { return .empty }
                let lon = 14.40 + Double.random(in: 0..<0.01, using: &generator), lat = 50.11 + Double.random(in: 0..<0.01, using: &generator)
                let w = Double.random(in: 0..<0.002, using: &generator) * (i % 5 == 0 ? 4 : 1), h = Double.random(in: 0..<0.002, using: &generator)
                return BBox(minLon: lon, minLat: lat, maxLon: lon + w, maxLat: lat + h)
            }
            let tree = try PackedRTree(boxes: boxes)
            guard let grid = SlotGrid(boxes: boxes) else { continue }
            for _ in 0..<200 {
                let lon = 14.398 + Double.random(in: 0..<0.014, using: &generator), lat = 50.108 + Double.random(in: 0..<0.014, using: &generator)
                var query = BBox(minLon: lon, minLat: lat, maxLon: lon, maxLat: lat)
                if Bool.random(using: &generator) { query.extend(BBox(minLon: lon + 0.0004, minLat: lat - 0.0003, maxLon: lon + 0.0004, maxLat: lat - 0.0003)) }
                var found = Set<Int>()
                grid.search(query) { found.insert($0) }
                #expect(found == Set(tree.search(query)))
            }
        }
    }

    /// Events' times are written digit by digit; the same text as the parts put together.
    @Test func eventTimesKeepTheirFormat() {
        for seconds in [0, 0.0004, 0.9996, 1_782_000_000.123, 1_782_000_059.9999, 951_782_400.5, -1.25, -86_400.001, 253_402_300_799.0, -62_135_596_799.0] {
            let whole = seconds.rounded(.down)
            let milliseconds = min(999, max(0, Int(((seconds - whole) * 1000).rounded())))
            let expected = String(UTCTime(seconds: Int64(whole)).iso.dropLast()) + "." + String(milliseconds + 1000).dropFirst() + "Z"
            #expect(Output.isoMilliseconds(seconds) == expected, "\(seconds)")
        }
        #expect(Output.isoMilliseconds(.nan) == "nan")
    }

    // MARK: - The engine

    @Test func fencesOnAStoreLayerSurviveARestart() throws {
        let path = try WriteTests.demoCopy("fences-restart")
        do {
            let engine = try Engine(storePath: path)
            try engine.declareLiveLayer("visitors", settings: LiveLayerSettings(history: .last(5), ttlSeconds: 600))
            let definition = try FenceDefinition.parse(name: "gorillas", try JSON.parse("""
                {"watch": {"layer": "visitors"}, "area": {"layer": "pens", "match": {"name": "gorily"}, "within_m": 50}, "hysteresis_m": 10}
                """))
            try engine.putFence(definition)
            let events = try engine.updatePositions("visitors", [PositionUpdate(id: "phone", point: Self.north(30), time: 1)]).events
            #expect(events.map(\.kind) == ["enter"])
            #expect(events.first?.feature == FenceFeature(layer: "pens", fid: 4_791_797_957, name: "gorily"))
        }
        // A new process on the same store: the layer and the fence are there (the positions are not).
        let engine = try Engine(storePath: path)
        #expect(engine.live.layer("visitors")?.settings == LiveLayerSettings(history: .last(5), ttlSeconds: 600))
        #expect(engine.fences.map(\.definition.name) == ["gorillas"] && engine.fences.first?.problem == nil)
        #expect(try engine.updatePositions("visitors", [PositionUpdate(id: "phone", point: Self.north(45), time: 2)]).events.map(\.kind) == ["enter"])
        #expect(try engine.deleteFence("gorillas"))
        #expect(try Engine(storePath: path).fences.isEmpty)
    }

    /// A live layer answers the snapshot's operations as a point layer, as of the last update,
    /// and a store write in between neither loses it nor writes it to the store.
    @Test func liveLayersAnswerAsPointLayers() throws {
        let engine = try Engine(storePath: try WriteTests.demoCopy("fences-live-layer"))
        try engine.declareLiveLayer("visitors", settings: LiveLayerSettings())
        try engine.updatePositions("visitors", [PositionUpdate(id: "far", point: Self.north(300), time: 1, fields: JSONObject([("group", .string("B"))])),
                                                PositionUpdate(id: "near", point: Self.north(20), time: 1)])
        var layer = try engine.snapshot.layer("visitors")
        #expect(layer.family == .points && layer.count == 2)
        let nearest = try engine.snapshot.nearest(layer, to: Self.centre, k: 2)
        #expect(nearest.map(\.fid) == [2, 1])
        #expect(abs((nearest.first?.metres ?? 0) - WriteTests.haversine(Self.centre, Self.north(20))) < 1e-6)
        #expect(layer.properties[0]["id"] == .text("far") && layer.properties[0]["fields"] == .json(#"{"group":"B"}"#))
        // The far one comes nearer: the next read sees it.
        try engine.updatePositions("visitors", [PositionUpdate(id: "far", point: Self.north(5), time: 2)])
        layer = try engine.snapshot.layer("visitors")
        #expect(try engine.snapshot.nearest(layer, to: Self.centre, k: 1).map(\.fid) == [1])
        // A store write: the live layer stays beside the written one, and is not in the store.
        try engine.write(WriteBatch([.change(layer: "stations", .delete(fid: 1))]))
        #expect(try engine.snapshot.layer("visitors").count == 2)
        #expect(try Snapshot.load(storePath: engine.storePath).layerNames.contains("visitors") == false)
    }

    /// A reach fence is the isochrone's area: a phone at a pen inside the 3 minutes' walk enters,
    /// one past it does not; a watch's `match` picks the objects by their fields.
    @Test func aReachFenceAndAWatchThatMatchesFields() throws {
        let engine = try Engine(storePath: try WriteTests.demoCopy("fences-reach"))
        try engine.declareLiveLayer("visitors", settings: LiveLayerSettings())
        try engine.putFence(try FenceDefinition.parse(name: "reach", try JSON.parse(
            #"{"watch": {"layer": "visitors", "match": {"group": "A"}}, "area": {"reach": {"from": [14.40519, 50.11576], "minutes": 3}}}"#)))
        let area = try #require(try engine.snapshot.isochrone(IsochroneRequest(from: Self.centre, limit: .seconds(180))).bands.last?.area)
        // The pens inside the area and outside it, by the area itself.
        let pens = try engine.snapshot.layer("pens")
        let inside = try #require(pens.indices.first { i in pens.geometries[i].map { if case .point(let p) = $0 { area.contains(lon: p.lon, lat: p.lat) && Geodesy.distance(p, Self.centre) > 50 } else { false } } ?? false })
        let outside = try #require(pens.indices.first { i in pens.geometries[i].map { if case .point(let p) = $0 { !area.contains(lon: p.lon, lat: p.lat) } else { false } } ?? false })
        func point(_ i: Int) -> Point { if case .point(let p)? = pens.geometries[i] { p } else { Self.centre } }
        let a = JSONObject([("group", .string("A"))]), b = JSONObject([("group", .string("B"))])
        let first = try engine.updatePositions("visitors", [PositionUpdate(id: "a1", point: point(outside), time: 1, fields: a),
                                                            PositionUpdate(id: "b1", point: point(inside), time: 1, fields: b),
                                                            PositionUpdate(id: "a1", point: point(inside), time: 2)])
        // b1 is not watched; a1 keeps its fields (an update without fields leaves them) and enters.
        #expect(first.events.map { "\($0.object ?? "") \($0.kind)" } == ["a1 enter"])
    }

    @Test func fenceDefinitionsAreCheckedWithClearErrors() throws {
        func problem(_ json: String, name: String = "f") -> String {
            do {
                _ = try FenceDefinition.parse(name: name, try JSON.parse(json))
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(problem(#"{"watch": {"layer": "v"}, "area": {"point": [14.4, 50.1]}}"#) == "area.radius_m: missing")
        #expect(problem(#"{"watch": {"layer": "v"}, "area": {"point": [14.4, 95], "radius_m": 5}}"#).hasPrefix("area.point: "))
        #expect(problem(#"{"watch": {"layer": "v"}, "area": {"point": [14.4, 50.1], "radius_m": 5}, "dwel_s": 3}"#)
                    == "unknown member 'dwel_s'; a fence has area, detect, dwell_s, hysteresis_m, threshold, watch")
        #expect(problem(#"{"watch": {"layer": "v"}, "area": {"point": [14.4, 50.1], "radius_m": 5}, "detect": ["arrive"]}"#)
                    == "detect: '\"arrive\"' is not one of enter, exit, inside, outside, cross")
        #expect(problem(#"{"watch": {"layer": "v"}, "area": {"point": [14.4, 50.1], "radius_m": 1e7}}"#) == "area.radius_m: expected a number from 0 to 1,000,000")
        #expect(problem(#"{"threshold": {"place": [14.4, 50.1], "column": "aqi"}}"#) == "threshold: give at_least or rise_by (one of them)")
        #expect(problem(#"{"watch": {"layer": "v"}, "area": {"point": [14.4, 50.1], "radius_m": 5}}"#, name: "a b") .hasPrefix("fence name 'a b': "))

        let engine = try Engine(storePath: try WriteTests.demoCopy("fences-errors"))
        let unknownLayer = try FenceDefinition.parse(name: "f", try JSON.parse(#"{"watch": {"layer": "visitors"}, "area": {"point": [14.4, 50.1], "radius_m": 5}}"#))
        #expect(throws: EngineError.write(code: "unknown_live_layer", category: .notFound,
                                          message: "watch.layer: no live layer named 'visitors' (declare it first: PUT /v1/live/visitors)")) {
            try engine.putFence(unknownLayer)
        }
        #expect(throws: EngineError.write(code: "layer_exists", category: .impossible, message: "'pens' is a store layer; a live layer needs a name of its own")) {
            try engine.declareLiveLayer("pens", settings: LiveLayerSettings())
        }
        #expect(engine.fences.isEmpty)
    }

    /// The air-quality story: two favourite places, an hourly batch in which AREPA's index goes
    /// to 4 (poor): one event, for the place whose nearest index station is AREPA, with the values.
    @Test func aThresholdFenceFiresWhenTheAirGetsWorse() throws {
        let engine = try Engine(storePath: try WriteTests.demoCopy("fences-threshold"))
        let oldTown = Point(lon: 14.4208, lat: 50.0875), chodov = Point(lon: 14.5050, lat: 50.0320)
        let near = try #require(engine.snapshot.air(at: oldTown).index)
        #expect(near.code == "AREPA" && near.value < 4)
        #expect(try engine.snapshot.air(at: chodov).index?.code != "AREPA")
        for (name, place) in [("old-town", oldTown), ("chodov", chodov)] {
            try engine.putFence(try FenceDefinition.parse(name: name, try JSON.parse(
                #"{"threshold": {"place": [\#(place.lon), \#(place.lat)], "column": "aqi", "at_least": 4}}"#)))
        }
        let stations = try engine.snapshot.layer("stations")
        let link = try #require(try engine.snapshot.layer("observations").info.timeSeries)
        let csv = """
            code,name,classif,owner,latitude,longitude,datefromutc,datetoutc,aqi,aqidescription,no2,o3,pm10,pm10_24,pm2_5,so2,co
            AREPA,Praha 1-n. Republiky,urban,CHMI,50.088066,14.42922,2019-04-16 21:00:00.0 UTC,2019-04-16 22:00:00.0 UTC,4,poor,71.4,0,58,34.1,0,0,0
            ACHOA,Praha 4-Chodov,urban,CHMI,50.03017,14.51745,2019-04-16 21:00:00.0 UTC,2019-04-16 22:00:00.0 UTC,2,good,30.1,0,20,25.9,0,0,0

            """
        let keys = Set(stations.indices.compactMap { stations.properties[$0][link.layerKeyColumn]?.stringValue })
        let rows = try TimeSeriesRows.fromCSV(Array(csv.utf8), link: link, keyLayer: stations.info, keys: keys)
        let before = engine.live.lastEventID
        try engine.write(WriteBatch(TimeSeriesRows.operations(rows, into: "observations", link: link)))
        let events = engine.live.events(after: before, limit: 10).events
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.fence == "old-town" && event.kind == "above")
        #expect(event.values?["station"] == .string("AREPA") && event.values?["value"] == .double(4) && event.values?["at_least"] == .double(4))
        #expect(event.values?["observed_until"] == .string("2019-04-16T22:00:00Z"))
        // The same hour again changes nothing: no second event.
        try engine.write(WriteBatch(TimeSeriesRows.operations(rows, into: "observations", link: link)))
        #expect(engine.live.events(after: before, limit: 10).events.count == 1)
    }
}

/// A durable live layer (`"durable": true`): each batch's objects are kept in the store before
/// it is answered, and a new engine on the store (a restart, or a start after `kill -9`) puts
/// them back with their fence states and no event; a memory layer's objects are gone.
@Suite(.validatesStores) struct DurableLiveLayerTests {
    @Test func objectsComeBackAfterARestartWithTheirFenceStates() throws {
        let path = try Fixtures.temporaryDirectory("durable-live").appendingPathComponent("live.gpkg").path
        try DemoFixtureStore.build(at: path)
        let fence = try JSON.parse(#"{"watch": {"layer": "keepers"}, "area": {"point": [14.40519, 50.11576], "radius_m": 50}}"#)
        var sent = 0.0, answered = 0.0
        do {
            let engine = try Engine(storePath: path)
            try engine.declareLiveLayer("keepers", settings: LiveLayerSettings.parse(try JSON.parse(#"{"durable": true, "ttl_s": 3600}"#)))
            try engine.declareLiveLayer("visitors", settings: LiveLayerSettings())
            try engine.putFence(FenceDefinition.parse(name: "pen", fence))
            try engine.putFence(FenceDefinition.parse(name: "pen-visitors", try JSON.parse(#"{"watch": {"layer": "visitors"}, "area": {"point": [14.40519, 50.11576], "radius_m": 50}}"#)))
            sent = Date().timeIntervalSince1970
            let inside = try engine.updatePositions("keepers", [
                PositionUpdate(id: "k1", point: FenceTests.centre, time: 100, fields: JSONObject([("shift", .string("morning"))])),
                PositionUpdate(id: "k2", point: FenceTests.north(500), time: 100),
            ])
            answered = Date().timeIntervalSince1970
            #expect(inside.events.map { "\($0.fence) \($0.kind) \($0.object ?? "")" } == ["pen enter k1"])
            _ = try engine.updatePositions("visitors", [PositionUpdate(id: "v1", point: FenceTests.centre, time: 100)])
            #expect(try engine.removeLiveObject("keepers", id: "k2"))
        }
        // What the store keeps: k1 alone (k2 was removed), with its fields and expiry.
        let kept = try GeoPackage(path: path).livePositions()
        #expect(kept.map(\.id) == ["k1"] && kept.first?.fields == #"{"shift":"morning"}"# && kept.first?.time == 100)
        // The TTL counts from when the batch arrived: between sending and the answer, plus an hour.
        #expect(kept.first?.expires.map { $0 >= sent + 3600 && $0 <= answered + 3600 } == true)

        let restarted = try Engine(storePath: path)
        let k1 = try #require(restarted.live.object("keepers", id: "k1"))
        #expect(k1.point == FenceTests.centre && k1.time == 100 && k1.fields?["shift"] == .string("morning"))
        #expect(restarted.live.object("keepers", id: "k2") == nil && restarted.live.object("visitors", id: "v1") == nil)
        #expect(restarted.live.events(after: 0, limit: 10).events.isEmpty)
        // Inside still: moving out fires exit, not a second enter.
        let out = try restarted.updatePositions("keepers", [PositionUpdate(id: "k1", point: FenceTests.north(500), time: 200)])
        #expect(out.events.map { "\($0.fence) \($0.kind)" } == ["pen exit"])
        #expect(try GeoPackage(path: path).livePositions().map(\.lat) == [FenceTests.north(500).lat])
        // Made a memory layer again: its kept objects are forgotten.
        try restarted.declareLiveLayer("keepers", settings: LiveLayerSettings())
        #expect(try GeoPackage(path: path).livePositions().isEmpty)
    }
}
