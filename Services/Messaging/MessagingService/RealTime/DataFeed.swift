import DataEngine
import Foundation
import InternalProtocol
import Logging
import PostgresSupport
import QueryLanguage

/// Data change events for this process's `OBJECTS_CHANGES` subscriptions. A table with
/// subscribers here is watched (its writes emit events, which the relay copies into the
/// ``ChangeLog``); on each announcement the feed reads the log past its cursor once for all
/// subscriptions, and queues each event on every subscription of its table whose event name,
/// where clause and read access admit it, encoded once whoever receives it. A subscription
/// resumed from a resume point first receives what it missed, read from the log by table. A
/// table whose events cannot be delivered (its rights were not read) lags: its events come
/// from the log by table after each round, until they can be.
actor DataFeed: NotificationListener.Consumer {
    /// Log entries read per round.
    static let batch = 1_000

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
        /// How its connection receives `FILE_REF` values.
        let fileLinks: SubscriberFileLinks
        /// Events at or before this position are not for it (it began, or resumed, after them).
        var after = ChangePosition(commit: 0, index: 0)
        /// Whether its clause ran out of work budget on an object, logged once.
        let budgetReport = ClauseBudgetReport()
    }

    /// Where a removed subscription stood: every event of its table at or before `position` was
    /// queued for it (or not for it).
    struct Standing: Sendable {
        let subscription: String
        let position: ChangePosition
    }

    /// What decides who receives events of a table: the app's catalog (permissions, file
    /// columns) and the Find ACL cells of the events' objects.
    struct Rights: Sendable {
        let catalog: AppCatalog
        let acls: ObjectACLs
    }

    /// Reads the rights `events` of `key` are delivered under, as they are now.
    typealias RightsReader = @Sendable (_ key: Key, _ events: [ChangeEvent]) async throws -> Rights

    let log: any ChangeSource
    let readRights: RightsReader
    /// How long one watch of a table lasts; ``renewWatches()`` renews it every 20 s.
    let watchDuration: Duration
    let logger: Logger
    private var book = SubscriptionBook<Key, Subscription>()
    /// The last log entry read; nil before the first subscription.
    private var cursor: ChangePosition?
    /// Tables whose events are not all queued yet, with the position before the first that may
    /// not be: those in the batch being delivered, and those that lag.
    private var pending: [Key: ChangePosition] = [:]
    /// Tables whose events could not be delivered: the log's rounds pass them over, and
    /// ``replayLagging()`` delivers them from `pending` on, in order.
    private var lagging: Set<Key> = []
    private var reading = false
    private var readAgain = false

    /// A feed reading `log`, deciding who receives what with the rights `readRights` reads
    /// (``rights(from:)`` in production).
    init(log: any ChangeSource, readRights: @escaping RightsReader, watchDuration: Duration, logger: Logger) {
        self.log = log
        self.readRights = readRights
        self.watchDuration = watchDuration
        self.logger = logger
    }

    /// The rights as `engine` reads them: its cached catalog, and ACL cells only for a table
    /// that has some.
    static func rights(from engine: DataEngine) -> RightsReader {
        { key, events in
            let catalog = try await engine.cache.catalog(for: key.app)
            guard ObjectReadAccess.tableHasACLs(key.table, catalog: catalog) else {
                return Rights(catalog: catalog, acls: .none)
            }
            let ids = events.flatMap(ChangeMatch.objectIds)
            return Rights(catalog: catalog, acls: try await engine.findACLs(app: key.app, table: key.table, ids: ids))
        }
    }

    /// Starts delivering `key`'s events to `subscription`: those committed from now on, or with
    /// a resume point, every one after it (read from the log first).
    func add(_ subscription: Subscription, connection: UUID, on key: Key, resumingAfter point: ChangePosition?)
        async throws
    {
        if !book.contains(key) { try await log.watch([(key.app, key.table)], for: watchDuration) }
        if cursor == nil || book.isEmpty {
            let latest = try await log.latest()
            cursor = max(cursor ?? latest, latest)
        }
        var subscription = subscription
        // A new subscription receives what commits after its table is watched and it is ready,
        // whether or not the log holds what committed before.
        let start = if let point { point } else { try await log.now() }
        // Catch up from the log by table until no read is left between the check and the registration.
        let reached = try await replay(key, from: start) { events, from in
            subscription.after = from
            // Refused rather than registered with a gap: the client may subscribe again.
            guard await deliver(events, on: key, to: [subscription]) else { throw ErrorEnvelope.internalError }
        }
        subscription.after = reached
        book.add(subscription, connection: connection, id: subscription.id, on: key)
    }

    /// Stops subscription `id` of `connection` (nothing when there is none).
    func remove(connection: UUID, id: String) {
        book.remove(connection: connection, id: id)
    }

    /// Stops every subscription of `connection`: where each stood.
    func removeAll(connection: UUID) -> [Standing] {
        book.removeAll(connection: connection).map { key, subscription in
            let through = pending[key] ?? cursor ?? ChangePosition(commit: 0, index: 0)
            return Standing(subscription: subscription.id, position: max(subscription.after, through))
        }
    }

    /// Gives `connection`'s subscriptions a new identity (its user token changed).
    func reidentify(connection: UUID, as identity: Identity) {
        book.update(connection: connection) { $0.identity = identity }
    }

    /// Renews the watch of every table with subscribers here.
    func renewWatches() async throws {
        try await log.watch(book.keys.map { ($0.app, $0.table) }, for: watchDuration)
    }

    /// Whether anyone here subscribes to data changes.
    var isActive: Bool { !book.isEmpty }

    // MARK: Reading the log

    func setListening(_ listening: Bool) async {
        // Announcements may have been missed while not listening.
        if listening { await catchUp() }
    }

    func receive(_ payload: String) async {
        await catchUp()
    }

    /// Reads the log past the cursor and delivers it, once at a time: an announcement during a
    /// read makes it read again. Called on every announcement, and every second in case one was
    /// lost.
    func catchUp() async {
        guard !reading else {
            readAgain = true
            return
        }
        reading = true
        defer { reading = false }
        repeat {
            readAgain = false
            guard await readLog() else { return }
            await replayLagging()
        } while readAgain
    }

    /// Reads the log past the cursor and delivers it, batch by batch; false (logged) when it
    /// cannot be read.
    private func readLog() async -> Bool {
        while let from = cursor, !book.isEmpty {
            let records: [ChangeRecord]
            do {
                records = try await log.read(after: from, limit: Self.batch)
            } catch {
                logger.warning("real-time change log not read", metadata: ["error": "\(String(reflecting: error))"])
                return false
            }
            guard let last = records.last?.position else { break }
            cursor = max(cursor ?? last, last)
            await deliver(records, after: from)
            if records.count < Self.batch { break }
        }
        return true
    }

    /// Delivers one batch read after `from`, table by table; a table whose delivery fails lags
    /// from `from` on.
    private func deliver(_ records: [ChangeRecord], after from: ChangePosition) async {
        var batches: [Key: [ChangeEvent]] = [:]
        for record in records {
            let key = Key(app: record.app, table: record.table)
            // A lagging table's events come from its replay, after those it has yet to deliver.
            guard book.contains(key), !lagging.contains(key), let event = ChangeEvent(record) else { continue }
            batches[key, default: []].append(event)
        }
        for key in batches.keys { pending[key] = from }
        for (key, events) in batches {
            if await deliver(events, on: key, to: nil) {
                pending[key] = nil
            } else {
                lagging.insert(key)
            }
        }
    }

    /// Delivers each lagging table's events from where it stopped up to the cursor, to every
    /// subscription it has; a table nobody here subscribes to any more is forgotten.
    private func replayLagging() async {
        for key in lagging {
            if book.contains(key), let from = pending[key] {
                guard await replayLagging(key, from: from) else { continue }
            }
            // Caught up, or nobody here subscribes to the table any more.
            pending[key] = nil
            lagging.remove(key)
        }
    }

    /// Delivers `key`'s events after `from` up to the cursor to every subscription of the table,
    /// `pending` following each batch delivered; false when they could not all be.
    private func replayLagging(_ key: Key, from: ChangePosition) async -> Bool {
        do {
            _ = try await replay(key, from: from) { events, _ in
                guard await deliver(events, on: key, to: nil) else { throw RightsNotRead() }
                if let last = events.last?.position { pending[key] = last }
            }
            return true
        } catch is RightsNotRead {
            return false
        } catch {
            logger.warning("real-time change log not read", metadata: ["error": "\(String(reflecting: error))"])
            return false
        }
    }

    /// The rights of a table's events could not be read (logged where they were not).
    private struct RightsNotRead: Error {}

    /// Hands `key`'s events after `from` up to the cursor, as it moves on meanwhile, to
    /// `eachBatch` with the position the batch was read after; read from the log by table. The
    /// position reached.
    private func replay(
        _ key: Key, from: ChangePosition,
        eachBatch: (_ events: [ChangeEvent], _ after: ChangePosition) async throws -> Void
    ) async throws -> ChangePosition {
        try await CatchUp<ChangePosition>(batch: Self.batch).run(
            from: from, through: { cursor },
            read: { from, through in
                try await log.replay(app: key.app, table: key.table, after: from, through: through, limit: Self.batch)
            },
            position: \.position,
            deliver: { records, from in try await eachBatch(records.compactMap(ChangeEvent.init), from) })
    }

    /// Queues `events` of `key` on `only` those subscriptions, or on every subscription of the
    /// table as it is once the rights are read; false (logged, nothing queued) when they cannot
    /// be read.
    private func deliver(_ events: [ChangeEvent], on key: Key, to only: [Subscription]?) async -> Bool {
        guard !events.isEmpty else { return true }
        let rights: Rights
        do {
            rights = try await readRights(key, events)
        } catch {
            logger.warning(
                "real-time change events held back: rights not read (delivered once they are)",
                metadata: ["app": "\(key.app)", "table": "\(key.table)", "error": "\(String(reflecting: error))"])
            return false
        }
        let (catalog, acls) = (rights.catalog, rights.acls)
        let subscribers = (only ?? book.subscriptions(of: key)).map {
            ($0, ObjectReadAccess($0.identity, table: key.table, catalog: catalog))
        }
        let fileColumns =
            catalog.table(named: key.table)?.columns.filter { $0.type == .fileReference }.map(\.name) ?? []
        for event in events {
            let receiving = subscribers.filter {
                $0.0.kind == event.kind && event.position > $0.0.after && $0.1.constant != false
            }
            var match = ChangeMatch(event: event, acls: acls, fileColumns: fileColumns, receiving: receiving.map(\.0))
            for (index, (subscription, access)) in receiving.enumerated() {
                let data = match.data(for: subscription, at: index, access: access)
                if subscription.budgetReport.takeFirstReport() {
                    logger.warning(
                        "real-time where clause over its work budget: objects it cannot decide within it do not match",
                        metadata: ["app": "\(key.app)", "table": "\(key.table)", "subscription": "\(subscription.id)"])
                }
                guard let data else { continue }
                subscription.outbox.send(
                    SocketIOPacket.event(
                        "SUB_RES", .object(JSONObject([("id", .string(subscription.id)), ("data", data)])),
                        namespace: subscription.namespace),
                    change: RTOutbox.ChangeTag(subscription: subscription.id, place: .change(event.position)))
            }
        }
        return true
    }
}

/// What ``DataFeed`` reads the change log through: ``ChangeLog``, or a test's list of records.
protocol ChangeSource: Sendable {
    /// Marks `tables` watched for `duration` from now: their writes emit events into the log.
    func watch(_ tables: [(app: String, table: String)], for duration: Duration) async throws
    /// Up to `limit` entries after `position`, in commit order.
    func read(after position: ChangePosition, limit: Int) async throws -> [ChangeRecord]
    /// Up to `limit` entries of `app`'s `table` after `position` up to `through`, in commit order.
    func replay(app: String, table: String, after position: ChangePosition, through: ChangePosition, limit: Int)
        async throws -> [ChangeRecord]
    /// The newest entry's position, or the beginning when the log is empty.
    func latest() async throws -> ChangePosition
    /// Where the database's commit order stands now: what commits from now on comes after it.
    func now() async throws -> ChangePosition
}

extension ChangeLog: ChangeSource {}

/// What one event gives one subscription (§6.1 of the RT protocol): nil when its clause or
/// access admits nothing. Whole payloads are encoded once per event and way of rendering files.
struct ChangeMatch {
    let event: ChangeEvent
    let acls: ObjectACLs
    /// The table's `FILE_REF` columns, which the event holds as paths and each subscription
    /// receives as its connection's URLs.
    let fileColumns: [String]
    /// Encoded payloads by the links they were rendered with (nil: the table has no files).
    private var encodedObjects: [SubscriberFileLinks?: JSONValue] = [:]
    /// Per object of the event, what each receiving subscription's clause decided (nil: no clause).
    private let verdicts: [[FairMatching.Verdict]]

    /// `receiving`: the subscriptions the event goes to, in the order ``data(for:at:access:)``
    /// names them; their clauses decide each object together, a connection's clauses as one
    /// group (``FairMatching``).
    init(event: ChangeEvent, acls: ObjectACLs, fileColumns: [String], receiving: [DataFeed.Subscription]) {
        self.event = event
        self.acls = acls
        self.fileColumns = fileColumns
        let connections = receiving.map { ObjectIdentifier($0.outbox) }
        verdicts = event.objects.map { object in
            FairMatching.decide(groups: connections, textBytes: object.textBytes) { index, budget in
                receiving[index].predicate?.matches(object, budget: &budget) ?? true
            }
        }
    }

    /// The ids whose ACLs deciding access to `event` may need.
    static func objectIds(_ event: ChangeEvent) -> [String] {
        event.objects.compactMap { $0["objectId"]?.string } + (event.touched ?? []).map(\.objectId)
    }

    /// `subscription`'s the `index`th of the clauses the match was made with.
    mutating func data(for subscription: DataFeed.Subscription, at index: Int, access: ObjectReadAccess) -> JSONValue? {
        if access.constant == false { return nil }
        switch event.kind {
        case .created, .updated, .upserted, .deleted:
            guard let object = event.objects.first, admits(0, subscription, index, access) else { return nil }
            if event.kind == .deleted {
                return .object(
                    JSONObject([("___class", .string(event.table)), ("objectId", object["objectId"] ?? .null)]))
            }
            return encoded(object, for: subscription.fileLinks)
        case .bulkCreated, .bulkUpserted:
            let ids = event.objects.indices.filter { admits($0, subscription, index, access) }.compactMap {
                event.objects[$0]["objectId"]
            }
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
            return .object(
                JSONObject([
                    ("whereClause", event.whereClause.map(JSONValue.string) ?? .null),
                    ("count", .integer(Int64(count))),
                ]))
        }
    }

    /// `object` encoded with its files as `links` render them, once per distinct rendering.
    private mutating func encoded(_ object: JSONObject, for links: SubscriberFileLinks) -> JSONValue {
        let rendering = fileColumns.isEmpty ? nil : links
        if let known = encodedObjects[rendering] { return known }
        let rendered = rendering?.rendering(fileColumns, of: object) ?? object
        let payload = JSONValue.raw(JSONValue.object(rendered).jsonText)
        encodedObjects[rendering] = payload
        return payload
    }

    /// Whether the event's object at `position` passed the clause of the subscription at
    /// `index` and is one it may read.
    private func admits(
        _ position: Int, _ subscription: DataFeed.Subscription, _ index: Int, _ access: ObjectReadAccess
    ) -> Bool {
        let object = event.objects[position]
        switch verdicts[position][index] {
        case .match: break
        case .noMatch: return false
        case .undecided:
            subscription.budgetReport.ranOut()
            return false
        }
        guard let id = object["objectId"]?.string else { return false }
        return access.allows(objectId: id, ownerId: object["ownerId"]?.string, acls: acls)
    }
}
