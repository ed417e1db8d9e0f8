// Fuzzes the indoor survey reader (Sources/Indoor/SurveyReader.swift) on both shapes: a wide
// survey with grid labels (the WMU library's layout: labels, US dates, -200 = not heard) and a
// long one grouped by a time window, then the fingerprints and a locate of each scan read. The
// invariants: a survey that reads has a point per scan and readings within -200…0 dBm, and each
// of its scans locates (every fingerprint map it builds takes it). Nothing is written.

import Foundation
import Geometry
@testable import Indoor

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(start, count)
    var wide = SurveyOptions(venue: "fuzz")
    wide.grid = GridConvention(letters: .column, cellSize: 1)
    var long = wide
    long.shape = .long
    long.windowSeconds = 2
    var xy = SurveyOptions(venue: "fuzz")
    xy.missingValue = 0
    for options in [wide, long, xy] {
        guard let venue = try? SurveyReader.read(bytes, file: "fuzz.csv", options: options) else { continue }
        for scan in venue.scans {
            if !venue.points.indices.contains(scan.point) { FuzzSupport.fail("a scan's point \(scan.point) is not one of \(venue.points.count)") }
            for reading in scan.readings where !ScanError.rssiRange.contains(reading.rssi) || !venue.beacons.indices.contains(reading.beacon) {
                FuzzSupport.fail("a reading out of range: beacon \(reading.beacon), \(reading.rssi) dBm")
            }
        }
        guard let locator = try? Locator(venue: venue, kind: .scans) else { FuzzSupport.fail("a survey that reads cannot be indexed") }
        for scan in venue.scans.prefix(50) {
            let vector = FingerprintMap.vector(of: scan, dimensions: max(1, venue.beacons.count))
            guard let position = locator.locate(vector, k: 3, method: .wknn), position.x.isFinite, position.y.isFinite else {
                FuzzSupport.fail("a scan of the survey does not locate")
            }
            _ = position
        }
        _ = try? Locator(venue: venue, kind: .median)
    }
    return 0
}
