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

/// An object of a durable live layer as the store keeps it: its latest position (no history).
public struct StoredPosition: Sendable, Equatable {
    public var layer: String
    public var id: String
    public var lon: Double
    public var lat: Double
    /// Seconds since 1970.
    public var time: Double
    /// Its fields as JSON, nil: none.
    public var fields: String?
    /// When it expires (seconds since 1970), nil: never.
    public var expires: Double?

    public init(layer: String, id: String, lon: Double, lat: Double, time: Double, fields: String?, expires: Double?) {
        self.layer = layer
        self.id = id
        self.lon = lon
        self.lat = lat
        self.time = time
        self.fields = fields
        self.expires = expires
    }
}

extension GeoPackage {
    /// Every durable live layer's objects, by layer and id.
    public func livePositions() throws(StoreError) -> [StoredPosition] {
        try sqlite {
            guard try database.hasTable("vltava_positions") else { return [] }
            let statement = try database.prepare("SELECT layer, id, lon, lat, time, fields, expires FROM vltava_positions ORDER BY layer, id")
            var found: [StoredPosition] = []
            while try statement.step() {
                let expires = statement.value(6)
                found.append(StoredPosition(layer: statement.text(0) ?? "", id: statement.text(1) ?? "", lon: statement.double(2), lat: statement.double(3),
                                            time: statement.double(4), fields: statement.text(5), expires: expires == .null ? nil : statement.double(6)))
            }
            return found
        }
    }

    /// Keeps objects' latest positions (replacing what was kept for each), in one transaction,
    /// durable when it returns (WAL with synchronous = FULL, as a write batch).
    public func savePositions(_ positions: [StoredPosition]) throws(StoreError) {
        try sqlite {
            try database.execute("PRAGMA synchronous = FULL")
            try database.transaction {
                try database.execute("CREATE TABLE IF NOT EXISTS vltava_positions (layer TEXT NOT NULL, id TEXT NOT NULL, lon REAL NOT NULL, lat REAL NOT NULL, time REAL NOT NULL, fields TEXT, expires REAL, PRIMARY KEY (layer, id))")
                let statement = try database.prepare("""
                    INSERT INTO vltava_positions (layer, id, lon, lat, time, fields, expires) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (layer, id) DO UPDATE SET lon = excluded.lon, lat = excluded.lat, time = excluded.time, fields = excluded.fields, expires = excluded.expires
                    """)
                for p in positions {
                    try statement.run([.text(p.layer), .text(p.id), .real(p.lon), .real(p.lat), .real(p.time), p.fields.map { .text($0) } ?? .null, p.expires.map { .real($0) } ?? .null])
                }
            }
        }
    }

    /// Forgets a kept object, or every object of the layer when `id` is nil.
    public func deletePositions(layer: String, id: String?) throws(StoreError) {
        try sqlite {
            guard try database.hasTable("vltava_positions") else { return }
            if let id {
                try database.prepare("DELETE FROM vltava_positions WHERE layer = ? AND id = ?").run([.text(layer), .text(id)])
            } else {
                try database.prepare("DELETE FROM vltava_positions WHERE layer = ?").run([.text(layer)])
            }
        }
    }

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
