// One-shot gzip (RFC 1952) for what the package writes itself: the directories, metadata and
// tiles of a PMTiles archive. libdeflate, as the inflater uses for gzip: the whole input is in
// memory anyway, and it needs no stream set up per call.

import CDeflate

package enum Gzip {
    /// `input` gzipped at level 6 (zlib's default: what other writers of the same archives
    /// use); nil only if libdeflate cannot allocate its compressor.
    package static func compress(_ input: [UInt8]) -> [UInt8]? {
        guard let compressor = libdeflate_alloc_compressor(6) else { return nil }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_gzip_compress_bound(compressor, input.count)
        var output = [UInt8](repeating: 0, count: bound)
        let written = input.withUnsafeBytes { inBuffer in
            output.withUnsafeMutableBytes { outBuffer in
                libdeflate_gzip_compress(compressor, inBuffer.baseAddress, inBuffer.count, outBuffer.baseAddress, outBuffer.count)
            }
        }
        // 0 means the bound was too small, which libdeflate's own bound rules out.
        guard written > 0 else { return nil }
        output.removeSubrange(written...)
        return output
    }
}
