// The engine's live side: live layers and fences declared (kept in the store, under the update
// lock, as writes are), resolved against the current snapshot into the hub's areas, and
// resolved again when a write changes a layer they come from; threshold fences checked after a
// write appends observations. Positions go straight to the hub: memory, no store write, unless
// the layer is durable: then each batch's objects are kept in the store before it is answered,
// and put back at the next start.

import Foundation
import Geometry
import Live
import Store
import Support

/// The fences an engine has, resolved or not, and the threshold fences' last state.
struct FenceBook: Sendable {
    var definitions: [String: FenceDefinition] = [:]
    /// Why a fence does not run now (its layer was dropped, its live layer is gone), by name.
    var problems: [String: String] = [:]
    var thresholds: [String: ThresholdState] = [:]
    var webhooks: [String: WebhookDefinition] = [:]
}

struct ThresholdState: Sendable {
    /// The end of the newest observation checked (seconds since 1970).
    var lastEnd: Int64?
    /// Whether the condition held then: an event fires when it starts to hold.
    var holds = false
}

/// A fence as an engine lists it.
public struct FenceStatus: Sendable {
    public let definition: FenceDefinition
    /// Why it does not run now; nil when it does.
    public let problem: String?
}

extension Engine {
    // MARK: - Live layers

    /// Declares a live layer (or changes its settings), kept in the store. Its name may not be a
    /// store layer's.
    public func declareLiveLayer(_ name: String, settings: LiveLayerSettings) throws(EngineError) {
        try FenceDefinition.checkName(name, of: "live layer")
        if (try? storeSnapshot.layer(name)) != nil {
            throw .write(code: "layer_exists", category: .impossible, message: "\(Quote.input(name)) is a store layer; a live layer needs a name of its own")
        }
        try updating { (writer: any StoreWriter) throws(EngineError) in
            if settings.durable { try writer.savePositions([]) }  // refused by a store that keeps no objects
            try hub { () throws(LiveError) in try live.declare(name, settings: settings) }
            try writer.save(LiveDefinition(kind: .layer, name: name, definition: JSON.serialize(settings.json)))
            if !settings.durable { try writer.deletePositions(layer: name, id: nil) }
        }
    }

    /// Drops a live layer and its objects; false when there is none.
    public func dropLiveLayer(_ name: String) throws(EngineError) -> Bool {
        try updating { (writer: any StoreWriter) throws(EngineError) -> Bool in
            let kept = live.layer(name)?.name ?? name
            _ = try writer.deleteLiveDefinition(kind: .layer, name: kept)
            try writer.deletePositions(layer: kept, id: nil)
            return live.drop(name)
        }
    }

    /// Applies a batch of positions to a live layer (all or nothing), evaluating every fence
    /// that watches it; returns the events, numbered, and the stale positions left out. Memory
    /// only (LiveHub.swift), but on a durable layer the batch's objects are then kept in the
    /// store, in one transaction, before this returns (under the update lock, as writes are).
    @discardableResult
    public func updatePositions(_ layer: String, _ updates: [PositionUpdate]) throws(EngineError) -> PositionReceipt {
        guard let settings = live.layer(layer)?.settings, settings.durable else {
            return try hub { () throws(LiveError) in try live.update(layer, updates) }
        }
        return try updating { (writer: any StoreWriter) throws(EngineError) -> PositionReceipt in
            let receipt = try hub { () throws(LiveError) in try live.update(layer, updates) }
            let name = live.layer(layer)?.name ?? layer
            var seen = Set<String>()
            var kept: [StoredPosition] = []
            for update in updates where seen.insert(update.id).inserted {
                guard let object = live.object(name, id: update.id) else { continue }
                kept.append(StoredPosition(layer: name, id: object.id, lon: object.point.lon, lat: object.point.lat, time: object.time,
                                           fields: object.fields.map { JSON.serialize(.object($0)) }, expires: object.expires))
            }
            do throws(EngineError) {
                try writer.savePositions(kept)
            } catch {
                // Applied in memory but not kept: the client is told to send it again, which
                // changes nothing in memory (the same times) and keeps it.
                throw .write(code: "positions_not_kept", category: .unavailable,
                             message: "the positions were not kept in the store (\(error.description)); send the batch again")
            }
            return receipt
        }
    }

    /// Removes an object (its exits fire with reason `deleted`), and from the store when its
    /// layer is durable. False when there is none.
    public func removeLiveObject(_ layer: String, id: String) throws(EngineError) -> Bool {
        guard let settings = live.layer(layer)?.settings, settings.durable else { return live.remove(layer, id: id) }
        return try updating { (writer: any StoreWriter) throws(EngineError) -> Bool in
            try writer.deletePositions(layer: live.layer(layer)?.name ?? layer, id: id)
            return live.remove(layer, id: id)
        }
    }

    // MARK: - Fences

    /// Every fence, by name, with why it does not run when it does not.
    public var fences: [FenceStatus] {
        fenceBook.withLock { book in
            book.definitions.keys.sorted().compactMap { name in
                book.definitions[name].map { FenceStatus(definition: $0, problem: book.problems[name]) }
            }
        }
    }

    /// Adds or replaces a fence, kept in the store. It is resolved first (its layer's features,
    /// its reach), so a fence that cannot run is refused, not kept.
    @discardableResult
    public func putFence(_ definition: FenceDefinition) throws(EngineError) -> FenceStatus {
        try updating { (writer: any StoreWriter) throws(EngineError) -> FenceStatus in
            let current = storeSnapshot
            switch definition.rule {
            case .moving:
                _ = try resolve(definition, on: current)
            case .threshold(let threshold, _):
                _ = try reading(threshold, on: current)
            }
            let count = fenceBook.withLock { $0.definitions[definition.name] == nil ? $0.definitions.count + 1 : $0.definitions.count }
            guard count <= limits.live.maxFences else {
                throw .write(code: "live_limit", category: .limit, message: "at most \(limits.live.maxFences) fences; delete one first")
            }
            try writer.save(LiveDefinition(kind: .fence, name: definition.name, definition: JSON.serialize(definition.json)))
            fenceBook.withLock { book in
                book.definitions[definition.name] = definition
                book.thresholds[definition.name] = nil
            }
            try install(current, changed: [definition.name])
            return FenceStatus(definition: definition, problem: nil)
        }
    }

    /// Deletes a fence; false when there is none.
    public func deleteFence(_ name: String) throws(EngineError) -> Bool {
        try updating { (writer: any StoreWriter) throws(EngineError) -> Bool in
            guard fenceBook.withLock({ $0.definitions[name] != nil }) else { return false }
            _ = try writer.deleteLiveDefinition(kind: .fence, name: name)
            fenceBook.withLock { book in
                book.definitions[name] = nil
                book.problems[name] = nil
                book.thresholds[name] = nil
            }
            try install(storeSnapshot, changed: [name])
            return true
        }
    }

    // MARK: - Loading and keeping up

    /// Reads the declared live layers and fences from the store at start. A definition that no
    /// longer parses or resolves is kept, with its problem, rather than stopping the start.
    func loadLiveDefinitions() {
        guard let stored = try? source.liveDefinitions() else { return }
        for definition in stored {
            let value: JSONValue
            do {
                value = try JSON.parse(definition.definition)
            } catch {
                continue
            }
            switch definition.kind {
            case .layer:
                if let settings = try? LiveLayerSettings.parse(value) { try? live.declare(definition.name, settings: settings) }
            case .fence:
                if let fence = try? FenceDefinition.parse(name: definition.name, value) {
                    fenceBook.withLock { $0.definitions[fence.name] = fence }
                }
            case .webhook:
                if let webhook = try? WebhookDefinition.parse(name: definition.name, value) {
                    fenceBook.withLock { $0.webhooks[webhook.name] = webhook }
                }
            }
        }
        try? install(storeSnapshot, changed: [])
        // Durable layers' objects back where they were kept, each fence's state with them, and
        // no event for it. An object whose time ran out while the server was down stays out.
        let now = Date().timeIntervalSince1970
        let kept = Dictionary(grouping: (try? source.livePositions()) ?? [], by: \.layer)
        for (layer, positions) in kept where live.layer(layer)?.settings.durable == true {
            let updates = positions.compactMap { p -> PositionUpdate? in
                if let expires = p.expires, expires <= now { return nil }
                let fields: JSONObject? = if let text = p.fields, case .object(let object)? = try? JSON.parse(text) { object } else { nil }
                return PositionUpdate(id: p.id, point: Point(lon: p.lon, lat: p.lat), time: p.time, fields: fields,
                                      ttlSeconds: p.expires.map { $0 - now } ?? 0)
            }
            try? live.restore(layer, updates, now: now)
        }
    }

    /// Resolves every moving fence against `snapshot` and hands them to the hub; fences in
    /// `changed` start afresh (every object outside), the others keep their objects' states.
    /// Threshold fences not yet checked take their current state, so they fire on a change.
    func install(_ snapshot: Snapshot, changed: Set<String>) throws(EngineError) {
        let definitions = fenceBook.withLock { $0.definitions }
        var resolved: [Fence] = []
        var problems: [String: String] = [:]
        var thresholds: [String: ThresholdState] = [:]
        for (name, definition) in definitions {
            switch definition.rule {
            case .moving:
                do {
                    resolved.append(try resolve(definition, on: snapshot))
                } catch {
                    problems[name] = error.description
                }
            case .threshold(let threshold, _):
                if let reading = try? reading(threshold, on: snapshot) {
                    thresholds[name] = ThresholdState(lastEnd: reading.end, holds: holds(threshold, reading))
                } else {
                    thresholds[name] = ThresholdState()
                }
            }
        }
        try hub { () throws(LiveError) in try live.setFences(resolved, unchanged: Set(definitions.keys).subtracting(changed)) }
        fenceBook.withLock { book in
            book.problems = problems
            for (name, state) in thresholds where book.thresholds[name] == nil || changed.contains(name) { book.thresholds[name] = state }
        }
    }

    /// After a write (or a catch-up) swapped in `fresh`: fences on a changed layer are resolved
    /// again, and threshold fences are checked when observations were written.
    func liveAfterWrite(_ fresh: Snapshot, changedLayers: Set<String>) {
        let definitions = fenceBook.withLock { $0.definitions }
        guard !definitions.isEmpty else { return }
        let changed = Set(changedLayers.map { $0.lowercased() })
        let onChanged = definitions.values.filter { definition in
            if case .moving(_, .layer(let layer, _, _, _), _) = definition.rule { return changed.contains(layer.lowercased()) }
            return false
        }.map(\.name)
        if !onChanged.isEmpty { try? install(fresh, changed: Set(onChanged)) }
        guard fresh.timeSeriesByTable.keys.contains(where: { changed.contains($0.lowercased()) }) else { return }
        var events: [FenceEvent] = []
        for name in definitions.keys.sorted() {
            guard let definition = definitions[name], case .threshold(let threshold, let detect) = definition.rule,
                  let reading = try? reading(threshold, on: fresh) else { continue }
            let previous = fenceBook.withLock { $0.thresholds[name] } ?? ThresholdState()
            guard reading.end != previous.lastEnd else { continue }
            let now = holds(threshold, reading)
            fenceBook.withLock { $0.thresholds[name] = ThresholdState(lastEnd: reading.end, holds: now) }
            let kind: String? = switch (previous.holds, now) {
            case (false, true): threshold.atLeast == nil ? "rise" : "above"
            case (true, false): threshold.atLeast == nil ? nil : "below"
            default: nil
            }
            guard let kind, detect.contains(kind) else { continue }
            var values = JSONObject([("column", .string(threshold.column)), ("value", .double(reading.value)),
                                     ("station", .string(reading.code ?? "")), ("station_fid", .integer(reading.fid)),
                                     ("distance_m", .double(Rounding.metres(reading.metres))), ("observed_until", .string(UTCTime(seconds: reading.end).iso))])
            if let atLeast = threshold.atLeast { values["at_least"] = .double(atLeast) }
            if let riseBy = threshold.riseBy {
                values["rise_by"] = .double(riseBy)
                values["lowest_before"] = .double(reading.lowestBefore ?? reading.value)
                values["within_s"] = .double(threshold.withinSeconds)
            }
            events.append(FenceEvent(fence: name, kind: kind, position: threshold.place, time: Double(reading.end), values: values))
        }
        live.publish(events)
    }

    // MARK: - Resolving

    /// The fence the hub runs for a moving fence's definition, its areas taken from `snapshot`.
    func resolve(_ definition: FenceDefinition, on snapshot: Snapshot) throws(EngineError) -> Fence {
        guard case .moving(let watch, let area, let rules) = definition.rule else {
            throw FenceDefinition.invalid("\(definition.name) is a threshold fence")
        }
        guard live.layer(watch.layer) != nil else {
            throw .write(code: "unknown_live_layer", category: .notFound,
                         message: "watch.layer: no live layer named \(Quote.input(watch.layer)) (declare it first: PUT /v1/live/\(watch.layer))")
        }
        let target: FenceTarget
        switch area {
        case .circle(let centre, let radius):
            target = .areas([FenceArea(shape: .point(centre), within: radius)])
        case .shape(let shape, let within):
            target = .areas([FenceArea(shape: shape, within: within)])
        case .layer(let name, let fids, let match, let within):
            let layer = try snapshot.layer(name)
            if layer.storage.rowsInDatabase { throw .notSupportedOnPostGIS("a fence on a layer kept in the database") }
            let wanted = fids.map(Set.init)
            let matching = match.map { ($0.0, GeoJSON.attribute($0.1)) }
            var areas: [FenceArea] = []
            for i in layer.indices.sorted(by: { layer.fids[$0] < layer.fids[$1] }) {
                let fid = layer.fids[i]
                if let wanted, !wanted.contains(fid) { continue }
                let properties = layer.properties[i]
                guard matching.allSatisfy({ properties[$0.0] == $0.1 }), let geometry = layer.geometries[i] else { continue }
                let name = properties["name"]?.stringValue ?? properties["nazev"]?.stringValue
                areas.append(FenceArea(shape: geometry, within: within, feature: FenceFeature(layer: layer.name, fid: fid, name: name)))
            }
            guard !areas.isEmpty else {
                throw .write(code: "empty_fence", category: .invalid, message: "area: no feature of \(layer.name) is selected (fids, match)")
            }
            target = .areas(areas)
        case .reach(let from, let limit):
            let answer = try snapshot.isochrone(IsochroneRequest(from: from, limit: limit))
            guard let band = answer.bands.last else { throw FenceDefinition.invalid("area.reach: nothing is reached") }
            target = .areas([FenceArea(shape: band.area)])
        case .near(let layer, let object, let radius):
            guard live.layer(layer) != nil else {
                throw .write(code: "unknown_live_layer", category: .notFound, message: "area.near.layer: no live layer named \(Quote.input(layer))")
            }
            target = .roaming(layer: layer, object: object, radius: radius)
        }
        return Fence(name: definition.name, watch: watch, target: target, rules: rules)
    }

    struct ThresholdReading {
        var value: Double
        var end: Int64
        var code: String?
        var fid: Int64
        var metres: Double
        /// The lowest value of the `withinSeconds` before `end`, for a rise.
        var lowestBefore: Double?
    }

    /// The value a threshold fence watches now: the nearest station measuring its column.
    func reading(_ threshold: FenceDefinition.Threshold, on snapshot: Snapshot) throws(EngineError) -> ThresholdReading {
        let report = try snapshot.air(at: threshold.place)
        let found = report.index?.column == threshold.column ? report.index : report.pollutants.first { $0.column == threshold.column }
        guard let found else {
            throw FenceDefinition.invalid("threshold.column: no station measures \(Quote.input(threshold.column)) (columns: \(report.stations.series.columns.joined(separator: ", ")))")
        }
        var lowest: Double?
        if threshold.riseBy != nil, let code = found.code, let column = report.stations.series.columns.firstIndex(of: threshold.column) {
            let from = Double(found.end.seconds) - threshold.withinSeconds
            lowest = report.stations.series.observations(of: code)
                .filter { Double($0.end.seconds) >= from && $0.end.seconds < found.end.seconds }
                .compactMap { $0.values[column] }.min()
        }
        return ThresholdReading(value: found.value, end: found.end.seconds, code: found.code, fid: found.station.fid,
                                metres: found.station.metres ?? 0, lowestBefore: lowest)
    }

    private func holds(_ threshold: FenceDefinition.Threshold, _ reading: ThresholdReading) -> Bool {
        if let atLeast = threshold.atLeast { return reading.value >= atLeast }
        if let riseBy = threshold.riseBy, let lowest = reading.lowestBefore { return reading.value - lowest > riseBy }
        return false
    }
}

extension Engine {
    /// Runs a hub call, its error as the engine's (same code and category).
    func hub<T>(_ body: () throws(LiveError) -> T) throws(EngineError) -> T {
        do {
            return try body()
        } catch {
            throw .write(code: error.code, category: error.category, message: error.message)
        }
    }
}

extension Output {
    /// One event, as streams and webhooks send it.
    public static func fenceEvent(_ w: inout JSONWriter, _ event: FenceEvent) {
        w.beginObject()
        w.key("id"); w.integer(event.id)
        w.key("fence"); w.string(event.fence)
        w.key("event"); w.string(event.kind)
        if let layer = event.layer { w.key("layer"); w.string(layer) }
        if let object = event.object { w.key("object"); w.string(object) }
        if let feature = event.feature {
            w.key("feature")
            w.beginObject()
            w.key("layer"); w.string(feature.layer)
            w.key("fid"); w.integer(feature.fid)
            if let name = feature.name { w.key("name"); w.string(name) }
            w.endObject()
        }
        if let near = event.near { w.key("near"); w.string(near) }
        if let position = event.position {
            w.key("position")
            w.beginArray(); w.coordinate(position.lon); w.coordinate(position.lat); w.endArray()
        }
        w.key("time"); w.string(isoMilliseconds(event.time))
        if let values = event.values { w.key("values"); w.value(.object(values)) }
        w.endObject()
    }

    /// Seconds since 1970 as ISO 8601 with milliseconds, UTC.
    public static func isoMilliseconds(_ seconds: Double) -> String {
        // Outside years 0 to 9999 (a library caller's odd time) the number itself is clearer.
        guard seconds.isFinite, seconds > -62_135_596_800, seconds < 253_402_300_800 else { return "\(seconds)" }
        let whole = seconds.rounded(.down)
        let milliseconds = min(999, max(0, Int(((seconds - whole) * 1000).rounded())))
        let wholeSeconds = Int64(whole)
        let days = Int(wholeSeconds >= 0 ? wholeSeconds / 86_400 : (wholeSeconds - 86_399) / 86_400)
        let secondOfDay = Int(wholeSeconds - Int64(days) * 86_400)
        let (year, month, day) = UTCTime.civilFromDays(days)
        guard year >= 1000 else {
            return String(UTCTime(seconds: wholeSeconds).iso.dropLast()) + "." + String(milliseconds + 1000).dropFirst() + "Z"
        }
        // The digits written in place: one String, where interpolating the parts made a dozen
        // (every event of a positions answer has a time).
        return String(unsafeUninitializedCapacity: 24) { out in
            func digits(_ value: Int, _ count: Int, at start: Int) {
                var v = value
                for i in stride(from: start + count - 1, through: start, by: -1) {
                    out[i] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: v % 10)
                    v /= 10
                }
            }
            digits(year, 4, at: 0); out[4] = UInt8(ascii: "-")
            digits(month, 2, at: 5); out[7] = UInt8(ascii: "-")
            digits(day, 2, at: 8); out[10] = UInt8(ascii: "T")
            digits(secondOfDay / 3600, 2, at: 11); out[13] = UInt8(ascii: ":")
            digits(secondOfDay / 60 % 60, 2, at: 14); out[16] = UInt8(ascii: ":")
            digits(secondOfDay % 60, 2, at: 17); out[19] = UInt8(ascii: ".")
            digits(milliseconds, 3, at: 20); out[23] = UInt8(ascii: "Z")
            return 24
        }
    }
}
