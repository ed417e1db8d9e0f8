// The admin token from a file (issue 19): `--admin-token` puts the token in the process list,
// where every local user reads it; `--admin-token-file` keeps it out.

import Foundation
import TestSupport
import Testing

@Suite(.validatesStores) struct AdminTokenTests {
    @Test func tokenFromAFile() async throws {
        let store = try await DemoStore.copy()
        let tokenFile = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("admin-token")
        try Data("  t0ken-from-a-file\n".utf8).write(to: tokenFile)
        let server = try await ServedStore(store: store, arguments: ["--admin-token-file", tokenFile.path], environment: [:])
        #expect(try await server.ready().status == 200)
        // Not in the command line (/proc/PID/cmdline is what ps shows).
        let commandLine = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(server.process.pid)/cmdline")), as: UTF8.self)
        #expect(commandLine.contains("--admin-token-file") && !commandLine.contains("t0ken"))
        let wrong = try await post(server.port, "/v1/admin/reload", body: "", headers: [("Authorization", "Bearer t0ken-from-a-fil")])
        #expect(wrong.status == 401)
        let right = try await post(server.port, "/v1/admin/reload", body: "", headers: [("Authorization", "Bearer t0ken-from-a-file")])
        #expect(right.status == 200 && right.object["status"] == .string("reloaded"))
    }

    @Test func aBadTokenFileStopsTheServerAtStart() async throws {
        let store = try await DemoStore.copy()
        let directory = URL(fileURLWithPath: store).deletingLastPathComponent()
        let empty = directory.appendingPathComponent("empty-token")
        try Data("\n".utf8).write(to: empty)
        let missing = directory.appendingPathComponent("no-such-token").path
        let cases = [
            (["--admin-token-file", empty.path], "the admin token file \(empty.path) is empty"),
            (["--admin-token-file", missing], "cannot read the admin token file \(missing)"),
            (["--admin-token-file", empty.path, "--admin-token", "x"], "give --admin-token-file or --admin-token, not both"),
        ]
        for (arguments, message) in cases {
            let result = try await offPool {
                let run = try CLI.run(["serve", "--db", store, "--port", "0"] + arguments)
                return (status: run.status, stderr: run.stderr)
            }
            #expect(result.status == 1 && result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
