// Serves the air-quality API on loopback. The store: the first argument, else $VLTAVA_DB, else
// the demo store that `make demo` builds (scripts/build-demo-store.sh demo/vltava.gpkg).

import AirQuality
import Foundation
import Hummingbird
import Vltava

let environment = ProcessInfo.processInfo.environment
let path = CommandLine.arguments.dropFirst().first ?? environment["VLTAVA_DB"] ?? "../../demo/vltava.gpkg"
let port = environment["PORT"].flatMap(Int.init) ?? 8081
let app = Application(router: router(engine: try Engine(path: path)),
                      configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
