// When a request's work must stop, shared by every module that runs long loops: the Engine's
// operations check it (`Deadline.check`, which throws the Engine's `deadlineExceeded`), and
// Routing's searches ask `hasPassed` through their `shouldStop`.

import Dispatch
import Synchronization

/// A request's client has gone (or its caller gave up): set once, from any thread, and read by
/// the work as part of its deadline. The server sets it when the connection's input closes, so
/// work for a client that left stops at the next check instead of running to its end.
public final class Cancellation: Sendable, Equatable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func cancel() { flag.store(true, ordering: .relaxed) }

    public var isCancelled: Bool { flag.load(ordering: .relaxed) }

    public static func == (a: Cancellation, b: Cancellation) -> Bool { a === b }
}

/// When a request's work must stop: a moment on the monotonic clock, or sooner if its
/// `Cancellation` is set (the client left: its time is up too). Every operation that can run
/// long takes one and checks it in its loops; the one error for both is `deadlineExceeded`
/// (a client that left never reads it).
public struct Deadline: Sendable, Equatable {
    /// `DispatchTime.uptimeNanoseconds` of the end; `UInt64.max` for none.
    public let end: UInt64
    /// The allowance it was made with, for the error message.
    public let seconds: Double
    /// Ends the work early when set.
    public let cancellation: Cancellation?

    /// No deadline: the CLI and the library unless they ask for one.
    public static let none = Deadline(end: .max, seconds: .infinity, cancellation: nil)

    init(end: UInt64, seconds: Double, cancellation: Cancellation?) {
        self.end = end
        self.seconds = seconds
        self.cancellation = cancellation
    }

    /// `seconds` from now (0 or less: already passed; NaN counts as 0; +∞: no time bound), and
    /// sooner once `cancellation` is set.
    public static func after(seconds: Double, cancellation: Cancellation? = nil) -> Deadline {
        if seconds == .infinity { return Deadline(end: .max, seconds: .infinity, cancellation: cancellation) }
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 86_400)
        return Deadline(end: DispatchTime.now().uptimeNanoseconds &+ UInt64(clamped * 1e9), seconds: clamped, cancellation: cancellation)
    }

    /// The time is up or the request was cancelled. A clock read and a load: cheap enough for
    /// every step of a loop whose steps cost a microsecond or more.
    public var hasPassed: Bool {
        (cancellation?.isCancelled ?? false) || (end != .max && DispatchTime.now().uptimeNanoseconds >= end)
    }

    /// Seconds left (0 once passed or cancelled; `.infinity` without a deadline).
    public var remainingSeconds: Double {
        if cancellation?.isCancelled ?? false { return 0 }
        guard end != .max else { return .infinity }
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= end ? 0 : Double(end - now) / 1e9
    }
}
