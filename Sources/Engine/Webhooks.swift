// Webhooks as declared: where a server POSTs the events of some fences (or all), and the secret
// it signs them with. Kept in the store beside the fences; the server delivers
// (Sources/Server/Webhooks.swift). The secret is never listed back.

import Foundation
import Geometry
import Store
import Support

public struct WebhookDefinition: Sendable, Equatable {
    public let name: String
    /// An http:// or https:// URL.
    public let url: URL
    /// The HMAC-SHA256 key of the signature header.
    public let secret: String
    /// The fences whose events it gets; nil: every fence's.
    public let fences: Set<String>?

    /// Parses `{"url": "https://…", "secret": "…", "fences": ["a", "b"]}`.
    public static func parse(name: String, _ value: JSONValue) throws(EngineError) -> WebhookDefinition {
        func invalid(_ message: String) -> EngineError { .write(code: "invalid_webhook", category: .invalid, message: message) }
        try FenceDefinition.checkName(name, of: "webhook")
        guard case .object(let object) = value else { throw invalid("a webhook is a JSON object") }
        if let unknown = object.keys.first(where: { !["url", "secret", "fences"].contains($0) }) {
            throw invalid("unknown member \(Quote.input(unknown)); a webhook has url, secret, fences")
        }
        guard let text = object["url"]?.string, let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil else {
            throw invalid("url: expected an http:// or https:// URL")
        }
        guard let secret = object["secret"]?.string, secret.utf8.count >= 16, secret.utf8.count <= 256 else {
            throw invalid("secret: expected 16 to 256 bytes, the key the signature header is made with")
        }
        var fences: Set<String>?
        if let list = object["fences"] {
            guard case .array(let items) = list, !items.isEmpty, let names = Optional(items.compactMap(\.string)), names.count == items.count else {
                throw invalid("fences: expected a list of fence names")
            }
            fences = Set(names)
        }
        return WebhookDefinition(name: name, url: url, secret: secret, fences: fences)
    }

    var json: JSONValue {
        var object = JSONObject([("url", .string(url.absoluteString)), ("secret", .string(secret))])
        if let fences { object["fences"] = .array(fences.sorted().map { .string($0) }) }
        return .object(object)
    }
}

extension Engine {
    /// Every webhook, by name.
    public var webhooks: [WebhookDefinition] {
        fenceBook.withLock { $0.webhooks.values.sorted { $0.name < $1.name } }
    }

    /// Adds or replaces a webhook, kept in the store.
    public func putWebhook(_ webhook: WebhookDefinition) throws(EngineError) {
        try updating { (writer: any StoreWriter) throws(EngineError) in
            let count = fenceBook.withLock { $0.webhooks[webhook.name] == nil ? $0.webhooks.count + 1 : $0.webhooks.count }
            guard count <= limits.live.maxWebhooks else {
                throw .write(code: "live_limit", category: .limit, message: "at most \(limits.live.maxWebhooks) webhooks; delete one first")
            }
            try writer.save(LiveDefinition(kind: .webhook, name: webhook.name, definition: JSON.serialize(webhook.json)))
            fenceBook.withLock { $0.webhooks[webhook.name] = webhook }
        }
    }

    /// Deletes a webhook; false when there is none.
    public func deleteWebhook(_ name: String) throws(EngineError) -> Bool {
        try updating { (writer: any StoreWriter) throws(EngineError) -> Bool in
            guard fenceBook.withLock({ $0.webhooks[name] != nil }) else { return false }
            _ = try writer.deleteLiveDefinition(kind: .webhook, name: name)
            fenceBook.withLock { $0.webhooks[name] = nil }
            return true
        }
    }
}
