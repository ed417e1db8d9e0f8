// File readers, timing, checksums and the RESULT line, shared by the workloads.

import Foundation

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// A little-endian float64 file as an array.
func readFloat64(_ path: String) throws -> [Double] {
    guard let data = FileManager.default.contents(atPath: path) else { throw BenchError(description: "cannot read \(path) (run gen_workloads.py first)") }
    guard data.count % 8 == 0 else { throw BenchError(description: "\(path): size is not a multiple of 8") }
    return data.withUnsafeBytes { raw in
        (0..<(data.count / 8)).map { Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self))) }
    }
}

/// A little-endian float64 file in chunks of 65,536 values, so a large query file is never
/// held whole.
func forEachChunk(of path: String, _ body: ([Double]) throws -> Void) throws {
    guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchError(description: "cannot read \(path) (run gen_workloads.py first)") }
    defer { try? handle.close() }
    while true {
        let data = handle.readData(ofLength: 8 * 65_536)
        if data.isEmpty { break }
        let values = data.withUnsafeBytes { raw in
            (0..<(data.count / 8)).map { Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self))) }
        }
        try body(values)
    }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// "sha256:<hex>" of int32 answers written little-endian, as benchlib.sha256_i32 computes it.
func checksum(_ answers: [Int32]) -> String {
    var hash = SHA256()
    for a in answers { hash.update(a) }
    return hash.finish()
}

/// The anchors' RESULT line (anchors.py `Run.result_line`), with numbers in %.6g.
func resultLine(id: String, impl: String, build: Double, query: Double, queries: Int, checksum: String) -> String {
    func g(_ v: Double) -> String { String(format: "%.6g", v) }
    return "RESULT workload=\(id) impl=\(impl) build_s=\(g(build)) query_s=\(g(query)) qps=\(g(Double(queries) / query)) checksum=\(checksum) ok=1 n=\(queries)/\(queries)"
}

/// SHA-256 (FIPS 180-4), incremental, enough for checksums: Foundation on Linux has no
/// CryptoKit. Answers are fed as they are computed, so they need not be kept.
struct SHA256 {
    static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    var block: [UInt8] = []
    var length: UInt64 = 0
    var w = [UInt32](repeating: 0, count: 64)

    init() { block.reserveCapacity(64) }

    mutating func update(_ value: Int32) {
        withUnsafeBytes(of: value.littleEndian) { for b in $0 { update(byte: b) } }
    }

    mutating func update(byte: UInt8) {
        block.append(byte)
        length += 1
        if block.count == 64 { compress() }
    }

    mutating func finish() -> String {
        let bits = length * 8
        update(byte: 0x80)
        while block.count != 56 { update(byte: 0) }
        for shift in stride(from: 56, through: 0, by: -8) { update(byte: UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        return "sha256:" + h.map { String(format: "%08x", $0) }.joined()
    }

    private mutating func compress() {
        func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        for i in 0..<16 {
            w[i] = UInt32(block[4 * i]) << 24 | UInt32(block[4 * i + 1]) << 16 | UInt32(block[4 * i + 2]) << 8 | UInt32(block[4 * i + 3])
        }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for i in 0..<64 {
            let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ SHA256.k[i] &+ w[i]
            let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d, h[4] &+ e, h[5] &+ f, h[6] &+ g, h[7] &+ hh]
        block.removeAll(keepingCapacity: true)
    }
}
