// `vltava positions`: a file of positions run through a live layer of the store, in order, in
// batches as the HTTP API takes them, printing the fence events they make as JSON lines (the
// same events as the streams and webhooks send). Positions are memory (docs/HTTP_API.md, "At
// least once, and what survives"): the run starts from no object, and keeps nothing after it.
// So it answers "which events would this track make against the store's fences" — a phone's
// recorded walk, a test of a fence before it is put on a server.

import ArgumentParser
import Engine
import Foundation
import Live
import Server
import Support
import Vltava

struct PositionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "positions",
        abstract: "Run a file of positions through a live layer and print the fence events they make.",
        discussion: """
            FILE holds the body of POST /v1/live/LAYER/positions: {"positions": [{"id": …, "position": [lon, lat], "time": …}, …]},
            any number, sent in batches of at most 10,000 in order. Each event is printed as one JSON line; a summary goes to
            standard error. The live layer and its fences are those the store declares (PUT /v1/live/…, vltava fences).

            Example:
              vltava positions visitors walk.json
            """
    )

    @Argument(help: "The live layer.") var layer: String
    @Argument(help: "The positions: a JSON file, or - for standard input.") var file: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        let text = try readFileArgument(file)
        do {
            let updates: [PositionUpdate]
            do {
                updates = try PositionsBody.parse(text, now: Date().timeIntervalSince1970)
            } catch {
                throw CLIError("\(file): \(error.detail)", category: .invalid)
            }
            let engine = try StoreLocation.engine(store.db, limits: store.limits)
            let batch = max(1, engine.limits.live.maxUpdatesPerBatch)
            var events = 0, stale = 0
            for start in stride(from: 0, to: updates.count, by: batch) {
                let receipt = try engine.updatePositions(layer, Array(updates[start..<min(start + batch, updates.count)]))
                stale += receipt.stale
                for event in receipt.events {
                    var w = JSONWriter()
                    Output.fenceEvent(&w, event)
                    print(String(decoding: w.bytes, as: UTF8.self))
                }
                events += receipt.events.count
            }
            printError("\(updates.count) position\(updates.count == 1 ? "" : "s") through '\(layer)': \(events) event\(events == 1 ? "" : "s"), \(stale) stale")
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(error)
        }
    }
}
