import Foundation
import TestSupport
import Testing

/// The snippets of Snippets/ (the DocC catalogue's and docs/EMBEDDING.md's samples) are built by
/// `swift build`; here each runs on the demo store and must print exactly what its comments
/// say. The values are those LibraryTests checks against its references.
@Suite(.validatesStores) struct SnippetTests {
    static func run(_ snippet: String) throws -> String {
        let binary = CLI.binary.deletingLastPathComponent().appendingPathComponent(snippet)
        let result = try Fixtures.run(binary, [try LibraryTests.store.get()], timeout: 120)
        #expect(result.status == 0, "\(snippet): \(result.stderr)")
        return result.stdout
    }

    @Test func gettingStarted() throws {
        #expect(try Self.run("GettingStarted") == """
            AREPA Praha 1-n. Republiky 600.76
            AKALA Praha 8-Karlín 1667.047
            ARIEA Praha 2-Riegrovy sady 1721.927
            Praha 1 AREPA
            ["AREPA"]
            1

            """)
    }

    @Test func typedOperations() throws {
        #expect(try Self.run("TypedOperations") == """
            Praha 1
            AREPA 600.76
            AKALA 1667.047
            ARIEA 1721.927
            110.416 79.5
            AREPA aqi 3.0
            no2 AREPA 32.9 2019-04-16T21:00:00Z
            o3 ARIEA 88.0 2019-04-16T21:00:00Z
            pm10 AREPA 43.0 2019-04-16T21:00:00Z
            pm10_24 AREPA 32.0 2019-04-16T21:00:00Z
            pm2_5 ARIEA 23.0 2019-04-16T21:00:00Z
            so2 ARIEA 3.5 2019-04-16T21:00:00Z
            co ALEGA 507.0 2019-04-16T21:00:00Z
            I07 9.442 6.646 0.689

            """)
    }

    @Test func handlingErrors() throws {
        #expect(try Self.run("HandlingErrors") == """
            parameter_type invalid 1 29
            error: $2 must be a point, got text (line 1, column 29)
              FIND stations NEAREST $1 TO $2 RETURN code
                                          ^^
            unknown_layer unknown layer 'station' — did you mean 'stations'?

            """)
    }
}
