// The checks of the import pipeline, record by record on the checking thread: the geometry
// family filter (`--only`), reprojection to EPSG:4326, the CRS's area of use, coordinate
// ranges (with the hint for projected metres), and GEOS validity (make-valid, or a problem
// under `strict`). It keeps only what the all-or-nothing rule needs: the problems (the
// area-of-use and projected-metres cases as one line each, from a count, the first case and
// a few samples), the warnings, and whether any record lacked a geometry.

import Foundation
import Geometry

final class FeatureChecker {
    let file: String
    let options: ImportOptions
    private var header: ImportHeader?
    private var transformer: CoordinateTransformer?
    private var area: AreaOfUse?
    private var geos: GEOSContext?
    /// The CRS or GEOS could not be set up: one problem, and the import stops reading.
    private(set) var setupFailed = false

    /// Records seen (after `--only`), for "N of M features".
    private var total = 0
    /// Index of the next record in the reader's order.
    private var index = 0
    private var found: [(index: Int, problem: ImportProblem)] = []
    private(set) var warnings: [ImportProblem] = []
    private var withoutGeometry: [(index: Int, problem: ImportProblem)] = []
    private var sawGeometry = false
    private var outsideCount = 0
    private var firstOutside: (location: String, raw: (Double, Double), landed: (Double, Double))?
    private var projectedCount = 0
    private var firstProjected: (location: String, raw: (Double, Double))?
    private var projectedSamples: [(Double, Double)] = []

    init(file: String, options: ImportOptions) {
        self.file = file
        self.options = options
    }

    /// Whether the import will fail: then records are no longer passed on to be written.
    var failing: Bool {
        !found.isEmpty || outsideCount > 0 || projectedCount > 0 || (sawGeometry && !withoutGeometry.isEmpty)
    }

    /// Checks one batch; returns the header and the records that passed, changed as stored
    /// (reprojected, repaired).
    func check(_ batch: [ImportItem]) -> [ImportItem] {
        var passed: [ImportItem] = []
        passed.reserveCapacity(batch.count)
        for item in batch {
            if setupFailed { break }
            switch item {
            case .header(let h):
                begin(h)
                passed.append(item)
            case .problem(let problem):
                found.append((index, problem))
            case .record(var feature, let location):
                guard let header else { continue }
                if header.kind == .attributes {
                    index += 1
                    total += 1
                    if !failing { passed.append(item) }
                    continue
                }
                if let only = options.only, let geometry = feature.geometry, !only.matches(geometry) {
                    index += 1
                    continue
                }
                total += 1
                if check(&feature, at: index, location: location ?? Importer.featureLocation(index, feature)), !failing {
                    passed.append(.record(feature, location: location))
                }
                index += 1
            }
        }
        return passed
    }

    private func begin(_ header: ImportHeader) {
        self.header = header
        guard header.kind == .features else { return }
        let crs = header.sourceCRS
        let needsTransform = crs.map { Projection.normalizeCRS($0) != "EPSG:4326" } ?? false
        do {
            if needsTransform, let crs { transformer = try CoordinateTransformer(from: crs, to: "EPSG:4326") }
            geos = try GEOSContext()
        } catch {
            found = [(0, ImportProblem(location: "", message: "\(error)"))]
            setupFailed = true
            return
        }
        // The declared CRS's area of use: a layer landing outside it has the wrong CRS (lon/lat
        // declared as EPSG:5514 lands in Estonia).
        area = !needsTransform || options.force ? nil : crs.flatMap(Projection.areaOfUse).flatMap { $0.isWorld ? nil : $0 }
    }

    /// Checks one feature in place; false when it has a problem (recorded).
    private func check(_ feature: inout Feature, at index: Int, location: String) -> Bool {
        guard var geometry = feature.geometry else {
            // A problem unless every record lacks a geometry: then the layer is a table.
            withoutGeometry.append((index, ImportProblem(location: location, message: "the feature has no geometry")))
            return true
        }
        sawGeometry = true
        let raw = Importer.firstPosition(geometry)
        if let transformer {
            do {
                geometry = try transformer.transform(geometry)
            } catch {
                found.append((index, ImportProblem(location: location, message: "cannot reproject: \(error)")))
                return false
            }
        }
        if let area, !area.meets(geometry.bbox) {
            outsideCount += 1
            if firstOutside == nil { firstOutside = (location, raw, Importer.firstPosition(geometry)) }
            return false
        }
        if let rangeProblem = Importer.coordinateRangeProblem(geometry) {
            if header?.crsAssumed == true, Importer.looksProjected(geometry) {
                projectedCount += 1
                if firstProjected == nil { firstProjected = (location, raw) }
                if projectedSamples.count < 50 { projectedSamples.append(raw) }
            } else {
                found.append((index, ImportProblem(location: location, message: rangeProblem)))
            }
            return false
        }
        guard let geos else { return false }
        do {
            let validity = try geos.validity(geometry)
            if !validity.isValid {
                let reason = validity.reason ?? "invalid geometry"
                let at = validity.location.map { " at (\($0.lon) \($0.lat))" } ?? ""
                if options.strict {
                    found.append((index, ImportProblem(location: location, message: "invalid \(geometry.typeName): \(reason)\(at) (rejected under --strict)")))
                    return false
                }
                geometry = try geos.makeValid(geometry)
                warnings.append(ImportProblem(location: location, message: "invalid \(geometry.typeName): \(reason)\(at); repaired with make-valid"))
            }
        } catch {
            found.append((index, ImportProblem(location: location, message: "cannot check validity: \(error)")))
            return false
        }
        feature.geometry = geometry
        return true
    }

    /// Every problem, in the records' order, with the area-of-use and projected-metres cases
    /// first as one line each. Features without a geometry are problems unless all of them
    /// lack one (`allWithoutGeometry`: the layer is a table).
    func problems(allWithoutGeometry: Bool) -> [ImportProblem] {
        var all = found
        if !allWithoutGeometry { all += withoutGeometry }
        // In record order; the order they were found in among problems of one record.
        var problems = all.enumerated().sorted { ($0.element.index, $0.offset) < ($1.element.index, $1.offset) }.map(\.element.problem)
        if let area, let first = firstOutside {
            let rawLooksLonLat = abs(first.raw.0) <= 180 && abs(first.raw.1) <= 90
            let hint = rawLooksLonLat ? "the coordinates look like longitude/latitude: pass --crs EPSG:4326" : "check the file's CRS or pass the right one with --crs"
            problems.insert(ImportProblem(location: "", message: "\(outsideCount) of \(total) features land outside the area of use of \(area) "
                + "(\(first.location) at \(Importer.formatPosition(first.raw)) lands at \(Importer.formatPosition(first.landed))); "
                + "\(hint), or --force to import anyway"), at: 0)
        }
        if let first = firstProjected {
            let guess = Importer.likelyProjectedCRS(projectedSamples).map { "EPSG:\($0.code) (\($0.name)): pass --crs EPSG:\($0.code)" } ?? "a projected CRS: pass it with --crs"
            problems.insert(ImportProblem(location: "", message: "\(projectedCount) of \(total) features are not longitude/latitude "
                + "(\(first.location) at \(Importer.formatPosition(first.raw))); the file names no CRS, "
                + "and these look like metres in \(guess)"), at: 0)
        }
        return problems
    }
}
