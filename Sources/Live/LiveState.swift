// Moving objects and the fences evaluated on every update: the state a live hub keeps behind
// its lock (LiveHub.swift). One update at a time, in order: each object's events come in the
// order of its updates, which is what a receiver's per-object order rests on.
//
// Per object and per area a state: inside or not, and since when a change has been waiting for
// its dwell. Only the states that are inside or waiting are kept, so an object far from every
// fence costs its position alone. The fixed areas of every fence sit in one grid (SlotGrid.swift;
// a packed R-tree where a grid is not worth it), their boxes grown by their margin and
// hysteresis, so an update looks at the areas near it and at those it is inside, never at all.

import Foundation
import Geometry
import SpatialIndex
import Support

/// How much of an object's past positions a live layer keeps.
public enum HistoryPolicy: Sendable, Equatable {
    case none
    /// The newest N positions.
    case last(Int)
    /// The positions of the last N seconds (of the object's own update times).
    case window(seconds: Double)
}

public struct LiveLayerSettings: Sendable, Equatable {
    public var history: HistoryPolicy
    /// Seconds after its last update when an object expires, unless its update says otherwise.
    public var ttlSeconds: Double?
    /// Whether each batch's objects are kept in the store before the batch is answered, and
    /// put back where they were at the next start (the Engine does both). Memory only otherwise.
    public var durable: Bool

    public init(history: HistoryPolicy = .none, ttlSeconds: Double? = nil, durable: Bool = false) {
        self.history = history
        self.ttlSeconds = ttlSeconds
        self.durable = durable
    }
}

/// One position of one object.
public struct PositionUpdate: Sendable {
    public var id: String
    public var point: Point
    /// Seconds since 1970 (UTC).
    public var time: Double
    public var fields: JSONObject?
    /// Overrides the layer's TTL for this object; 0 keeps it forever.
    public var ttlSeconds: Double?

    public init(id: String, point: Point, time: Double, fields: JSONObject? = nil, ttlSeconds: Double? = nil) {
        self.id = id
        self.point = point
        self.time = time
        self.fields = fields
        self.ttlSeconds = ttlSeconds
    }
}

public struct Fix: Sendable, Equatable {
    public var point: Point
    public var time: Double
}

public struct LiveObject: Sendable {
    public let id: String
    /// Its number in the layer, from 1 in the order objects first came: its fid when the layer
    /// is queried as a point layer.
    public let serial: Int64
    public internal(set) var point: Point
    public internal(set) var time: Double
    public internal(set) var fields: JSONObject?
    /// When it expires (seconds since 1970), nil: never.
    public internal(set) var expires: Double?
    /// Its earlier positions, oldest first, as the layer's history policy keeps them.
    public internal(set) var history: [Fix]
    /// Per area it is inside or waiting at (the area's slot in `LiveState`).
    var states: SlotStates

    /// What holds an object's place in its layer while an update works on it (no allocation).
    static let placeholder = LiveObject(id: "", serial: 0, point: Point(lon: 0, lat: 0), time: 0, fields: nil, expires: nil, history: [], states: SlotStates())
}

/// An object's states by slot: a few at most, so a list searched in order beats a hash table.
struct SlotStates: Sendable {
    private(set) var keys: [Int] = []
    private var values: [AreaState] = []

    init() {}

    init(_ pairs: [(Int, AreaState)]) {
        for (slot, state) in pairs { self[slot] = state }
    }

    var pairs: [(Int, AreaState)] { Array(zip(keys, values)) }

    subscript(slot: Int) -> AreaState? {
        get { keys.firstIndex(of: slot).map { values[$0] } }
        set {
            if let i = keys.firstIndex(of: slot) {
                if let newValue {
                    values[i] = newValue
                } else {
                    keys.remove(at: i)
                    values.remove(at: i)
                }
            } else if let newValue {
                keys.append(slot)
                values.append(newValue)
            }
        }
    }

    subscript(slot: Int, default fallback: AreaState) -> AreaState {
        get { self[slot] ?? fallback }
        set { self[slot] = newValue }
    }
}

/// What an update of one live layer's objects looks up: the slots of the roaming fences
/// watching all of them or one of them, the slots of fences reporting `outside` (every one is
/// checked), whether a fence reports `cross`, and the roaming fences following its objects.
struct LayerPlan: Sendable {
    /// A fence watches the layer.
    var watched = false
    var roaming: [Int] = []
    var roamingByObject: [String: [Int]] = [:]
    var outside: [Int] = []
    var cross = false
    /// Roaming fences (not slots) by the object of this layer they follow.
    var following: [String: [Int]] = [:]
}

struct AreaState: Equatable {
    var inside = false
    /// When the change now waiting for its dwell first held.
    var pendingSince: Double?

    var isResting: Bool { !inside && pendingSince == nil }
}

public struct LiveLayer: Sendable {
    public let name: String
    public internal(set) var settings: LiveLayerSettings
    public internal(set) var objects: [String: LiveObject] = [:]
    /// The next object's serial number.
    var nextSerial: Int64 = 1
    /// The earliest expiry among the objects (infinity: none), so a sweep with nothing due
    /// costs one comparison.
    var earliestExpiry = Double.infinity
}

public struct LiveState: Sendable {
    public private(set) var layers: [String: LiveLayer] = [:]
    /// By name.
    public private(set) var fences: [Fence] = []
    /// Each fence's first slot: a fence of areas has one slot per area, a roaming fence one.
    private var firstSlot: [Int] = []
    /// Per slot: its fence and area.
    private var slots: [(fence: Int, area: Int)] = []
    private var areaIndex: PackedRTree?
    /// The same boxes on a grid, which an update searches instead when there is one (SlotGrid.swift).
    private var areaGrid: SlotGrid?
    /// The box of each slot in `areaIndex` (empty for roaming slots).
    private var slotBoxes: [BBox] = []
    /// Each fence's watched layer, lowercased.
    private var watchedKeys: [String] = []
    /// Per live layer (lowercased name), what its updates look up rather than walking every
    /// fence: read once per batch, so an update hashes no layer name.
    private var plans: [String: LayerPlan] = [:]
    public let limits: LiveLimits

    public init(limits: LiveLimits = LiveLimits()) {
        self.limits = limits
    }

    // MARK: - Layers

    public func layer(_ name: String) -> LiveLayer? { layers[name.lowercased()] }

    /// Declares a live layer, or changes its settings (its objects stay).
    public mutating func declare(_ name: String, settings: LiveLayerSettings) throws(LiveError) {
        let key = name.lowercased()
        if layers[key] == nil {
            guard layers.count < limits.maxLayers else {
                throw .limit("at most \(limits.maxLayers) live layers; drop one first")
            }
            layers[key] = LiveLayer(name: name, settings: settings)
        } else {
            layers[key]?.settings = settings
        }
    }

    /// Drops a live layer and its objects (no events: the layer is gone, not its objects' positions).
    public mutating func drop(_ name: String) -> Bool {
        layers.removeValue(forKey: name.lowercased()) != nil
    }

    // MARK: - Fences

    /// Replaces every fence, keeping the states of objects for fences whose name and
    /// definition did not change (`unchanged`); a new or changed fence starts with every object
    /// outside it.
    public mutating func setFences(_ fresh: [Fence], unchanged: Set<String>) throws(LiveError) {
        guard fresh.count <= limits.maxFences else { throw .limit("\(fresh.count) fences; at most \(limits.maxFences)") }
        let areaCount = fresh.reduce(0) { total, fence in
            if case .areas(let areas) = fence.target { total + areas.count } else { total + 1 }
        }
        guard areaCount <= limits.maxAreas else { throw .limit("the fences would hold \(areaCount) areas; at most \(limits.maxAreas)") }
        let sorted = fresh.sorted { $0.name < $1.name }
        var newFirst: [Int] = []
        var newSlots: [(Int, Int)] = []
        var boxes: [BBox] = []
        var newPlans: [String: LayerPlan] = [:]
        for (f, fence) in sorted.enumerated() {
            newFirst.append(newSlots.count)
            newPlans[fence.watch.layer.lowercased(), default: LayerPlan()].watched = true
            switch fence.target {
            case .areas(let areas):
                for (a, area) in areas.enumerated() {
                    newSlots.append((f, a))
                    boxes.append(area.shape.bbox.grown(metres: area.within + fence.rules.hysteresisMetres))
                }
            case .roaming(let layer, let object, _):
                newSlots.append((f, 0))
                boxes.append(.empty)
                newPlans[layer.lowercased(), default: LayerPlan()].following[object, default: []].append(f)
            }
        }
        let index: PackedRTree?
        do {
            index = boxes.contains { !$0.isEmpty } ? try PackedRTree(boxes: boxes) : nil
        } catch {
            throw .invalid("a fence's area has no finite extent")
        }
        // Old slot → new slot, for the fences that stay as they were.
        var moved: [Int: Int] = [:]
        let newByName = Dictionary(uniqueKeysWithValues: sorted.enumerated().map { ($1.name, $0) })
        for (f, fence) in fences.enumerated() where unchanged.contains(fence.name) {
            guard let g = newByName[fence.name] else { continue }
            let count = slotCount(f)
            guard count == (g + 1 < newFirst.count ? newFirst[g + 1] : newSlots.count) - newFirst[g] else { continue }
            for k in 0..<count { moved[firstSlot[f] + k] = newFirst[g] + k }
        }
        for key in layers.keys {
            for id in layers[key]!.objects.keys {
                layers[key]!.objects[id]!.states = SlotStates(layers[key]!.objects[id]!.states.pairs.compactMap { slot, state in
                    moved[slot].map { ($0, state) }
                })
            }
        }
        fences = sorted
        watchedKeys = sorted.map { $0.watch.layer.lowercased() }
        for (f, fence) in sorted.enumerated() {
            let key = watchedKeys[f]
            if case .roaming = fence.target {
                if let object = fence.watch.object {
                    newPlans[key, default: LayerPlan()].roamingByObject[object, default: []].append(newFirst[f])
                } else {
                    newPlans[key, default: LayerPlan()].roaming.append(newFirst[f])
                }
            }
            if fence.rules.detects(.outside) {
                let end = f + 1 < newFirst.count ? newFirst[f + 1] : newSlots.count
                newPlans[key, default: LayerPlan()].outside += newFirst[f]..<end
            }
            if fence.rules.detects(.cross) { newPlans[key, default: LayerPlan()].cross = true }
        }
        firstSlot = newFirst
        slots = newSlots
        slotBoxes = boxes
        areaIndex = index
        areaGrid = index == nil ? nil : SlotGrid(boxes: boxes)
        plans = newPlans
    }

    private func slotCount(_ fence: Int) -> Int {
        (fence + 1 < firstSlot.count ? firstSlot[fence + 1] : slots.count) - firstSlot[fence]
    }

    // MARK: - Updates

    /// Applies the updates in order, calling `emit` with each event as it happens. All or
    /// nothing: the batch is checked whole first (the layer exists, ids are not empty, the
    /// object limit holds).
    /// TTLs count from `now`, when the batch arrived (an update's own time may be older). An
    /// update older than the object's position is stale and left out (returned: how many), so a
    /// late fix never moves an object back or fires an event out of time order.
    public mutating func update(_ layerName: String, _ updates: [PositionUpdate], now: Double, emit: (FenceEvent) -> Void) throws(LiveError) -> Int {
        let key = layerName.lowercased()
        // Checked through the dictionary, never a copy of the layer held across the updates:
        // a copy alive while they mutate would make each of them copy every object.
        guard layers[key] != nil else { throw .notFound("no live layer named \(Quote.input(layerName))") }
        var fresh = Set<String>()
        for (n, update) in updates.enumerated() {
            guard !update.id.isEmpty, update.id.utf8.count <= 256 else {
                throw .invalid("update \(n + 1): the id must be 1 to 256 bytes")
            }
            guard update.time.isFinite else { throw .invalid("update \(n + 1): the time is not a finite number") }
            do {
                _ = try Point.checked(lon: update.point.lon, lat: update.point.lat)
            } catch {
                throw .invalid("update \(n + 1): \(error)")
            }
            if layers[key]?.objects[update.id] == nil { fresh.insert(update.id) }
        }
        let count = layers[key]?.objects.count ?? 0
        guard count + fresh.count <= limits.maxObjectsPerLayer else {
            throw .limit("the live layer \(layers[key]?.name ?? layerName) would hold \(count + fresh.count) objects; at most \(limits.maxObjectsPerLayer)")
        }
        var stale = 0
        // What stays the same through the batch, read once.
        guard let settings = layers[key]?.settings, let name = layers[key]?.name else { return 0 }
        let plan = plans[key] ?? LayerPlan()
        // One buffer for every update's candidate slots.
        var candidates: [Int] = []
        for update in updates {
            // The object found once: its time checked and, when it moves, taken out by index.
            let index = layers[key]?.objects.index(forKey: update.id)
            if let index, let current = layers[key]?.objects.values[index].time, update.time < current {
                stale += 1
                continue
            }
            apply(key, update, at: index, settings: settings, name: name, plan: plan, candidates: &candidates, now: now, emit: emit)
        }
        return stale
    }

    private mutating func apply(_ key: String, _ update: PositionUpdate, at index: Dictionary<String, LiveObject>.Index?, settings: LiveLayerSettings,
                                name: String, plan: LayerPlan, candidates: inout [Int], now: Double, emit: (FenceEvent) -> Void) {
        let ttl = update.ttlSeconds ?? settings.ttlSeconds
        let expires = ttl.flatMap { $0 > 0 ? now + $0 : nil }
        var object: LiveObject
        var previous: Point?
        if let index {
            // Swapped out of its slot, a placeholder there meanwhile, and back after: not removed
            // and inserted again (a rehash and a probe each, a tenth of an update), and no second
            // reference to its arrays that would make changing them copy them.
            object = LiveObject.placeholder
            swap(&object, &layers[key]!.objects.values[index])
            let old = Fix(point: object.point, time: object.time)
            previous = old.point
            switch settings.history {
            case .none: break
            case .last(let n):
                object.history.append(old)
                if object.history.count > n { object.history.removeFirst(object.history.count - n) }
            case .window(let seconds):
                object.history.append(old)
                if let keep = object.history.firstIndex(where: { $0.time >= update.time - seconds }) {
                    object.history.removeFirst(keep)
                } else {
                    object.history.removeAll()
                }
            }
            object.point = update.point
            object.time = update.time
            if let fields = update.fields { object.fields = fields }
            object.expires = expires
        } else {
            object = LiveObject(id: update.id, serial: layers[key]!.nextSerial, point: update.point, time: update.time, fields: update.fields,
                                expires: expires, history: [], states: SlotStates())
            layers[key]!.nextSerial += 1
        }
        if let expires { layers[key]!.earliestExpiry = min(layers[key]!.earliestExpiry, expires) }
        if plan.watched {
            evaluate(&object, layer: key, name: name, plan: plan, candidates: &candidates, previous: previous, emit: emit)
        }
        let id = object.id
        if let index {
            layers[key]!.objects.values[index] = object
        } else {
            layers[key]!.objects[id] = object
        }
        // Roaming fences that follow this object: every object they watch, against where it is now.
        if !plan.following.isEmpty, let followers = plan.following[id] {
            for f in followers { reevaluate(roaming: f, target: object, time: update.time, emit: emit) }
        }
    }

    /// Checks an object that just moved against the fences watching its layer.
    private func evaluate(_ object: inout LiveObject, layer key: String, name layerName: String?, plan: LayerPlan, candidates: inout [Int],
                          previous: Point?, emit: (FenceEvent) -> Void) {
        let p = object.point
        // The slots to look at: near the new position, the ones it is inside or waiting at,
        // those the move passed (for `cross`), every one of a fence reporting `outside`, and the
        // roaming fences watching it (the loop below checks that a fence watches the object).
        candidates.removeAll(keepingCapacity: true)
        candidates += object.states.keys
        candidates += plan.roaming
        if !plan.roamingByObject.isEmpty, let slots = plan.roamingByObject[object.id] { candidates += slots }
        candidates += plan.outside
        let wantsCross = plan.cross
        if let areaIndex {
            var box = BBox(minLon: p.lon, minLat: p.lat, maxLon: p.lon, maxLat: p.lat)
            if wantsCross, let previous { box.extend(BBox(minLon: previous.lon, minLat: previous.lat, maxLon: previous.lon, maxLat: previous.lat)) }
            if let areaGrid {
                areaGrid.search(box) { candidates.append($0) }
            } else {
                areaIndex.search(box) { candidates.append($0) }
            }
        }
        guard !candidates.isEmpty else { return }
        let cosLatitude = Geodesy.cosLatitude(p.lat)
        candidates.sort()
        var last = -1
        for slot in candidates where slot != last {
            last = slot
            let (f, a) = slots[slot]
            let fence = fences[f]
            guard watchedKeys[f] == key, fence.watch.watches(object.id, fields: object.fields) else { continue }
            switch fence.target {
            case .areas(let areas):
                let area = areas[a]
                // A move whose box misses the area's grown box changes nothing there: it stays
                // outside (unless the fence reports `outside`).
                let state = object.states[slot] ?? AreaState()
                if state.isResting && !fence.rules.detects(.outside) && !slotBoxes[slot].contains(p)
                    && !(fence.rules.detects(.cross) && previous.map { slotBoxes[slot].intersects(segmentFrom: $0, to: p) } == true) {
                    continue
                }
                // Leaving past a hysteresis needs the distance outside; nothing else does.
                let d = area.distance(p.lon, p.lat, cosLatitude: cosLatitude, exact: state.inside && fence.rules.hysteresisMetres > 0)
                var kind = step(&object.states[slot, default: AreaState()], distance: d, within: area.within, rules: fence.rules, time: object.time)
                if kind == .outside, fence.rules.detects(.cross), let previous, state.isResting, d > area.within,
                   area.distance(previous.lon, previous.lat, cosLatitude: Geodesy.cosLatitude(previous.lat), exact: false) > area.within,
                   area.meets(from: previous, to: p) {
                    kind = .cross
                }
                if object.states[slot]?.isResting == true { object.states[slot] = nil }
                if fence.rules.detects(kind) {
                    emit(FenceEvent(fence: fence.name, kind: kind.rawValue, layer: layerName, object: object.id, feature: area.feature,
                                    position: p, time: object.time))
                }
            case .roaming(let targetLayer, let targetID, let radius):
                guard let target = layers[targetLayer.lowercased()]?.objects[targetID], !(targetLayer.lowercased() == key && targetID == object.id) else {
                    continue
                }
                let d = Geodesy.distance(p, target.point)
                let kind = step(&object.states[slot, default: AreaState()], distance: d, within: radius, rules: fence.rules, time: object.time)
                if object.states[slot]?.isResting == true { object.states[slot] = nil }
                if fence.rules.detects(kind) {
                    emit(FenceEvent(fence: fence.name, kind: kind.rawValue, layer: layerName, object: object.id, near: targetID,
                                    position: p, time: object.time))
                }
            }
        }
    }

    /// The followed object of roaming fence `f` moved: every object the fence watches, checked
    /// where it is now against the target's new position, in id order.
    private mutating func reevaluate(roaming f: Int, target: LiveObject, time: Double, emit: (FenceEvent) -> Void) {
        let fence = fences[f]
        guard case .roaming(let targetLayer, _, let radius) = fence.target else { return }
        let key = watchedKeys[f]
        guard let name = layers[key]?.name else { return }
        let slot = firstSlot[f]
        let ids = fence.watch.object.map { [$0] } ?? (layers[key]?.objects.keys.sorted() ?? [])
        for id in ids {
            guard var object = layers[key]!.objects[id], fence.watch.watches(id, fields: object.fields),
                  !(targetLayer.lowercased() == key && target.id == id) else { continue }
            let d = Geodesy.distance(object.point, target.point)
            let kind = step(&object.states[slot, default: AreaState()], distance: d, within: radius, rules: fence.rules, time: time)
            if object.states[slot]?.isResting == true { object.states[slot] = nil }
            // Only changes: the watched object did not move, so `inside`/`outside` would repeat
            // what its own last update said.
            if kind == .enter || kind == .exit, fence.rules.detects(kind) {
                emit(FenceEvent(fence: fence.name, kind: kind.rawValue, layer: name, object: id, near: target.id, position: object.point, time: time))
            }
            layers[key]!.objects[id] = object
        }
    }

    /// One area's state after an update at distance `d`: the event it makes (`enter`, `exit`,
    /// or `inside`/`outside` when nothing changed).
    private func step(_ state: inout AreaState, distance d: Double, within: Double, rules: FenceRules, time: Double) -> FenceEventKind {
        let wantsChange = state.inside ? d > within + rules.hysteresisMetres : d <= within
        guard wantsChange else {
            state.pendingSince = nil
            return state.inside ? .inside : .outside
        }
        let since = state.pendingSince ?? time
        guard time - since >= rules.dwellSeconds else {
            state.pendingSince = since
            return state.inside ? .inside : .outside
        }
        state.inside.toggle()
        state.pendingSince = nil
        return state.inside ? .enter : .exit
    }

    // MARK: - Removal and expiry

    /// Removes an object, sending `exit` (with the reason) for every area it was inside.
    public mutating func remove(_ layerName: String, id: String, reason: String, time: Double, emit: (FenceEvent) -> Void) -> Bool {
        let key = layerName.lowercased()
        guard let object = layers[key]?.objects.removeValue(forKey: id) else { return false }
        let because = JSONObject([("reason", .string(reason))])
        for slot in object.states.keys.sorted() where object.states[slot]?.inside == true {
            let (f, a) = slots[slot]
            let fence = fences[f]
            guard fence.rules.detects(.exit) else { continue }
            var feature: FenceFeature?
            var near: String?
            switch fence.target {
            case .areas(let areas): feature = areas[a].feature
            case .roaming(_, let target, _): near = target
            }
            emit(FenceEvent(fence: fence.name, kind: FenceEventKind.exit.rawValue, layer: layers[key]?.name, object: id, feature: feature, near: near,
                            position: object.point, time: time, values: because))
        }
        // Objects inside a roaming fence around it are no longer near anything.
        for f in plans[key]?.following[id] ?? [] {
            let watchedKey = fences[f].watch.layer.lowercased()
            let slot = firstSlot[f]
            for watchedID in (layers[watchedKey]?.objects.keys.sorted() ?? []) where layers[watchedKey]!.objects[watchedID]!.states[slot] != nil {
                let wasInside = layers[watchedKey]!.objects[watchedID]!.states[slot]!.inside
                layers[watchedKey]!.objects[watchedID]!.states[slot] = nil
                if wasInside, fences[f].rules.detects(.exit), let watched = layers[watchedKey]?.objects[watchedID] {
                    emit(FenceEvent(fence: fences[f].name, kind: FenceEventKind.exit.rawValue, layer: layers[watchedKey]?.name, object: watchedID,
                                    near: id, position: watched.point, time: time, values: because))
                }
            }
        }
        return true
    }

    /// Removes every object whose time ran out by `now` (seconds since 1970), with their exits.
    public mutating func expire(now: Double, emit: (FenceEvent) -> Void) {
        for key in layers.keys.sorted() where layers[key]!.earliestExpiry <= now {
            let due = layers[key]!.objects.values.filter { ($0.expires ?? .infinity) <= now }.map(\.id).sorted()
            for id in due { _ = remove(key, id: id, reason: "expired", time: now, emit: emit) }
            layers[key]!.earliestExpiry = layers[key]!.objects.values.compactMap(\.expires).min() ?? .infinity
        }
    }
}

/// Bounds on what clients can make the hub hold.
public struct LiveLimits: Sendable, Equatable {
    public var maxLayers = 100
    public var maxObjectsPerLayer = 1_000_000
    public var maxFences = 10_000
    /// Areas over all fences (a fence on a layer has one per feature).
    public var maxAreas = 1_000_000
    /// Events kept for streams to resume from; older ones are gone (a stream resuming before
    /// them is told so).
    public var retainedEvents = 100_000
    public var maxUpdatesPerBatch = 10_000
    /// Events that position updates may make a second, over the process: a batch that comes
    /// while the budget is spent is refused whole (503 `too_many_events`), so a client cannot
    /// make events faster than streams and webhooks can be kept for. About three times what
    /// this machine's library path makes (283,000 a second in `vltava-bench F1`).
    public var maxEventsPerSecond = 1_000_000
    public var maxWebhooks = 100
    /// Events that exhausted their retries, kept per webhook for its owner to read.
    public var maxDeadLetters = 10_000

    public init() {}
}

/// What the hub refuses: a stable code, the engine's category, and a message naming the input.
public struct LiveError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: String
    public let category: ErrorCategory
    public let message: String

    public init(code: String, category: ErrorCategory, message: String) {
        self.code = code
        self.category = category
        self.message = message
    }

    public var description: String { message }

    public static func invalid(_ message: String, code: String = "invalid_live_input") -> LiveError {
        LiveError(code: code, category: .invalid, message: message)
    }

    public static func notFound(_ message: String, code: String = "unknown_live_layer") -> LiveError {
        LiveError(code: code, category: .notFound, message: message)
    }

    public static func limit(_ message: String) -> LiveError {
        LiveError(code: "live_limit", category: .limit, message: message)
    }
}

extension BBox {
    /// The box grown by `metres` on every side (longitude scaled at its most poleward latitude).
    func grown(metres: Double) -> BBox {
        guard metres > 0 else { return self }
        // Slightly fewer metres to the degree than the sphere has: the box errs on the large side.
        let dLat = metres / 111_000
        let cosine = cos(min(89.9, max(abs(minLat), abs(maxLat)) + dLat) * .pi / 180)
        let dLon = min(360, dLat / max(cosine, 1e-6))
        return BBox(minLon: minLon - dLon, minLat: minLat - dLat, maxLon: maxLon + dLon, maxLat: maxLat + dLat)
    }

    func contains(_ p: Point) -> Bool {
        p.lon >= minLon && p.lon <= maxLon && p.lat >= minLat && p.lat <= maxLat
    }

    func intersects(segmentFrom a: Point, to b: Point) -> Bool {
        !(max(a.lon, b.lon) < minLon || min(a.lon, b.lon) > maxLon || max(a.lat, b.lat) < minLat || min(a.lat, b.lat) > maxLat)
    }
}
