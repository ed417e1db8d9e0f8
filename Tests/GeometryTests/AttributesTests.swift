import Geometry
import TestSupport
import Testing

/// Attributes past 32 names keep a name → position index (issue 30: building a row of n
/// attributes searched the names once per name, n² in all). It answers as the plain list does.
@Suite(.validatesStores) struct AttributesTests {
    @Test func wideAttributesAnswerAsNarrowOnes() {
        var wide = Attributes()
        for i in 0..<100 { wide["c\(i)"] = .integer(Int64(i)) }
        #expect(wide.count == 100 && wide.names.first == "c0" && wide.names.last == "c99")
        #expect(wide["c0"] == .integer(0) && wide["c64"] == .integer(64) && wide["c99"] == .integer(99) && wide["c100"] == nil)
        // Replaced in place: order and count stay.
        wide["c50"] = .text("fifty")
        #expect(wide.count == 100 && wide.names[50] == "c50" && wide["c50"] == .text("fifty"))
        // Removed: every later name moves up one place and is still found.
        wide["c10"] = nil
        #expect(wide.count == 99 && wide["c10"] == nil && wide.names[10] == "c11" && wide["c99"] == .integer(99) && wide["c11"] == .integer(11))
        // Added after a removal: at the end, found.
        wide["new"] = .bool(true)
        #expect(wide.names.last == "new" && wide["new"] == .bool(true) && wide["c98"] == .integer(98))
        // Equal to the same pairs built without an index ever being there, and hashed alike.
        let pairs = Array(zip(wide.names, wide.values))
        let rebuilt = Attributes(pairs)
        #expect(rebuilt == wide && rebuilt.hashValue == wide.hashValue)
        // Back below the threshold by removals: still right.
        for name in wide.names.dropFirst(5) { wide[name] = nil }
        #expect(wide.names == ["c0", "c1", "c2", "c3", "c4"] && wide["c3"] == .integer(3) && wide["c40"] == nil)
        #expect(wide == Attributes([("c0", .integer(0)), ("c1", .integer(1)), ("c2", .integer(2)), ("c3", .integer(3)), ("c4", .integer(4))]))
    }
}
