// The one rounding policy for derived values in answers (docs/ARCHITECTURE.md, "Numbers in
// answers"). Coordinates are data and go out as stored; what the engine computes is rounded
// here, so the same distance reads the same through every endpoint, the language and the
// library.

import Foundation

public enum Rounding {
    /// Distances and lengths: metres to the millimetre (1138.6484… → 1138.648). A millimetre is
    /// far below what GPS or the data can tell, and stable across platforms' last bits.
    @inlinable
    public static func metres(_ value: Double) -> Double { rounded(value, scale: 1000) }

    /// Durations: seconds to a tenth.
    @inlinable
    public static func seconds(_ value: Double) -> Double { rounded(value, scale: 10) }

    /// Past 2^53 / scale there is nothing to round; a finite value whose scaled value overflows
    /// stays as it is. `+ 0` turns -0.0 into 0.0.
    @usableFromInline
    static func rounded(_ value: Double, scale: Double) -> Double {
        let scaled = value * scale
        return scaled.isFinite ? scaled.rounded() / scale + 0 : value
    }

    /// Minutes to a tenth, for people (a festival schedule's slack).
    @inlinable
    public static func minutes(fromSeconds value: Double) -> Double { (value / 6).rounded() / 10 }

    /// Whole metres for messages ("240 m outside"); safe on any Double.
    public static func wholeMetres(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        return String(format: "%.0f", value)
    }
}
