import ArgumentParser
import Engine
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Geometry
import Support
import Vltava

/// `vltava match track.gpx`: which paths a GPS trace walked (Snapshot.match, OSRM's /match in the
/// HTTP API), with the length walked and the ways' names.
struct MatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "match",
        abstract: "The paths a GPS trace (a GPX file) walked, matched to a line layer of the store.",
        discussion: """
            Every track point (trkpt) of the file, in order, with its time when it has one, is
            matched to the network by a hidden Markov model (Newson & Krumm): each point's
            accuracy is --accuracy metres. More than 60 s without a point, or a jump no walker
            makes, splits the trace into matchings. Prints each matching's length, the share of
            points placed, and the named ways walked.
            Example: vltava match walk.gpx --network paths --db demo/vltava.gpkg
            """
    )

    enum OutputFormat: String, ExpressibleByArgument { case text, json }

    @Argument(help: "A GPX file.") var file: String
    @Option(help: "A line layer of the store.") var network: String?
    @Option(help: "foot (default), wheelchair (step-free) or any.") var profile: String = "foot"
    @Option(help: "The GPS accuracy of the points in metres (the model's σ).") var accuracy: Double = 10
    @Option(help: "text or json (OSRM's match answer).") var format: OutputFormat = .text
    @OptionGroup var store: StoreOptions

    func run() throws {
        let fixes: [TraceFix]
        do {
            fixes = try GPXTrack.read(path: file).map { TraceFix(point: $0.point, time: $0.time, accuracy: accuracy) }
        } catch {
            throw CLIError("\(file): \(error)")
        }
        let answer: MatchAnswer
        do throws(EngineError) {
            guard let chosen = WalkingProfile(rawValue: profile) else {
                throw .invalidArgument(parameter: "profile", message: "unknown profile '\(profile)' (profiles: \(WalkingProfile.names))")
            }
            let snapshot = try StoreLocation.snapshot(store.db, limits: store.limits)
            answer = try snapshot.match(MatchRequest(fixes: fixes, profile: chosen), on: try network.map { name throws(EngineError) in try snapshot.network(name) })
        } catch {
            throw CLIError(error, message: "\(error.code): \(error)")
        }
        switch format {
        case .json:
            var w = JSONWriter(pretty: true)
            var options = OSRMRouteOptions()
            options.geometries = .geojson
            options.overview = .full
            Output.osrmMatch(&w, answer, options)
            print(String(decoding: w.bytes, as: UTF8.self))
        case .text:
            let placed = answer.result.tracepoints.filter { $0 != nil }.count
            print(String(format: "%.1f m walked over %@ in %d matching%@; %d of %d points placed (the others within 3σ of the one before, or off the paths)",
                         answer.metres, answer.network, answer.matchings.count, answer.matchings.count == 1 ? "" : "s", placed, fixes.count))
            for (i, matching) in answer.matchings.enumerated() {
                let first = matching.fixes.first ?? 0, last = matching.fixes.last ?? 0
                print(String(format: "matching %d: points %d–%d, %.1f m, confidence %.2f", i + 1, first + 1, last + 1, matching.metres, matching.confidence))
                let names = answer.wayNames[i]
                if !names.isEmpty { print("  along \(names.joined(separator: ", "))") }
            }
        }
    }
}

/// The track points of a GPX file (`trkpt`, in order; route points `rtept` when it has no
/// track), with their times in Unix seconds when they have them.
enum GPXTrack {
    struct Fix {
        var point: Point
        var time: Double?
    }

    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static func read(path: String) throws -> [Fix] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ReadError(description: "cannot read the file") }
        let reader = Reader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        guard parser.parse() else {
            throw ReadError(description: "not GPX: XML error at line \(parser.lineNumber): \(parser.parserError.map { "\($0)" } ?? "unreadable")")
        }
        if let problem = reader.problem { throw ReadError(description: problem) }
        let fixes = reader.track.isEmpty ? reader.route : reader.track
        guard fixes.count >= 2 else { throw ReadError(description: "the file has \(fixes.count) track points; a trace needs at least 2") }
        return fixes
    }

    final class Reader: NSObject, XMLParserDelegate {
        var track: [Fix] = [], route: [Fix] = []
        var problem: String?
        private var current: (fix: Fix, isTrack: Bool)?
        private var text = ""
        private var inTime = false
        private let dates: ISO8601DateFormatter = {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter
        }()
        private let fractionalDates: ISO8601DateFormatter = {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter
        }()

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            switch name {
            case "trkpt", "rtept":
                let count = track.count + route.count + 1
                guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init) else {
                    problem = problem ?? "point \(count): no lat and lon"
                    return
                }
                do {
                    current = (Fix(point: try Point.checked(lon: lon, lat: lat)), name == "trkpt")
                } catch {
                    problem = problem ?? "point \(count): \(error)"
                }
            case "time":
                inTime = current != nil
                text = ""
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if inTime { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            switch name {
            case "time" where inTime:
                inTime = false
                let stamp = text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard let date = dates.date(from: stamp) ?? fractionalDates.date(from: stamp) else {
                    problem = problem ?? "a point's time \(Quote.input(stamp)) is not an ISO 8601 time"
                    return
                }
                current?.fix.time = date.timeIntervalSince1970
            case "trkpt", "rtept":
                if let (fix, isTrack) = current {
                    if isTrack { track.append(fix) } else { route.append(fix) }
                }
                current = nil
            default: break
            }
        }
    }
}
