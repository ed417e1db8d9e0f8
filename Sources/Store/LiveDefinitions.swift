// What a store keeps for the live hub (Sources/Live): the live layers, fences and webhooks clients declared,
// each as the JSON they sent, so they survive restarts and a `kill -9` (a write here is durable
// when it returns, as a batch is). Positions and events are not kept here: they are memory.

import SQLite

/// A declared live layer or fence: its kind, name and JSON definition.
public struct LiveDefinition: Sendable, Equatable {
    public enum Kind: String, Sendable { case layer, fence, webhook }
    public var kind: Kind
    public var name: String
    public var definition: String

    public init(kind: Kind, name: String, definition: String) {
        self.kind = kind
        self.name = name
        self.definition = definition
    }
}

extension GeoPackage {
    /// Every definition, by kind and name.
    public func liveDefinitions() throws(StoreError) -> [LiveDefinition] {
        try sqlite {
            guard try database.hasTable("vltava_live") else { return [] }
            let statement = try database.prepare("SELECT kind, name, definition FROM vltava_live ORDER BY kind, name")
            var found: [LiveDefinition] = []
            while try statement.step() {
                guard let kind = LiveDefinition.Kind(rawValue: statement.text(0) ?? "") else { continue }
                found.append(LiveDefinition(kind: kind, name: statement.text(1) ?? "", definition: statement.text(2) ?? "{}"))
            }
            return found
        }
    }

    /// Adds or replaces a definition, durably.
    public func save(_ definition: LiveDefinition) throws(StoreError) {
        try sqlite {
            try createLiveTable()
            let statement = try database.prepare("INSERT INTO vltava_live (kind, name, definition) VALUES (?, ?, ?) ON CONFLICT (kind, name) DO UPDATE SET definition = excluded.definition")
            try statement.run([.text(definition.kind.rawValue), .text(definition.name), .text(definition.definition)])
        }
    }

    /// Deletes a definition; false when there was none.
    public func deleteLiveDefinition(kind: LiveDefinition.Kind, name: String) throws(StoreError) -> Bool {
        try sqlite {
            guard try database.hasTable("vltava_live") else { return false }
            let statement = try database.prepare("DELETE FROM vltava_live WHERE kind = ? AND name = ?")
            try statement.run([.text(kind.rawValue), .text(name)])
            return database.changes > 0
        }
    }

    private func createLiveTable() throws {
        try database.execute("CREATE TABLE IF NOT EXISTS vltava_live (kind TEXT NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL, PRIMARY KEY (kind, name))")
    }
}
