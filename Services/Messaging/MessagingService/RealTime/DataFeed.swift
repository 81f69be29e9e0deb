import DataEngine
import Foundation
import InternalProtocol
import Logging

/// Data change events for this process's `OBJECTS_CHANGES` subscriptions. A table with
/// subscribers here is watched (its writes emit events into the log); ``ChangeReader`` decodes
/// them from a slot while anyone here needs it and hands each batch over once; each event goes
/// to every subscription of its table whose event name, where clause and read access admit it,
/// encoded once whoever receives it.
actor DataFeed {
    /// How long one watch of a table lasts; ``renewWatches()`` renews it every 20 s.
    static let watchDuration: Duration = .seconds(60)

    struct Key: Hashable, Sendable {
        let app: String
        let table: String
    }

    /// One `OBJECTS_CHANGES` subscription.
    struct Subscription: Sendable {
        let id: String
        let kind: ChangeEvent.Kind
        let predicate: ObjectPredicate?
        /// The clause as the engine writes one back (bulk events match equal clauses).
        let whereClause: String?
        var identity: Identity
        let outbox: RTOutbox
        let namespace: String
    }

    let engine: DataEngine
    let logger: Logger
    private var subscriptions: [Key: [ChannelFeed.SubscriptionKey: Subscription]] = [:]
    private var keysByConnection: [UUID: Set<Key>] = [:]
    private var slotOpen = false
    private var waiting: [CheckedContinuation<Void, any Error>] = []

    init(engine: DataEngine, logger: Logger) {
        self.engine = engine
        self.logger = logger
    }

    /// Starts delivering `key`'s events committed from now on to `subscription`: once a slot
    /// reads the log and the table is watched.
    func add(_ subscription: Subscription, connection: UUID, on key: Key) async throws {
        if !slotOpen { try await withCheckedThrowingContinuation { waiting.append($0) } }
        if subscriptions[key] == nil { try await engine.watch([(key.app, key.table)], for: Self.watchDuration) }
        subscriptions[key, default: [:]][.init(connection: connection, id: subscription.id)] = subscription
        keysByConnection[connection, default: []].insert(key)
    }

    /// Stops subscription `id` of `connection` (nothing when there is none).
    func remove(connection: UUID, id: String) {
        for key in keysByConnection[connection] ?? [] {
            subscriptions[key]?[.init(connection: connection, id: id)] = nil
            if subscriptions[key]?.isEmpty == true { subscriptions[key] = nil }
        }
    }

    /// Stops every subscription of `connection`.
    func removeAll(connection: UUID) {
        for key in keysByConnection.removeValue(forKey: connection) ?? [] {
            let kept = subscriptions[key]?.filter { $0.key.connection != connection } ?? [:]
            subscriptions[key] = kept.isEmpty ? nil : kept
        }
    }

    /// Gives `connection`'s subscriptions a new identity (its user token changed).
    func reidentify(connection: UUID, as identity: Identity) {
        for key in keysByConnection[connection] ?? [] {
            for place in subscriptions[key]?.keys ?? [:].keys where place.connection == connection {
                subscriptions[key]?[place]?.identity = identity
            }
        }
    }

    /// Renews the watch of every table with subscribers here.
    func renewWatches() async throws {
        try await engine.watch(subscriptions.keys.map { ($0.app, $0.table) }, for: Self.watchDuration)
    }

    /// How many subscriptions are live here.
    var count: Int { subscriptions.values.reduce(0) { $0 + $1.count } }

    // MARK: The reader's side

    /// Whether a slot should be reading: someone subscribes or waits to.
    var wantsSlot: Bool { !subscriptions.isEmpty || !waiting.isEmpty }

    /// A slot reads the log now: waiting subscriptions may start.
    func slotOpened() {
        slotOpen = true
        for waiter in waiting { waiter.resume() }
        waiting = []
    }

    /// The slot failed (`error`): waiting subscriptions are refused.
    func slotLost(_ error: any Error) {
        slotOpen = false
        for waiter in waiting { waiter.resume(throwing: RTError.changesUnavailable) }
        waiting = []
        if !subscriptions.isEmpty {
            logger.warning("real-time change events may have been missed", metadata: ["error": "\(error)"])
        }
    }

    /// Marks the slot closed when nobody needs it; true when the reader may drop it.
    func closeIfIdle() -> Bool {
        guard subscriptions.isEmpty, waiting.isEmpty else { return false }
        slotOpen = false
        return true
    }

    /// Queues `events` (in commit order) on the subscriptions they concern.
    func deliver(_ events: [ChangeEvent]) async {
        var batches: [Key: [ChangeEvent]] = [:]
        for event in events { batches[Key(app: event.app, table: event.table), default: []].append(event) }
        for (key, batch) in batches where subscriptions[key] != nil {
            await deliver(batch, on: key)
        }
    }

    private func deliver(_ events: [ChangeEvent], on key: Key) async {
        let catalog: AppCatalog
        do {
            catalog = try await engine.cache.catalog(for: key.app)
        } catch {
            return logger.warning("real-time change events dropped: catalog not read", metadata: ["error": "\(error)"])
        }
        let subscribers = (subscriptions[key] ?? [:]).values.map { ($0, ObjectReadAccess($0.identity, table: key.table, catalog: catalog)) }
        var acls = ObjectACLs.none
        if subscribers.contains(where: { $0.1.needsACLs }) {
            do {
                acls = try await engine.findACLs(app: key.app, table: key.table, ids: events.flatMap(ChangeMatch.objectIds))
            } catch {
                return logger.warning("real-time change events dropped: ACLs not read", metadata: ["error": "\(error)"])
            }
        }
        for event in events {
            var match = ChangeMatch(event: event, acls: acls)
            for (subscription, access) in subscribers where subscription.kind == event.kind {
                guard let data = match.data(for: subscription, access: access) else { continue }
                subscription.outbox.send(
                    SocketIOPacket.event(
                        "SUB_RES", .object(JSONObject([("id", .string(subscription.id)), ("data", data)])),
                        namespace: subscription.namespace))
            }
        }
    }
}

/// What one event gives one subscription (§6.1 of the RT protocol): nil when its clause or
/// access admits nothing. Whole payloads are encoded once per event.
struct ChangeMatch {
    let event: ChangeEvent
    let acls: ObjectACLs
    private var encodedObject: JSONValue?

    init(event: ChangeEvent, acls: ObjectACLs) {
        self.event = event
        self.acls = acls
    }

    /// The ids whose ACLs deciding access to `event` may need.
    static func objectIds(_ event: ChangeEvent) -> [String] {
        event.objects.compactMap { $0["objectId"]?.string } + (event.touched ?? []).map(\.objectId)
    }

    mutating func data(for subscription: DataFeed.Subscription, access: ObjectReadAccess) -> JSONValue? {
        if access.constant == false { return nil }
        switch event.kind {
        case .created, .updated, .upserted, .deleted:
            guard let object = event.objects.first, admits(object, subscription, access) else { return nil }
            if event.kind == .deleted {
                return .object(JSONObject([("___class", .string(event.table)), ("objectId", object["objectId"] ?? .null)]))
            }
            if encodedObject == nil { encodedObject = .raw(JSONValue.object(object).jsonText) }
            return encodedObject
        case .bulkCreated, .bulkUpserted:
            let ids = event.objects.filter { admits($0, subscription, access) }.compactMap { $0["objectId"] }
            return ids.isEmpty ? nil : .array(ids)
        case .bulkUpdated, .bulkDeleted:
            guard subscription.whereClause == nil || subscription.whereClause == event.whereClause else { return nil }
            let count: Int
            if access.constant == true {
                count = event.count
            } else {
                guard let touched = event.touched else { return nil }
                count = touched.filter { access.allows(objectId: $0.objectId, ownerId: $0.ownerId, acls: acls) }.count
            }
            guard count > 0 else { return nil }
            return .object(JSONObject([("whereClause", event.whereClause.map(JSONValue.string) ?? .null), ("count", .integer(Int64(count)))]))
        }
    }

    private func admits(_ object: JSONObject, _ subscription: DataFeed.Subscription, _ access: ObjectReadAccess) -> Bool {
        guard subscription.predicate?.matches(object) ?? true else { return false }
        guard let id = object["objectId"]?.string else { return false }
        return access.allows(objectId: id, ownerId: object["ownerId"]?.string, acls: acls)
    }
}
