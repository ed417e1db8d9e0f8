// The streaming import pipeline: records flow from the reader through the checks into the
// store one batch at a time, so an import holds a few batches, never the whole file.
//
//   reader thread ──batches──▶ checking thread ──batches──▶ the caller's thread (SQLite)
//
// Each stage runs on its own thread (two cores: parsing overlaps checking and writing), joined
// by bounded queues: a stage that runs ahead waits, so memory stays at a few batches of
// records. The checking stage owns its PROJ transformer and GEOS context (neither may be
// shared between threads); the writer owns the SQLite connection. Every record is written
// inside the one transaction of the import as soon as it passed; the all-or-nothing rule
// keeps only the problems, and a rollback when there are any.

import Foundation
import Geometry

/// What a streaming reader hands over, in the file's order.
enum ImportItem: Sendable {
    /// The records' kind and CRS: sent once, before the first record.
    case header(ImportHeader)
    /// One record, with where it comes from ("line 7") when that is not its index.
    case record(Feature, location: String?)
    /// A record the reader could not read; the import will fail, and the reader goes on to
    /// report the others.
    case problem(ImportProblem)
}

struct ImportHeader: Sendable {
    var kind: LayerInfo.Kind
    /// The CRS the coordinates are in (nil for a table).
    var sourceCRS: String?
    /// The file named no CRS and none was passed: EPSG:4326 is a guess.
    var crsAssumed: Bool = false
    var timeSeries: TimeSeriesLink?
}

/// Where a streaming reader puts its items: batched into the queue to the checking stage.
/// A reader stops early when `cancelled` (a later stage failed).
final class ImportSink: @unchecked Sendable {
    private let queue: BoundedQueue<[ImportItem]>
    private var batch: [ImportItem] = []
    private static let batchSize = 256
    /// Set by a reader that learned, after sending records, something that changes how every
    /// record is read (GeoJSON's `crs` member after its features): the import starts again.
    var restartCRS: String?

    init(queue: BoundedQueue<[ImportItem]>) {
        self.queue = queue
        batch.reserveCapacity(ImportSink.batchSize)
    }

    var cancelled: Bool { queue.isCancelled }

    func header(_ header: ImportHeader) { put(.header(header)) }
    func record(_ feature: Feature, location: String? = nil) { put(.record(feature, location: location)) }
    func problem(_ problem: ImportProblem) { put(.problem(problem)) }

    private func put(_ item: ImportItem) {
        batch.append(item)
        if batch.count >= ImportSink.batchSize { flush() }
    }

    func flush() {
        guard !batch.isEmpty else { return }
        _ = queue.put(batch)
        batch = []
        batch.reserveCapacity(ImportSink.batchSize)
    }
}

/// A queue of at most `capacity` elements between two threads. `put` waits while it is full,
/// `take` while it is empty; `close` ends the stream, `cancel` makes both sides give up.
final class BoundedQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var elements: [Element] = []
    private var head = 0
    private let capacity: Int
    private var closed = false
    private var cancelled = false

    init(capacity: Int) { self.capacity = capacity }

    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// False when the queue was cancelled (the element is dropped).
    @discardableResult
    func put(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while elements.count - head >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        elements.append(element)
        condition.broadcast()
        return true
    }

    /// The next element; nil once the queue is closed and drained, or cancelled.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == elements.count && !closed && !cancelled { condition.wait() }
        if cancelled || head == elements.count { return nil }
        let element = elements[head]
        head += 1
        if head > 64 && head * 2 > elements.count {
            elements.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return element
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        elements.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }
}

/// A thread that runs `body` once; `join` waits for it.
final class StageThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = self.done
        let thread = Thread {
            body()
            done.signal()
        }
        thread.name = name
        // The reader's and GEOS's recursion on deep geometries needs more than the 512 KiB default.
        thread.stackSize = 8 << 20
        thread.start()
    }

    func join() { done.wait() }
}

/// A value handed from one thread to another across a join (the join orders the accesses).
final class Handoff<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
