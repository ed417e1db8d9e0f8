import Foundation
import Geometry
import Store
import Support
import TestSupport
import Testing

/// Inputs that crashed a fuzz target (scripts/fuzz.sh), minimised, each kept as the bytes the
/// fuzzer saved: the import must now fail (or succeed) with a plain answer instead.
extension BadInputTests {
    func write(bytes: [UInt8], name: String) throws -> String {
        let url = try Fixtures.temporaryDirectory("fuzz").appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// csv target: a fraction of 19 digits in an interval start overflowed Int while the digits
    /// were summed (UTCTime.parse), a trap in the middle of an import. The start now parses (the
    /// fraction is checked and dropped); the empty `to` column is the row's problem.
    @Test func observationWithALongFractionOfASecond() throws {
        let bytes = Array("code;;;;;datefromutc;;q;to\rABREA;;;;;2019-04-14 22:00:00.9999999999999999999;;;".utf8)
        let path = try write(bytes: bytes, name: "fuzz-csv-long-fraction.csv")
        try expectFailure(path, ["line 2", "cannot read the interval '2019-04-14 22:00:00.9999999999999999999' – '' as UTC times"]) {
            $0.timeSeriesOf = "stations"
        }
        let start = UTCTime.parse("2019-04-14 22:00:00." + String(repeating: "9", count: 400) + " UTC")
        #expect(start == UTCTime.parse("2019-04-14T22:00:00Z"))
    }
}
