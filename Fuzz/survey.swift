// Fuzzes the indoor survey reader (Sources/Indoor/SurveyReader.swift) on both shapes: a wide
// survey with grid labels (the WMU library's layout: labels, US dates, -200 = not heard), a long
// one grouped by a time window, one with x/y and nanosecond times, numeric labels by a pattern,
// then the model, a locate of each scan read (kNN and gaussian) and the survey as a track; and
// the path reader. The invariants: a survey that reads has a point per scan and readings within
// -200…0 dBm, each of its scans locates to a finite position, and a track of n scans gives n
// positions. Nothing is written.

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
    var nanoseconds = SurveyOptions(venue: "fuzz")
    nanoseconds.timeUnit = .ns
    nanoseconds.beaconColumns = ["rssi_*"]
    var numeric = SurveyOptions(venue: "fuzz")
    numeric.labelPattern = try? PositionPattern("{x:3}{y:3}", scale: 0.01)
    _ = try? SurveyReader.readPath(bytes, file: "fuzz.csv")
    for options in [wide, long, xy, nanoseconds, numeric] {
        guard let venue = try? SurveyReader.read(bytes, file: "fuzz.csv", options: options) else { continue }
        for scan in venue.scans {
            if !venue.points.indices.contains(scan.point) { FuzzSupport.fail("a scan's point \(scan.point) is not one of \(venue.points.count)") }
            for reading in scan.readings where !ScanError.rssiRange.contains(reading.rssi) || !venue.beacons.indices.contains(reading.beacon) {
                FuzzSupport.fail("a reading out of range: beacon \(reading.beacon), \(reading.rssi) dBm")
            }
        }
        guard let locator = try? Locator(venue: venue) else { FuzzSupport.fail("a survey that reads cannot be indexed") }
        for scan in venue.scans.prefix(50) {
            for method in LocateMethod.allCases {
                guard let position = locator.locate(locator.observation(of: scan), k: 3, method: method), position.x.isFinite, position.y.isFinite else {
                    FuzzSupport.fail("a scan of the survey does not locate by \(method)")
                }
            }
        }
        if locator.cells.cells.count <= 300 {
            let scans = venue.scans.prefix(50).map { (time: $0.time, observation: locator.observation(of: $0)) }
            let track = locator.locateTrack(Array(scans), check: { () throws(Never) in })
            if track.count != scans.count || track.contains(where: { !$0.x.isFinite || !$0.y.isFinite }) {
                FuzzSupport.fail("a track of \(scans.count) scans gave \(track.count) positions or a position that is not finite")
            }
        }
    }
    return 0
}
