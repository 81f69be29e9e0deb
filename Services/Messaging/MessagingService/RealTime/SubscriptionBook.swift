import Foundation

/// One real-time feed's subscriptions: by key (a channel, a table) for delivery, and by
/// connection, so that a connection's unsubscribing, leaving or new identity touches its own
/// and nothing else. Every feed keeps its subscriptions here (``ChannelFeed``, ``DataFeed``,
/// ``CommandFeed``); a value, tested against a plain model in `SubscriptionBookTests`.
struct SubscriptionBook<Key: Hashable & Sendable, Subscription: Sendable>: Sendable {
    /// A subscription's place: its connection and its client-chosen id.
    struct Place: Hashable, Sendable {
        let connection: UUID
        let id: String
    }

    private var byKey: [Key: [Place: Subscription]] = [:]
    private var keysByConnection: [UUID: Set<Key>] = [:]

    /// Whether no subscription is kept.
    var isEmpty: Bool { byKey.isEmpty }

    /// The keys with subscriptions.
    var keys: [Key] { Array(byKey.keys) }

    /// Whether `key` has subscriptions.
    func contains(_ key: Key) -> Bool { byKey[key] != nil }

    /// `key`'s subscriptions.
    func subscriptions(of key: Key) -> [Subscription] {
        byKey[key].map { Array($0.values) } ?? []
    }

    /// Keeps `subscription` of `connection` on `key`, replacing one with the same id there.
    mutating func add(_ subscription: Subscription, connection: UUID, id: String, on key: Key) {
        byKey[key, default: [:]][Place(connection: connection, id: id)] = subscription
        keysByConnection[connection, default: []].insert(key)
    }

    /// Removes `connection`'s subscription `id` wherever it is: what was removed, by key.
    @discardableResult
    mutating func remove(connection: UUID, id: String) -> [(key: Key, subscription: Subscription)] {
        var removed: [(key: Key, subscription: Subscription)] = []
        for key in keysByConnection[connection] ?? [] {
            guard let subscription = byKey[key]?.removeValue(forKey: Place(connection: connection, id: id)) else {
                continue
            }
            removed.append((key, subscription))
            forget(key, of: connection)
        }
        return removed
    }

    /// Removes every subscription of `connection`: what was removed, by key.
    mutating func removeAll(connection: UUID) -> [(key: Key, subscription: Subscription)] {
        var removed: [(key: Key, subscription: Subscription)] = []
        for key in keysByConnection.removeValue(forKey: connection) ?? [] {
            for (place, subscription) in byKey[key] ?? [:] where place.connection == connection {
                byKey[key]?[place] = nil
                removed.append((key, subscription))
            }
            if byKey[key]?.isEmpty == true { byKey[key] = nil }
        }
        return removed
    }

    /// Changes every subscription of `connection` (a new identity, say).
    mutating func update(connection: UUID, _ change: (inout Subscription) -> Void) {
        for key in keysByConnection[connection] ?? [] {
            guard var subscriptions = byKey[key] else { continue }
            for (place, var subscription) in subscriptions where place.connection == connection {
                change(&subscription)
                subscriptions[place] = subscription
            }
            byKey[key] = subscriptions
        }
    }

    /// Drops `key` when it has no subscription left, and the connection's note of it when the
    /// connection has none left there.
    private mutating func forget(_ key: Key, of connection: UUID) {
        if byKey[key]?.isEmpty == true { byKey[key] = nil }
        if byKey[key]?.keys.contains(where: { $0.connection == connection }) != true {
            keysByConnection[connection]?.remove(key)
            if keysByConnection[connection]?.isEmpty == true { keysByConnection[connection] = nil }
        }
    }

    /// How many connections the book keeps notes for (for tests: none is kept for nothing).
    var connectionCount: Int { keysByConnection.count }
}
