// Surveys as they come from the field, beyond one CSV:
//
// - A position pattern reads x, y (and a floor) out of a text: a file name such as
//   `120045_raw.csv` with `{x:3}{y:3}_raw.csv` (x = 120, y = 45), or a numeric label with
//   `{x:3}{y:3}`. `{x}` without a width takes a run of digits. The numbers are multiplied by
//   `scale` (0.01 for centimetres, so that positions are in metres).
// - A folder of per-point files: each file is one point's scans, read as any survey (wide or
//   long), its position from the file's name.
// - Merging: a venue plus more scans (`--append`, a folder's files, the collection endpoint):
//   beacons matched by id (new ones added after the old), points by floor and label (the same
//   label at another position is an error), scans appended in order.

import Foundation
import Geometry
import Store
import Support

/// Reads x, y and optionally the floor out of a text by a template.
public struct PositionPattern: Sendable, Equatable, CustomStringConvertible {
    enum Part: Equatable {
        case literal(String)
        case number(field: Character, width: Int?)
    }

    let parts: [Part]
    public let scale: Double
    public let description: String

    /// `{x:3}{y:3}_raw.csv`: `{x}`, `{y}` (required) and `{floor}`, each with an optional width;
    /// everything else is literal.
    public init(_ template: String, scale: Double = 1) throws(IndoorError) {
        guard scale.isFinite && scale > 0 else { throw .invalidOption("the position scale must be a number above 0, got \(scale)") }
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(template)
        while let first = rest.first {
            if first == "{" {
                guard let close = rest.firstIndex(of: "}") else { throw .invalidOption("the pattern \(Quote.input(template)) has a '{' without a '}'") }
                let inside = rest[rest.index(after: rest.startIndex)..<close].split(separator: ":", omittingEmptySubsequences: false)
                let name = inside.first.map(String.init) ?? ""
                let field: Character
                switch name {
                case "x": field = "x"
                case "y": field = "y"
                case "floor": field = "f"
                default: throw .invalidOption("the pattern \(Quote.input(template)): {\(name)} is not {x}, {y} or {floor}")
                }
                var width: Int?
                if inside.count == 2 {
                    guard let w = Int(inside[1]), (1...12).contains(w) else { throw .invalidOption("the pattern \(Quote.input(template)): a width is 1 to 12 digits") }
                    width = w
                }
                if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
                if case .number(_, nil)? = parts.last { throw .invalidOption("the pattern \(Quote.input(template)): two fields without a width must have text between them") }
                parts.append(.number(field: field, width: width))
                rest = rest[rest.index(after: close)...]
            } else {
                literal.append(first)
                rest = rest.dropFirst()
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        let fields = parts.compactMap { if case .number(let field, _) = $0 { field } else { nil } }
        guard fields.filter({ $0 == "x" }).count == 1, fields.filter({ $0 == "y" }).count == 1, fields.filter({ $0 == "f" }).count <= 1 else {
            throw .invalidOption("the pattern \(Quote.input(template)) needs {x} and {y} once each (and {floor} at most once)")
        }
        self.parts = parts
        self.scale = scale
        description = template
    }

    /// The position a text spells, or nil when it does not match.
    public func match(_ text: String) -> (x: Double, y: Double, floor: Int?)? {
        var rest = Substring(text)
        var values: [Character: Int] = [:]
        for (i, part) in parts.enumerated() {
            switch part {
            case .literal(let literal):
                guard rest.hasPrefix(literal) else { return nil }
                rest = rest.dropFirst(literal.count)
            case .number(let field, let width):
                let digits: Substring
                if let width {
                    digits = rest.prefix(width)
                    guard digits.count == width else { return nil }
                } else {
                    // Up to the next literal (or the end).
                    var end = rest.endIndex
                    if i + 1 < parts.count, case .literal(let next) = parts[i + 1], let range = rest.range(of: next) { end = range.lowerBound }
                    digits = rest[..<end]
                }
                guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy(\.isASCIIDigit), let value = Int(digits) else { return nil }
                values[field] = value
                rest = rest.dropFirst(digits.count)
            }
        }
        guard rest.isEmpty, let x = values["x"], let y = values["y"] else { return nil }
        return (Double(x) * scale, Double(y) * scale, values["f"])
    }
}

extension Venue {
    /// This venue with `other`'s beacons, points and scans added (see the top of the file).
    public func merging(_ other: Venue) throws(IndoorError) -> Venue {
        var merged = self
        var beaconIndex: [String: Int] = [:]
        for (i, beacon) in beacons.enumerated() { beaconIndex[beacon.id] = i }
        let beaconMap = other.beacons.map { beacon -> Int in
            if let known = beaconIndex[beacon.id] { return known }
            beaconIndex[beacon.id] = merged.beacons.count
            merged.beacons.append(beacon)
            return merged.beacons.count - 1
        }
        var pointIndex: [String: Int] = [:]
        for (i, point) in points.enumerated() { pointIndex["\(point.floor)\u{1F}\(point.label)"] = i }
        var pointMap: [Int] = []
        for point in other.points {
            let key = "\(point.floor)\u{1F}\(point.label)"
            if let known = pointIndex[key] {
                let existing = merged.points[known]
                guard existing.x == point.x && existing.y == point.y else {
                    throw .invalidOption("point \(Quote.input(point.label)) on floor \(point.floor) is at (\(shortNumber(point.x)) \(shortNumber(point.y))) here and at (\(shortNumber(existing.x)) \(shortNumber(existing.y))) in venue \(Quote.input(name))")
                }
                pointMap.append(known)
            } else {
                pointIndex[key] = merged.points.count
                pointMap.append(merged.points.count)
                merged.points.append(point)
            }
        }
        for scan in other.scans {
            var moved = scan
            moved.point = pointMap[scan.point]
            moved.readings = scan.readings.map { Reading(beacon: beaconMap[$0.beacon], rssi: $0.rssi, time: $0.time) }
            merged.scans.append(moved)
        }
        for floor in other.floors where merged.floor(floor.number) == nil { merged.floors.append(floor) }
        merged.floors.sort { $0.number < $1.number }
        return merged
    }
}

extension SurveyReader {
    /// Reads a folder of per-point files (the `.csv` files whose names match `pattern`, in name
    /// order) into one venue. Every file's problems are reported with its name; a file whose name
    /// does not match is an error, not skipped, unless it does not end in `.csv`.
    public static func readFolder(_ folder: String, pattern: PositionPattern, options: SurveyOptions) throws(IndoorError) -> Venue {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.lowercased().hasSuffix(".csv") }.sorted()
        } catch {
            throw .store("cannot list the folder \(folder): \(error.localizedDescription)")
        }
        guard !names.isEmpty else { throw .invalidOption("the folder \(folder) has no .csv files") }
        var venue: Venue?
        var problems: [ImportProblem] = []
        for name in names {
            guard let at = pattern.match(name) else {
                problems.append(ImportProblem(location: name, message: "the name does not match the pattern \(Quote.input(pattern.description))"))
                continue
            }
            guard let data = FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent(name)) else {
                problems.append(ImportProblem(location: name, message: "cannot read the file"))
                continue
            }
            var fileOptions = options
            fileOptions.fixedPoint = ReferencePoint(label: String(name.dropLast(4)), floor: at.floor ?? options.floor, x: at.x, y: at.y)
            do {
                let one = try read([UInt8](data), file: name, options: fileOptions)
                venue = try venue.map { v throws(IndoorError) in try v.merging(one) } ?? one
            } catch {
                if case .malformedCSV(let file, let found) = error {
                    problems += found.map { ImportProblem(location: "\(file), \($0.location)", message: $0.message) }
                } else {
                    problems.append(ImportProblem(location: name, message: error.description))
                }
            }
            if problems.count >= maxProblems { break }
        }
        if !problems.isEmpty { throw .malformedCSV(file: (folder as NSString).lastPathComponent, problems: Array(problems.prefix(maxProblems))) }
        guard let venue else { throw .invalidOption("the folder \(folder) has no scans") }
        return venue
    }
}
