// Locates the repository's Fixtures/ folder from this source file, so tests read the project's
// own copies of the data and never the team's shared data folder.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public enum Fixtures {
    /// The repository root (the folder holding Package.swift).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `Fixtures/<relativePath>`.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent("Fixtures").appendingPathComponent(relativePath)
    }

    public static func path(_ relativePath: String) -> String {
        url(relativePath).path
    }

    /// A fresh, empty temporary directory for one test. Under the `.validatesStores` trait,
    /// every GeoPackage in it is checked with GDAL's validator when the test ends.
    public static func temporaryDirectory(_ label: String = "vltava-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        StoreSweep.current?.add(url)
        return url
    }
}

/// Runs the built `vltava` executable, as a user would from a shell.
public enum CLI {
    /// The folder with the built products: beside the running test binary.
    public static var binary: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("vltava")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return Fixtures.root.appendingPathComponent(".build/debug/vltava")
    }

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `executable` (default: vltava) with `arguments` and returns its exit status and output.
    public static func run(_ arguments: [String], executable: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        try Fixtures.run(executable ?? binary, arguments, environment: environment)
    }
}

/// A child process outlived its deadline and was killed.
public struct ProcessTimeout: Error, CustomStringConvertible {
    public var command: String
    public var seconds: Double
    public var description: String { "\(command) did not finish within \(Int(seconds)) s and was killed" }
}

extension Fixtures {
    /// Runs a program to completion and returns its exit status and output.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                           timeout: Double = 600) throws -> CLI.Result {
        let child = try ChildProcess(executable, arguments, environment: environment)
        let status = try child.wait(timeout: timeout)
        return CLI.Result(status: status, stdout: child.stdout, stderr: child.stderr)
    }
}

/// A program started from a test, on posix_spawn and waitpid rather than Foundation's Process,
/// for two reasons seen on a fresh CI machine, where the REPL test starts a tmux server:
/// - Process sometimes never learned that a child had exited (the tmux client stayed a zombie,
///   and waitUntilExit hung the whole test run until CI's time ran out);
/// - a daemon that a child starts inherits the parent's descriptors, so a pipe to read the output
///   from may never see its end.
/// So the output goes to files, the child inherits no descriptor but its three standard ones,
/// and every wait has a deadline.
public final class ChildProcess {
    public let pid: pid_t
    private let command: String
    private let directory: URL
    private var exitStatus: Int32?

    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        command = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        directory = try Fixtures.temporaryDirectory("vltava-child")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory.appendingPathComponent("stdout").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, directory.appendingPathComponent("stderr").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // glibc has both (since 2.29 and 2.34), but Swift's Glibc module does not export them.
        guard let chdir = Self.glibc("posix_spawn_file_actions_addchdir_np", as: AddChdir.self),
              let closeFrom = Self.glibc("posix_spawn_file_actions_addclosefrom_np", as: AddCloseFrom.self) else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "glibc 2.34 or later is needed to start child processes"])
        }
        _ = chdir(&actions, Fixtures.root.path)
        _ = closeFrom(&actions, 3)

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { strdup("\($0)=\($1)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard spawned == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable.path): \(String(cString: strerror(spawned)))"])
        }
        self.pid = pid
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// What the child has written so far.
    public var stdout: String { read("stdout") }
    public var stderr: String { read("stderr") }

    /// Waits for the exit and returns the exit code, or 128 + the signal that ended the child
    /// (as a shell says). Past the deadline the child is killed and this throws.
    public func wait(timeout: Double) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let exitStatus { return exitStatus }
            if reap(blocking: false) { continue }
            if Date() >= deadline {
                stop()
                throw ProcessTimeout(command: command, seconds: timeout)
            }
            usleep(2_000)
        }
    }

    /// SIGTERM, then SIGKILL if the child is still there after 10 s.
    public func stop() {
        guard exitStatus == nil else { return }
        kill(pid, SIGTERM)
        for _ in 0..<1000 where exitStatus == nil {
            if !reap(blocking: false) { usleep(10_000) }
        }
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
    }

    /// Collects the child's exit status if it has exited; true if it did.
    private func reap(blocking: Bool) -> Bool {
        var status: Int32 = 0
        guard waitpid(pid, &status, blocking ? 0 : WNOHANG) == pid else { return false }
        exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return true
    }

    private func read(_ name: String) -> String {
        String(decoding: FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) ?? Data(), as: UTF8.self)
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static func glibc<F>(_ name: String, as type: F.Type) -> F? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: type) }
    }
}

/// A deterministic random generator (SplitMix64), so a failing property test can be replayed.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs `work(0..<count)` on `count` threads of their own and waits for all of them. For tests
/// whose work blocks (a database's answers) or computes for long: on Swift's cooperative pool,
/// which has as many threads as cores, it would starve the in-process servers of the suites
/// running beside them. `work` records no expectations (they belong to the test's task):
/// collect what it finds and check it after.
public func onThreadsOfTheirOwn(_ count: Int, _ work: @escaping @Sendable (Int) -> Void) async {
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            group.addTask {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    Thread { work(index); done.resume() }.start()
                }
            }
        }
    }
}

/// Runs `body` in the calling test's task (so its expectations are the test's) but on a thread
/// of its own, through a task executor preference. For tests that compute or wait for long:
/// on Swift's cooperative pool, which has as many threads as cores, they would starve the
/// in-process servers of the suites running beside them.
public func onAThreadOfItsOwn<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
    let executor = ThreadExecutor()
    defer { executor.stop() }
    return try await withTaskExecutorPreference(executor, operation: body)
}

/// A task executor with threads of its own (one by default: jobs then run in the order they
/// come).
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    public init(threads: Int = 1) {
        for _ in 0..<max(1, threads) {
            Thread { [self] in
                while true {
                    condition.lock()
                    while jobs.isEmpty && !stopped { condition.wait() }
                    if jobs.isEmpty { condition.unlock(); return }
                    let job = jobs.removeFirst()
                    condition.unlock()
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The threads end once the jobs queued so far have run.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Waits until `condition` holds or `limit` has passed, polling every 5 ms; the caller then
/// expects the condition, so a miss fails with its own message. The limit is generous: a full
/// parallel test run on two cores has kept a worker thread (at nice 10) from starting for
/// more than 10 s.
public func eventually(within limit: Duration = .seconds(60), _ condition: () -> Bool) async throws {
    let start = ContinuousClock.now
    while !condition() && ContinuousClock.now - start < limit { try await Task.sleep(for: .milliseconds(5)) }
}
