import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import Testing

/// The text table for people: cells are never cut; rows wider than the terminal become records
/// whose values wrap, and joined again give the JSON answer's value.
@Suite struct TableTests {
    static let history = "FIND stations WHERE code = 'AREPA' RETURN code, HISTORY(no2, 24 h)"

    /// The JSON answer's HISTORY value: the reference the table's text must hold whole.
    static func historyValue() throws -> JSONValue {
        let result = try #require(try Query.run(history, on: QueryStore.get()).first)
        guard case .object(let answer) = result.json(), case .array(let rows)? = answer["rows"],
              case .object(let row)? = rows.first, let value = row["history_no2_24h"] else {
            throw CocoaError(.coderValueNotFound)
        }
        return value
    }

    @Test func aWideCellIsWholeInATableWithoutAWidth() throws {
        let result = try #require(try Query.run(Self.history, on: QueryStore.get()).first)
        let lines = result.table().split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[2].hasPrefix("AREPA  [[\"2019-04-15T22:00:00Z\",33.3],"))
        #expect(try JSON.parse(String(lines[2].dropFirst("AREPA  ".count))) == Self.historyValue())
    }

    @Test func aRowWiderThanTheTerminalIsARecordWithItsValueWrapped() throws {
        let result = try #require(try Query.run(Self.history, on: QueryStore.get()).first)
        let lines = result.table(width: 80).split(separator: "\n").map(String.init)
        #expect(lines[0] == "-[ row 1 ]" + String(repeating: "-", count: lines.dropFirst().map(\.count).max()! - 10))
        #expect(lines[1] == "code             AREPA")
        #expect(lines.last == "(1 row)")
        let value = lines[2..<(lines.count - 1)]
        // 24 readings of 30 characters in a value 63 wide: two a line, broken after their comma.
        #expect(value.count == 12)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(value.dropFirst().allSatisfy { $0.hasPrefix(String(repeating: " ", count: 17) + "[\"2019-04-1") })
        let joined = value.map { $0.dropFirst(17) }.joined()
        #expect(try JSON.parse(joined) == Self.historyValue())
    }

    @Test func aTableThatFitsStaysATableAndRecordsCanBeAskedFor() throws {
        let result = try #require(try Query.run("FIND stations WHERE code = 'AREPA' RETURN code, name", on: QueryStore.get()).first)
        let table = "code   name\n-----  --------------------\nAREPA  Praha 1-n. Republiky\n(1 row)"
        #expect(result.table() == table)
        #expect(result.table(width: 80) == table)
        #expect(result.table(width: 27) == table)  // exactly as wide as the terminal
        #expect(result.table(width: 26) == "-[ row 1 ]----------------\ncode  AREPA\nname  Praha 1-n. Republiky\n(1 row)")
        #expect(result.table(records: true) == "-[ row 1 ]----------------\ncode  AREPA\nname  Praha 1-n. Republiky\n(1 row)")
    }

    @Test func recordsShareOneRuleWidth() throws {
        let result = try #require(try Query.run("FIND stations WHERE code IN ('AREPA', 'ALEGA') ORDER BY code RETURN code, name", on: QueryStore.get()).first)
        #expect(result.table(records: true) == """
            -[ row 1 ]-----------------------
            code  ALEGA
            name  Praha 2-Legerova (hot spot)
            -[ row 2 ]-----------------------
            code  AREPA
            name  Praha 1-n. Republiky
            (2 rows)
            """)
    }
}
