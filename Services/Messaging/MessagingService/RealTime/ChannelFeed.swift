import DataEngine
import Foundation
import InternalProtocol
import Logging
import Permissions
import PostgresNIO
import PostgresSupport
import QueryLanguage

/// Channel messages for this process's real-time subscribers. Every publish announces
/// `app/channel` when it commits (whichever instance wrote it); for a channel someone here
/// listens to, the feed reads the messages after the last it delivered — once per channel, not
/// per subscriber — and queues each on every subscription whose subtopic, selector and rights
/// admit it, in the channel's order.
actor ChannelFeed: NotificationListener.Consumer {
    /// The PostgreSQL channel publishes are announced on.
    static let channel = "messaging_published"
    /// Messages read per round.
    static let batch = 500

    struct Key: Hashable, Sendable {
        let app: String
        let channel: String
    }

    /// One `PUB_SUB_MESSAGES` subscription.
    struct Subscription: Sendable {
        let id: String
        var identity: Identity
        let filter: SubscriptionFilter
        let outbox: RTOutbox
        let namespace: String
        /// Messages up to this number are not for it (it began, or resumed, after them).
        var after: Int64 = 0
    }

    /// Where a removed subscription stood: every message of its channel up to number `message`
    /// was queued for it (or not for it).
    struct Standing: Sendable {
        let subscription: String
        let message: Int64
    }

    let store: MessageStore
    let access: ChannelAccess
    /// The last message delivered, per channel watched here.
    private var lastSeq: [Key: Int64] = [:]
    private var book = SubscriptionBook<Key, Subscription>()

    init(store: MessageStore, access: ChannelAccess) {
        self.store = store
        self.access = access
    }

    /// Starts delivering `key`'s messages to `subscription`: those published from now on, or with
    /// a resume point, every one after it (read from the channel's messages first).
    func add(_ subscription: Subscription, connection: UUID, on key: Key, resumingAfter point: Int64?) async throws {
        if lastSeq[key] == nil {
            // The watch waits for publishes under way: any that missed it is counted in `last`.
            let last = try await store.watch([(key.app, key.channel)])
            // Another subscription may have started watching while this one read.
            if lastSeq[key] == nil { lastSeq[key] = last }
        }
        var subscription = subscription
        // Catch up until no read is left between the check and the registration.
        let reached = try await CatchUp<Int64>(batch: Self.batch).run(
            from: point ?? lastSeq[key] ?? 0, through: { lastSeq[key] },
            read: { from, through in
                try await store.messages(app: key.app, channel: key.channel, after: from, limit: Self.batch)
                    .filter { $0.0 <= through }
            },
            position: { $0.0 },
            deliver: { messages, from in
                subscription.after = from
                guard let rules = await rules(for: key) else { throw ErrorEnvelope.internalError }
                send(messages, on: key, to: [subscription], rules: rules)
            })
        subscription.after = reached
        if lastSeq[key] == nil { lastSeq[key] = reached }
        book.add(subscription, connection: connection, id: subscription.id, on: key)
    }

    /// Stops subscription `id` of `connection` (nothing when there is none).
    func remove(connection: UUID, id: String) {
        for (key, _) in book.remove(connection: connection, id: id) { forgetIfIdle(key) }
    }

    /// Stops every subscription of `connection`: where each stood.
    func removeAll(connection: UUID) -> [Standing] {
        let removed = book.removeAll(connection: connection)
        let standing = removed.map { key, subscription in
            Standing(subscription: subscription.id, message: max(subscription.after, lastSeq[key] ?? 0))
        }
        for (key, _) in removed { forgetIfIdle(key) }
        return standing
    }

    /// Gives `connection`'s subscriptions a new identity (its user token changed).
    func reidentify(connection: UUID, as identity: Identity) {
        book.update(connection: connection) { $0.identity = identity }
    }

    /// Renews the watch of every channel with subscribers here (``MessageStore/watchMilliseconds``).
    func renewWatches() async throws {
        try await store.watch(lastSeq.keys.map { ($0.app, $0.channel) })
    }

    private func forgetIfIdle(_ key: Key) {
        if !book.contains(key) { lastSeq[key] = nil }
    }

    /// Reads every watched channel's new messages: announcements may be lost (a listener that
    /// lost its connection at the wrong moment), so this runs every second too.
    func catchUp() async {
        for key in lastSeq.keys { await deliverNew(key) }
    }

    func setListening(_ listening: Bool) async {
        // Announcements may have been missed while not listening: look at every watched channel.
        guard listening else { return }
        await catchUp()
    }

    func receive(_ payload: String) async {
        guard let slash = payload.firstIndex(of: "/") else { return }
        await deliverNew(Key(app: String(payload[..<slash]), channel: String(payload[payload.index(after: slash)...])))
    }

    /// Reads what `key` has past the last delivered message and queues it.
    private func deliverNew(_ key: Key) async {
        while let last = lastSeq[key] {
            let messages: [(Int64, MessageStore.Polled)]
            do {
                messages = try await store.messages(app: key.app, channel: key.channel, after: last, limit: Self.batch)
            } catch {
                store.logger.warning(
                    "real-time channel messages not read", metadata: ["error": "\(String(reflecting: error))"])
                return
            }
            guard let newest = messages.last?.0 else { return }
            // Rights are read as they are now (a revoked right stops a live subscription); when
            // they cannot be read nothing goes out, and the next announcement tries again.
            guard let rules = await rules(for: key), let current = lastSeq[key] else { return }
            // Another announcement's round may have delivered some of them meanwhile.
            let fresh = messages.filter { $0.0 > current }
            lastSeq[key] = max(current, newest)
            send(fresh, on: key, to: book.subscriptions(of: key), rules: rules)
            guard messages.count == Self.batch else { return }
        }
    }

    /// The channel rights of `key`'s app; nil (logged) when they cannot be read.
    private func rules(for key: Key) async -> ContainerPermissions<ChannelOperation>? {
        do {
            return try await access.rules.value(app: key.app)
        } catch {
            store.logger.warning(
                "real-time channel rights not read", metadata: ["error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// Queues `messages` of `key` on every one of `subscriptions` that may read the channel and
    /// whose subtopic and selector admit them, each encoded once.
    private func send(
        _ messages: [(Int64, MessageStore.Polled)], on key: Key, to subscriptions: [Subscription],
        rules: ContainerPermissions<ChannelOperation>
    ) {
        let allowed = subscriptions.filter {
            rules.isEmpty || rules.allows(PermissionCaller($0.identity), .subscribe, container: key.channel)
        }
        for (number, message) in messages {
            let data = JSONValue.raw(Self.payload(message).jsonText)
            let receiving = allowed.filter { number > $0.after && $0.filter.passesPattern(message) }
            // Every selector on the message decides within work the message bounds (FairMatching).
            let connections = receiving.map { ObjectIdentifier($0.outbox) }
            let verdicts = FairMatching.decide(groups: connections, textBytes: message.headers.textBytes) {
                index, budget in
                receiving[index].filter.selector?.selects(message.headers, within: &budget) ?? true
            }
            for (subscription, verdict) in zip(receiving, verdicts) where verdict == .match {
                subscription.outbox.send(
                    SocketIOPacket.event(
                        "SUB_RES", .object(JSONObject([("id", .string(subscription.id)), ("data", data)])),
                        namespace: subscription.namespace),
                    change: RTOutbox.ChangeTag(subscription: subscription.id, place: .message(number)))
            }
        }
    }

    /// A message as RT clients receive it (the JS SDK's e2e shape).
    static func payload(_ message: MessageStore.Polled) -> JSONValue {
        .object(
            JSONObject([
                ("messageId", .string(message.id)), ("timestamp", .integer(message.publishedAt)),
                ("message", message.data),
                ("publisherId", message.publisherId.map(JSONValue.string) ?? .null),
                ("subtopic", message.subtopic.map(JSONValue.string) ?? .null),
                ("headers", .object(message.headers)), ("pushSinglecast", .null), ("pushBroadcast", .null),
                ("publishPolicy", .null),
                ("query", .null), ("publishAt", .integer(0)), ("repeatEvery", .integer(0)),
                ("repeatExpiresAt", .integer(0)),
                ("templateValues", .null),
            ]))
    }
}
