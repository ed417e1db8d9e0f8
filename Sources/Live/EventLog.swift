// The events a hub has sent, numbered, kept in a ring for streams to read from and resume in.
//
// Numbers increase within a run and across restarts: a run starts numbering at the
// milliseconds since 2024 at its start, times 1,000, so an id from an earlier run is below every
// id of this one (unless a run made more than a million events a second), and a stream resuming
// with it is told it missed events (`missed`), as one resuming before the oldest event the ring
// still holds is. The ids stay below 2^53 until the 2300s, so JavaScript reads them exactly.

import Foundation

public struct EventLog: Sendable {
    public let capacity: Int
    private var ring: [FenceEvent] = []
    /// Where the oldest event sits in `ring` once it is full.
    private var head = 0
    /// The id the next event gets.
    public private(set) var nextID: Int64
    /// This run's first id.
    public let runStart: Int64

    public init(capacity: Int, startingAt start: Int64 = EventLog.runStart()) {
        self.capacity = max(1, capacity)
        nextID = start
        runStart = start
    }

    /// This run's first id: milliseconds since 2024-01-01 × 1,000.
    public static func runStart(now: Date = Date()) -> Int64 {
        let milliseconds = (now.timeIntervalSince1970 - 1_704_067_200) * 1000
        return Int64(max(0, min(milliseconds, 9e12)).rounded(.down)) * 1000
    }

    /// The id of the oldest event kept (nextID when none is).
    public var oldestID: Int64 { nextID - Int64(ring.count) }

    /// Numbers the event and keeps it, dropping the oldest when full.
    public mutating func append(_ event: inout FenceEvent) {
        event.id = nextID
        nextID += 1
        if ring.count < capacity {
            ring.append(event)
        } else {
            ring[head] = event
            head = (head + 1) % capacity
        }
    }

    /// The events after `id`, oldest first, at most `limit`, those of `fences` only when given.
    /// `missed` is true when events after `id` are no longer kept (or were another run's); 0
    /// asks for every event kept, and misses only what the ring dropped.
    public func events(after id: Int64, fences: Set<String>? = nil, limit: Int) -> (events: [FenceEvent], missed: Bool, last: Int64) {
        // An id this run never gave (a clock set back between runs) resumes from the oldest.
        let unknown = id >= nextID
        let missed = unknown || (id == 0 ? oldestID > runStart : id + 1 < oldestID)
        var position = unknown ? 0 : Int(max(0, min(Int64(ring.count), id + 1 - oldestID)))
        var found: [FenceEvent] = []
        var last = unknown ? oldestID - 1 : max(id, oldestID - 1)
        while position < ring.count, found.count < limit {
            let event = ring[(head + position) % ring.count]
            position += 1
            last = event.id
            if let fences, !fences.contains(event.fence) { continue }
            found.append(event)
        }
        return (found, missed, last)
    }
}
