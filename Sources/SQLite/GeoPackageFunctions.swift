// The GeoPackage SQL functions that the R-tree spatial index's triggers call (GeoPackage 1.3,
// F.3): ST_IsEmpty, ST_MinX, ST_MaxX, ST_MinY, ST_MaxY. GDAL and QGIS define them on their
// connections; every connection Vltava opens defines them too, so that a row of a feature
// table can be updated or deleted (by Vltava, or by a test editing a store as another tool
// would) without "no such function". They read the blob's standard header only: its empty
// flag and its envelope, or for a point without an envelope (GDAL writes points so) the
// point's own x and y. Anything else, or a blob that is not a GeoPackage geometry, gives NULL.

import CSQLite

enum GeoPackageFunctions {
    typealias Function = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void

    static func register(on handle: OpaquePointer) {
        let functions: [(String, Function)] = [
            ("ST_IsEmpty", { context, count, arguments in
                guard count == 1, let header = GeoPackageFunctions.header(arguments?[0]) else { return sqlite3_result_null(context) }
                sqlite3_result_int(context, header.isEmpty ? 1 : 0)
            }),
            ("ST_MinX", { context, count, arguments in GeoPackageFunctions.result(context, count == 1 ? GeoPackageFunctions.header(arguments?[0])?.envelope?.minX : nil) }),
            ("ST_MaxX", { context, count, arguments in GeoPackageFunctions.result(context, count == 1 ? GeoPackageFunctions.header(arguments?[0])?.envelope?.maxX : nil) }),
            ("ST_MinY", { context, count, arguments in GeoPackageFunctions.result(context, count == 1 ? GeoPackageFunctions.header(arguments?[0])?.envelope?.minY : nil) }),
            ("ST_MaxY", { context, count, arguments in GeoPackageFunctions.result(context, count == 1 ? GeoPackageFunctions.header(arguments?[0])?.envelope?.maxY : nil) }),
        ]
        for (name, function) in functions {
            sqlite3_create_function_v2(handle, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, function, nil, nil, nil)
        }
    }

    static func result(_ context: OpaquePointer?, _ value: Double?) {
        if let value, value.isFinite { sqlite3_result_double(context, value) } else { sqlite3_result_null(context) }
    }

    struct Envelope { var minX, maxX, minY, maxY: Double }

    /// The empty flag and the envelope of a GeoPackage geometry blob; nil for anything else.
    static func header(_ value: OpaquePointer?) -> (isEmpty: Bool, envelope: Envelope?)? {
        guard sqlite3_value_type(value) == SQLITE_BLOB, let raw = sqlite3_value_blob(value) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: raw, count: Int(sqlite3_value_bytes(value)))
        guard bytes.count >= 8, bytes[0] == 0x47, bytes[1] == 0x50 else { return nil }
        let flags = bytes[3]
        let isEmpty = flags & 0b0001_0000 != 0
        let code = Int((flags >> 1) & 0b111)
        guard code <= 4 else { return (isEmpty, nil) }
        let envelopeBytes = [0, 32, 48, 48, 64][code]
        func double(at offset: Int, littleEndian: Bool) -> Double? {
            guard offset >= 0, offset + 8 <= bytes.count else { return nil }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            return Double(bitPattern: littleEndian ? bits : bits.byteSwapped)
        }
        if envelopeBytes > 0 {
            let little = flags & 1 == 1
            guard let minX = double(at: 8, littleEndian: little), let maxX = double(at: 16, littleEndian: little),
                  let minY = double(at: 24, littleEndian: little), let maxY = double(at: 32, littleEndian: little) else { return (isEmpty, nil) }
            return (isEmpty, Envelope(minX: minX, maxX: maxX, minY: minY, maxY: maxY))
        }
        // No envelope: a WKB point's own position (byte order, type 1 / 1001 / 2001 / 3001, x, y).
        let wkb = 8
        guard !isEmpty, bytes.count >= wkb + 21 else { return (isEmpty, nil) }
        let little = bytes[wkb] == 1
        var type: UInt32 = 0
        for i in 0..<4 { type |= UInt32(bytes[wkb + 1 + i]) << (8 * UInt32(i)) }
        if !little { type = type.byteSwapped }
        guard type % 1000 == 1, let x = double(at: wkb + 5, littleEndian: little), let y = double(at: wkb + 13, littleEndian: little) else { return (isEmpty, nil) }
        return (isEmpty, Envelope(minX: x, maxX: x, minY: y, maxY: y))
    }
}
