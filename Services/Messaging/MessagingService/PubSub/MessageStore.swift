import DataEngine
import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

/// Channels, messages and polling subscriptions in the `messaging` schema. Each statement is
/// atomic on its own: a publish numbers its message under the channel row's lock, a poll hands
/// out and moves past messages under the subscription row's lock, so concurrent publishes and
/// polls (on any number of replicas) deliver each message once per subscription.
struct MessageStore: Sendable {
    let database: PostgresClient
    let logger: Logger
    /// How long a published message can be polled unless its app says otherwise (the
    /// contract's 60 seconds), and how long an ended schedule's status can be read.
    var retention: Int64 = 60_000
    /// The longest retention an app may set: a week.
    static let longestRetention: Int64 = 7 * 86_400_000
    /// A subscription unpolled this long is removed.
    var idleSubscription: Int64 = 3_600_000

    /// The most messages and (past the first message) the most bytes one poll answers.
    static let pollBatch = 100
    static let pollBytes = 4 << 20

    /// One message as a poll answers it.
    struct Polled: Sendable {
        let id: String
        let subtopic: String?
        let publisherId: String?
        let headers: JSONObject
        let data: JSONValue
        let publishedAt: Int64

        var json: JSONValue {
            var object = JSONObject([
                ("messageId", .string(id)), ("data", data), ("publishedAt", .integer(publishedAt)),
                ("headers", .object(headers)),
            ])
            if let publisherId { object["publisherId"] = .string(publisherId) }
            if let subtopic { object["subtopic"] = .string(subtopic) }
            return .object(object)
        }
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Who published: a schedule keeps it, so each occurrence can be checked against the
    /// publisher's rights as they are when it fires.
    struct Publisher: Sendable, Equatable {
        var userID: String?
        var roles: [String] = []
    }

    /// Publishes to `channel` (created when new), or schedules the publish; answers the message
    /// id and the status its publisher is told: `scheduled` either way, as Backendless answers
    /// (delivery is asynchronous to the publisher; the status query then says `published`).
    func publish(app: String, channel: String, _ request: PublishRequest, by publisher: Publisher = Publisher())
        async throws -> (id: String, status: String)
    {
        let id = "message:" + UUID().uuidString
        let now = Self.now()
        let headers = JSONValue.object(request.headers).jsonText
        let data = request.message.jsonText
        guard let schedule = request.schedule else {
            try await deliver(
                app: app, channel: channel, id: id, subtopic: request.subtopic, publisherId: request.publisherId,
                headers: headers, data: data,
                pubSub: request.delivery.pubSub, push: request.delivery.targets, at: now, on: nil)
            return (id, "scheduled")
        }
        try await database.run(
            """
            WITH c AS (
                INSERT INTO messaging.channels (app_id, name, last_seq, created) VALUES (\(app), \(channel), 0, \(now))
                ON CONFLICT (app_id, name) DO NOTHING)
            INSERT INTO messaging.schedules (app_id, id, channel, subtopic, publisher_id, headers, data, next_at, repeat_every,
                repeat_expires_at, status, publisher_user, publisher_roles, pubsub, push_targets)
            VALUES (\(app), \(id), \(channel), \(request.subtopic), \(request.publisherId), \(headers)::jsonb, \(data)::jsonb,
                \(schedule.publishAt), \(schedule.repeatEvery), \(schedule.repeatExpiresAt), 'scheduled', \(publisher.userID),
                \(publisher.roles), \(request.delivery.pubSub), \(request.delivery.targets?.json.jsonText)::jsonb)
            """, logger: logger)
        return (id, "scheduled")
    }

    /// Publishes one message now, in one statement (in `connection`'s transaction when given):
    /// to the channel's subscribers when `pubSub`, and to the devices `push` targets through a
    /// push job (written only when some device can be reached).
    func deliver(
        app: String, channel: String, id: String, subtopic: String?, publisherId: String?, headers: String,
        data: String,
        pubSub: Bool, push: PushOptions.Targets?, at now: Int64, on connection: PostgresConnection?
    ) async throws {
        let statement = publication(
            app: app, channel: channel, id: id, subtopic: subtopic, publisherId: publisherId, headers: headers,
            data: data,
            pubSub: pubSub, push: push, at: now)
        if let connection {
            try await connection.run(statement, logger: logger)
        } else {
            try await database.run(statement, logger: logger)
        }
    }

    /// The message (when `pubSub`) numbered next under the channel row's lock (created when new),
    /// pollable for its app's retention — announcing `app/channel` on ``ChannelFeed/channel`` when
    /// it commits while real-time subscribers watch the channel — and its push job (when `push`
    /// reaches a device: a singlecast, or a registration on the channel).
    func publication(
        app: String, channel: String, id: String, subtopic: String?, publisherId: String?, headers: String,
        data: String,
        pubSub: Bool, push: PushOptions.Targets?, at now: Int64
    ) -> PostgresQuery {
        """
        WITH c AS (
            INSERT INTO messaging.channels AS ch (app_id, name, last_seq, created) SELECT \(app), \(channel), 1, \(now) WHERE \(pubSub)
            ON CONFLICT (app_id, name) DO UPDATE SET last_seq = ch.last_seq + 1 RETURNING last_seq, watched_until),
        announced AS (SELECT pg_notify(\(ChannelFeed.channel), \(app + "/" + channel)) FROM c WHERE c.watched_until > \(now)),
        job AS (
            INSERT INTO messaging.push_jobs (app_id, message_id, channel, targets, data, headers, created)
            SELECT \(app), \(id), \(channel), \(push?.json.jsonText)::jsonb, \(data)::jsonb, \(headers)::jsonb, \(now)
            WHERE \(push != nil) AND (\(push?.devices != nil) OR EXISTS (
                SELECT 1 FROM messaging.registrations WHERE app_id = \(app) AND channels @> ARRAY[\(channel)])))
        INSERT INTO messaging.messages (app_id, channel, seq, id, subtopic, publisher_id, headers, data, published_at, status,
            expires_at)
        SELECT \(app), \(channel), c.last_seq, \(id), \(subtopic), \(publisherId), \(headers)::jsonb, \(data)::jsonb, \(now),
            'published', \(now) + coalesce((SELECT retention FROM messaging.settings WHERE app_id = \(app)), \(retention))
        FROM c LEFT JOIN announced ON true
        """
    }

    /// A message's status: its schedule's (`scheduled`, `published`, `cancelled`, `failed` with
    /// why), else `published` while it can be polled; nil when unknown (or expired).
    func status(app: String, id: String) async throws -> (status: String, error: String?)? {
        let rows = try await database.query(
            """
            SELECT status, error_message FROM messaging.schedules WHERE app_id = \(app) AND id = \(id)
            UNION ALL SELECT status, NULL FROM messaging.messages WHERE app_id = \(app) AND id = \(id)
            UNION ALL SELECT 'published', NULL FROM messaging.push_jobs WHERE app_id = \(app) AND message_id = \(id) LIMIT 1
            """, logger: logger)
        for try await (status, error) in rows.decode((String, String?).self) { return (status, error) }
        return nil
    }

    /// Cancels a scheduled publish; false when it is not scheduled (published, cancelled, unknown).
    func cancel(app: String, id: String) async throws -> Bool {
        let rows = try await database.query(
            """
            UPDATE messaging.schedules SET status = 'cancelled' WHERE app_id = \(app) AND id = \(id) AND status = 'scheduled'
            RETURNING 1
            """, logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    /// Subscribes to `channel` (created when new) from its next message on; answers the id.
    func subscribe(app: String, channel: String, subscriberId: String?, subtopic: String?, selector: String?)
        async throws
        -> String
    {
        let id = UUID().uuidString
        let now = Self.now()
        // Updating the channel row waits for publishes under way, so the starting point counts them.
        try await database.run(
            """
            WITH c AS (
                INSERT INTO messaging.channels AS ch (app_id, name, last_seq, created) VALUES (\(app), \(channel), 0, \(now))
                ON CONFLICT (app_id, name) DO UPDATE SET last_seq = ch.last_seq RETURNING last_seq)
            INSERT INTO messaging.subscriptions (app_id, id, channel, subscriber_id, subtopic, selector, after_seq, polled)
            SELECT \(app), \(id), \(channel), \(subscriberId), \(subtopic), \(selector), c.last_seq, \(now) FROM c
            """, logger: logger)
        return id
    }

    /// A subscription's filters and the next messages it has not been handed.
    struct Taken: Sendable {
        let subtopic: String?
        let selector: String?
        let messages: [Polled]
    }

    /// The next messages subscription `id` has not been handed, oldest first, within the
    /// retention, and the subscription moved past them — in one transaction holding the
    /// subscription's row, so two polls never hand out the same message. Nil when the
    /// subscription does not exist on this channel.
    func take(app: String, channel: String, id: String) async throws -> Taken? {
        let now = Self.now()
        return try await database.withTransaction(logger: logger) { connection -> Taken? in
            let found = try await connection.query(
                """
                SELECT subtopic, selector, after_seq FROM messaging.subscriptions
                WHERE app_id = \(app) AND id = \(id) AND channel = \(channel) FOR UPDATE
                """, logger: logger)
            var subscription: (String?, String?, Int64)?
            for try await row in found.decode((String?, String?, Int64).self) { subscription = row }
            guard let (subtopic, selector, after) = subscription else { return nil }
            // A page of at most pollBatch messages and pollBytes bytes (the first always counts).
            let rows = try await connection.query(
                """
                SELECT id, subtopic, publisher_id, headers::text, data::text, published_at, seq FROM (
                    SELECT m.*, sum(octet_length(m.data::text) + octet_length(m.headers::text)) OVER (ORDER BY m.seq) AS running,
                        row_number() OVER (ORDER BY m.seq) AS position
                    FROM messaging.messages m
                    WHERE m.app_id = \(app) AND m.channel = \(channel) AND m.seq > \(after) AND m.expires_at > \(now)
                    ORDER BY m.seq LIMIT \(Self.pollBatch)) batch
                WHERE running <= \(Self.pollBytes) OR position = 1
                ORDER BY seq
                """, logger: logger)
            let numbered = try await Self.polled(rows)
            let messages = numbered.map(\.1)
            let last = numbered.last?.0 ?? after
            try await connection.run(
                "UPDATE messaging.subscriptions SET after_seq = \(last), polled = \(now) WHERE app_id = \(app) AND id = \(id)",
                logger: logger)
            return Taken(subtopic: subtopic, selector: selector, messages: messages)
        }
    }

    /// Deletes a channel with its messages and subscriptions; false when there was none.
    func deleteChannel(app: String, channel: String) async throws -> Bool {
        let rows = try await database.query(
            "DELETE FROM messaging.channels WHERE app_id = \(app) AND name = \(channel) RETURNING 1", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    /// Removes up to `batch` messages past their retention, subscriptions idle too long and ended
    /// schedules past the retention; answers how many rows went.
    @discardableResult
    func sweep(batch: Int = 1_000) async throws -> Int {
        let now = Self.now()
        let rows = try await database.query(
            """
            WITH old AS (
                DELETE FROM messaging.messages WHERE ctid IN (
                    SELECT ctid FROM messaging.messages WHERE expires_at <= \(now) LIMIT \(batch))
                RETURNING 1),
            idle AS (
                DELETE FROM messaging.subscriptions WHERE ctid IN (
                    SELECT ctid FROM messaging.subscriptions WHERE polled < \(now - idleSubscription) LIMIT \(batch))
                RETURNING 1),
            ended AS (
                DELETE FROM messaging.schedules WHERE ctid IN (
                    SELECT ctid FROM messaging.schedules WHERE status <> 'scheduled' AND next_at < \(now - retention) LIMIT \(batch))
                RETURNING 1)
            SELECT (SELECT count(*) FROM old) + (SELECT count(*) FROM idle) + (SELECT count(*) FROM ended)
            """, logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
