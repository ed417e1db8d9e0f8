// Google's encoded polyline format, as OSRM answers geometries (`geometries=polyline`, 5
// decimal places, or `polyline6`, 6): each coordinate as the difference from the previous one,
// latitude first, rounded to the precision, zig-zag signed and written 5 bits per character.

public enum Polyline {
    /// The flat lon/lat coordinates (`lon0, lat0, lon1, lat1, …`) encoded with `precision`
    /// decimal places (5 or 6).
    public static func encode(_ coordinates: [Double], precision: Int) -> String {
        let factor = precision == 6 ? 1e6 : 1e5
        var out: [UInt8] = []
        out.reserveCapacity(coordinates.count * 4)
        var previous = (lat: Int64(0), lon: Int64(0))
        var i = 0
        while i + 1 < coordinates.count {
            // Coordinates are checked positions (|lon| ≤ 180): ×1e6 fits an Int64 with room.
            let lat = Int64((coordinates[i + 1] * factor).rounded()), lon = Int64((coordinates[i] * factor).rounded())
            append(lat - previous.lat, to: &out)
            append(lon - previous.lon, to: &out)
            previous = (lat, lon)
            i += 2
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ delta: Int64, to out: inout [UInt8]) {
        var value = UInt64(bitPattern: delta << 1) ^ UInt64(bitPattern: delta >> 63)
        while value >= 0x20 {
            out.append(UInt8((0x20 | (value & 0x1F)) + 63))
            value >>= 5
        }
        out.append(UInt8(value + 63))
    }

    /// Decodes an encoded polyline into flat lon/lat coordinates; nil when it is not one
    /// (a character outside the alphabet, a number cut short, a latitude pair missing).
    public static func decode(_ text: String, precision: Int) -> [Double]? {
        let factor = precision == 6 ? 1e6 : 1e5
        let bytes = Array(text.utf8)
        var values: [Int64] = []
        var i = 0
        while i < bytes.count {
            var result: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard i < bytes.count, bytes[i] >= 63, bytes[i] < 127, shift < 64 else { return nil }
                let chunk = UInt64(bytes[i] - 63)
                i += 1
                result |= (chunk & 0x1F) << shift
                shift += 5
                if chunk < 0x20 { break }
            }
            values.append(Int64(bitPattern: result >> 1) ^ -Int64(bitPattern: result & 1))
        }
        guard values.count % 2 == 0 else { return nil }
        var coordinates: [Double] = []
        coordinates.reserveCapacity(values.count)
        var lat: Int64 = 0, lon: Int64 = 0
        for pair in stride(from: 0, to: values.count, by: 2) {
            lat &+= values[pair]
            lon &+= values[pair + 1]
            coordinates += [Double(lon) / factor, Double(lat) / factor]
        }
        return coordinates
    }
}
