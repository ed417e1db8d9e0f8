import Foundation
@testable import Indoor
import TestSupport
import Testing

/// calib2021 (Fixtures/indoor/calib2021): trained on the robot's calibration runs, tested on its
/// later track (exact positions) and on a person's walk (distance to the walked path), as its
/// README's protocol says. References: scikit-learn's KNeighborsRegressor (brute force,
/// Euclidean) on the same features with unheard anchors at -103 dBm, which is what the learned
/// default gives here (the weakest strength heard is -93 dBm): Tests/Clients/indoor_calib_reference.py
/// printed the numbers below.
enum Calib2021 {
    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: Fixtures.url("indoor/calib2021/\(name)"))) }

    static var readOptions: SurveyOptions {
        var options = SurveyOptions(venue: "calib2021")
        options.beaconColumns = ["rssi_*"]
        options.timeUnit = .ns
        return options
    }

    static let venue: Result<Venue, any Error> = Result { try SurveyReader.read(bytes("calibration_df.csv"), file: "calibration_df.csv", options: readOptions) }
    static let robot: Result<(beacons: [String], scans: [TrackScan]), any Error> = Result {
        try SurveyReader.readTrack(bytes("test_robot_df.csv"), file: "test_robot_df.csv", options: readOptions)
    }
    static let walk: Result<(beacons: [String], scans: [TrackScan]), any Error> = Result {
        try SurveyReader.readTrack(bytes("test_walk_df.csv"), file: "test_walk_df.csv", options: readOptions)
    }
    static let path: Result<[(x0: Double, y0: Double, x1: Double, y1: Double)], any Error> = Result {
        try SurveyReader.readPath(bytes("path_reference.csv"), file: "path_reference.csv")
    }
}

@Suite struct RealSurveyTests {
    @Test func theSurveyImportsAsItComes() throws {
        let venue = try Calib2021.venue.get()
        // 4,104 scans; the unnamed pandas index and `heading` are not beacons; empty = unheard.
        #expect(venue.scans.count == 4104 && venue.beacons.map(\.id) == (1...6).map { "rssi_\($0)" })
        let readings = venue.scans.reduce(0) { $0 + $1.readings.count }
        let missing = 162 + 267 + 253 + 444 + 591 + 630  // per anchor, as the README counts them
        #expect(readings == 4104 * 6 - missing)
        // Nanoseconds written as floats: the first scan was at 1.627997452227e18 ns.
        #expect(venue.scans[0].time?.iso == "2021-08-03T13:30:52.227")
        #expect(SignalSpace(venue: venue, settings: ModelSettings()).unheard == -103)
        let robot = try Calib2021.robot.get()
        #expect(robot.scans.count == 719 && robot.scans.allSatisfy { $0.truth != nil })
        let walk = try Calib2021.walk.get()
        #expect(walk.scans.count == 876 && walk.scans.allSatisfy { $0.truth == nil })
        #expect(try Calib2021.path.get().count == 9)
        // A numeric time without a unit is refused with its line.
        var options = Calib2021.readOptions
        options.timeUnit = nil
        #expect(throws: IndoorError.self) { try SurveyReader.read(Calib2021.bytes("calibration_df.csv"), file: "c.csv", options: options) }
    }

    @Test func kNNEqualsScikitLearnAndTheDefaultBeatsIt() throws {
        let venue = try Calib2021.venue.get()
        var options = EvaluationOptions()
        options.k = [3, 5, 10]
        let robot = try Evaluator.evaluate(venue, track: Calib2021.robot.get(), truth: .positions, options: options)
        func result(_ method: LocateMethod, _ k: Int, tracking: String? = nil) throws -> EvaluationResult {
            try #require(robot.results.first { $0.method == method && $0.k == k && $0.tracking == tracking && $0.fingerprints == .scans })
        }
        // scikit-learn: (median, p90, max) in metres on the robot track.
        let sklearn: [(LocateMethod, Int, Double, Double, Double)] = [
            (.knn, 3, 1.202176, 2.612835, 5.564854), (.wknn, 3, 1.169853, 2.625236, 5.608553),
            (.knn, 5, 1.130449, 2.496093, 4.724893), (.wknn, 5, 1.130833, 2.491733, 4.705789),
        ]
        for (method, k, median, p90, maximum) in sklearn {
            let r = try result(method, k)
            #expect(abs(r.median - median) < 1e-6 && abs(r.p90 - p90) < 1e-6 && abs(r.maximum - maximum) < 1e-6, "\(method) k \(k): \(r.median) \(r.p90) \(r.maximum)")
        }
        // The default (gaussian, k 10): a median at most 0.85 × scikit-learn's best of its
        // README (1.130 m), and no worse a p90 than its best (2.492 m).
        let chosen = try result(.gaussian, 10)
        #expect(chosen.median <= 0.85 * 1.130449 && chosen.p90 <= 2.491733, "\(chosen.median) \(chosen.p90)")
        // The track, smoothed: 0.74 × locating scan by scan with the default (issue 34 asked for
        // 0.7 ×; docs/INDOOR.md says why the settings that reach it were not taken).
        let smooth = try result(.gaussian, TrackOptions().k, tracking: "smooth")
        #expect(smooth.median <= 0.75 * chosen.median && smooth.p90 < chosen.p90, "\(smooth.median) against \(chosen.median)")
        let filter = try result(.gaussian, TrackOptions().k, tracking: "filter")
        #expect(filter.median < chosen.median)
    }

    @Test func theWalkIsMeasuredAgainstItsPath() throws {
        let venue = try Calib2021.venue.get()
        var options = EvaluationOptions()
        options.k = [3]
        options.methods = [.wknn]
        let walk = try Evaluator.evaluate(venue, track: Calib2021.walk.get(), truth: .path(Calib2021.path.get()), options: options)
        let wknn = try #require(walk.results.first { $0.method == .wknn && $0.tracking == nil })
        // scikit-learn, k 3, distance weights: median 0.340352, p90 0.947391, max 2.197156.
        #expect(abs(wknn.median - 0.340352) < 1e-6 && abs(wknn.p90 - 0.947391) < 1e-6 && abs(wknn.maximum - 2.197156) < 1e-6)
        // The distance to the path by hand, for one estimate.
        #expect(Evaluator.distance(x: 0, y: 5, to: (0.28, 6.24, 0.28, 3.6)) == 0.28)
        let smooth = try #require(walk.results.first { $0.tracking == "smooth" })
        #expect(smooth.median < wknn.median && smooth.p90 < wknn.p90)
    }

    /// Cross-validation on the survey alone (4 blocks in its order, about its 4 robot runs):
    /// it picks the probabilistic default over kNN, and each block's errors are those of a
    /// train/test split with that block held out.
    @Test func foldsChooseFromTheTrainingDataAlone() throws {
        var venue = try Calib2021.venue.get()
        var options = EvaluationOptions()
        options.k = [10]
        options.methods = [.wknn, .gaussian]
        options.split = .folds(4)
        let folds = try Evaluator.evaluate(venue, options: options)
        let best = try #require(folds.best)
        #expect(best.method == .gaussian && folds.results.allSatisfy { $0.tested == 4104 })
        let wknn = try #require(folds.results.first { $0.method == .wknn })
        #expect(best.median < 0.8 * wknn.median, "\(best.median) against \(wknn.median)")
        // The first block (scans 0 ..< 1026) held out by a column instead.
        for s in venue.scans.indices { venue.scans[s].attributes["block"] = s < 1026 ? "first" : "rest" }
        options.split = .column("block", values: ["first"])
        let split = try Evaluator.evaluate(venue, options: options)
        for method in [LocateMethod.wknn, .gaussian] {
            let byFolds = try #require(folds.results.first { $0.method == method }).errors.prefix(1026)
            let bySplit = try #require(split.results.first { $0.method == method }).errors
            #expect(Array(byFolds) == bySplit, "\(method)")
        }
    }

    @Test func aTrackHonoursItsCheck() throws {
        let venue = try Calib2021.venue.get()
        let locator = try Locator(venue: venue)
        let robot = try Calib2021.robot.get()
        let scans = robot.scans.prefix(50).map { (time: $0.time, observation: locator.observation(of: $0, beacons: robot.beacons)) }
        struct Stop: Error {}
        var steps = 0
        #expect(throws: Stop.self) {
            _ = try locator.locateTrack(Array(scans), check: { () throws(Stop) in
                steps += 1
                if steps > 10 { throw Stop() }
            })
        }
        #expect(steps == 11)
        let positions = try locator.locateTrack(Array(scans), check: { () throws(Never) in })
        #expect(positions.count == 50)
    }

    /// Two floors: the WMU library's survey as floor 1 and calib2021's flat as floor 0 of one
    /// venue (two real surveys; their beacons differ, so the floor is never in doubt). Each
    /// survey's scans are placed on their own floor with a confidence near 1.
    @Test func theFloorComesFirstWithItsConfidence() throws {
        var wmu = try WMU.venue.get()
        wmu.model = ModelSettings()
        let calib = try Calib2021.venue.get()
        var both = try calib.merging(wmu)
        both.model = ModelSettings(unheard: .value(-110))
        let locator = try Locator(venue: both)
        #expect(Set(locator.cells.cells.map(\.floor)) == [0, 1])
        let robot = try Calib2021.robot.get()
        var onFloor0 = 0
        for scan in robot.scans.prefix(100) {
            let found = try #require(locator.locate(locator.observation(of: scan, beacons: robot.beacons), k: 10, method: .gaussian))
            if found.floor == 0 && found.floorConfidence > 0.999 { onFloor0 += 1 }
        }
        #expect(onFloor0 == 100)
        for scan in wmu.scans.prefix(100) {
            let track = TrackScan(time: nil, readings: scan.readings, truth: nil)
            let found = try #require(locator.locate(locator.observation(of: track, beacons: wmu.beacons.map(\.id)), k: 3, method: .wknn))
            #expect(found.floor == 1 && found.floorConfidence == 1)
        }
    }

    @Test func modelSettingsReadAndRefuse() throws {
        #expect(try ModelSettings.parse("unheard=-105,representation=powed") == ModelSettings(unheard: .value(-105), representation: .powed))
        #expect(try ModelSettings.parse("unheard=learned-6") == ModelSettings(unheard: .learned(margin: 6)))
        #expect(try ModelSettings.parse(ModelSettings().description) == ModelSettings())
        let chosen = ModelSettings(unheard: .value(-100), representation: .exponential, method: .wknn, k: 5)
        let reread = try ModelSettings.parse(chosen.description)
        #expect(chosen.description == "unheard=-100,representation=exponential,method=wknn,k=5" && reread == chosen)
        for bad in ["unheard=5", "unheard=nan", "unheard=learned-x", "representation=log", "k=0", "k=101", "method=svm", "depth=3", "unheard"] {
            #expect(throws: IndoorError.self, "\(bad)") { try ModelSettings.parse(bad) }
        }
        // Torres-Sospedra's representations, with min = -100: -70 dBm is 30 positive.
        let venue = Venue(name: "v", beacons: [Beacon(id: "a")])
        let space = { (r: ModelSettings.Representation) in SignalSpace(venue: venue, settings: ModelSettings(unheard: .value(-100), representation: r)) }
        #expect(space(.positive).value(-70) == 30 && space(.positive).value(nil) == 0 && space(.positive).value(-120) == 0)
        #expect(abs(space(.exponential).value(-70) - exp(30.0 / 24) / exp(100.0 / 24)) < 1e-15)
        #expect(abs(space(.powed).value(-70) - pow(30, M_E) / pow(100, M_E)) < 1e-15)
        #expect(space(.dbm).value(nil) == -100 && space(.dbm).value(-70) == -70)
    }
}
