// `vltava fences`: the fences a store keeps, listed, added or replaced from a JSON file, and
// deleted; the same definitions as PUT /v1/fences/{name} (docs/HTTP_API.md). They are checked
// against the store (a layer's features, a live layer declared) before they are kept. A server
// on the store holds its writer, so while one runs, change fences through its HTTP API.

import ArgumentParser
import Engine
import Foundation
import Geometry
import Support
import Vltava

struct FencesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fences",
        abstract: "List, add or delete the fences the store keeps (as PUT /v1/fences/{name}).",
        discussion: """
            Examples:
              vltava fences                                  # list them
              vltava fences put near-gorillas fence.json     # add or replace one (- reads standard input)
              vltava fences delete near-gorillas
            """
    )

    @Argument(help: "list (the default), put NAME FILE, or delete NAME.") var action: String = "list"
    @Argument(help: "The fence's name (put, delete).") var name: String?
    @Argument(help: "Its JSON definition, a file or - for standard input (put).") var file: String?
    @OptionGroup var store: StoreOptions

    func run() throws {
        do {
            let engine = try StoreLocation.engine(store.db, limits: store.limits)
            switch action {
            case "list":
                for fence in engine.fences {
                    let state = fence.problem.map { "not running: \($0)" } ?? "running"
                    print("\(fence.definition.name)\t\(state)\t\(JSON.serialize(fence.definition.json))")
                }
            case "put":
                guard let name, let file else { throw CLIError("put needs a name and a file: vltava fences put NAME FILE") }
                let text = try readFileArgument(file)
                let json: JSONValue
                do {
                    json = try JSON.parse(text)
                } catch {
                    throw CLIError("\(file): not JSON: \(error)")
                }
                try engine.putFence(try FenceDefinition.parse(name: name, json))
                print("fence '\(name)' kept")
            case "delete":
                guard let name else { throw CLIError("delete needs a name: vltava fences delete NAME") }
                guard try engine.deleteFence(name) else { throw CLIError("no fence named '\(name)'", category: .notFound) }
                print("fence '\(name)' deleted")
            default:
                throw CLIError("unknown action '\(action)': list, put or delete")
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(error)
        }
    }
}
