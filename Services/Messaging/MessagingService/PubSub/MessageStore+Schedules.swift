import DataEngine
import Logging
import PostgresNIO
import PostgresSupport

extension MessageStore {
    /// Publishes the occurrences due now, up to `limit`, each in the transaction that claims its
    /// schedule (`SKIP LOCKED`: replicas take different rows) and moves it to its next time or
    /// ends it — so each occurrence is published once, even if a replica dies mid-way. A
    /// repeating schedule more than ``catchUp`` behind skips to its latest due time.
    /// An occurrence whose publisher `mayPublish` no longer lets publish to its channel ends
    /// the schedule as `failed`, saying why.
    @discardableResult
    func fireDue(
        limit: Int = 100,
        mayPublish: @Sendable (_ app: String, _ channel: String, Publisher) async throws -> Bool = { _, _, _ in true }
    ) async throws -> Int {
        let now = Self.now()
        return try await database.withTransaction(logger: logger) { connection -> Int in
            let rows = try await connection.query(
                """
                SELECT app_id, id, channel, subtopic, publisher_id, headers::text, data::text, next_at, repeat_every,
                    repeat_expires_at, occurrences, publisher_user, publisher_roles, pubsub, push_targets::text
                FROM messaging.schedules WHERE status = 'scheduled' AND next_at <= \(now)
                ORDER BY next_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                """, logger: logger)
            typealias Due = (
                String, String, String, String?, String?, String, String, Int64, Int64?, Int64?, Int64, String?,
                [String], Bool, String?
            )
            var due: [Due] = []
            for try await row in rows.decode(Due.self) { due.append(row) }
            for (
                app, id, channel, subtopic, publisher, headers, data, nextAt, every, expires, occurrences, user, roles,
                pubSub, push
            ) in due {
                guard try await mayPublish(app, channel, Publisher(userID: user, roles: roles)) else {
                    try await connection.run(
                        """
                        UPDATE messaging.schedules SET status = 'failed',
                            error_message = 'The publisher may no longer publish to channel ' || channel
                        WHERE app_id = \(app) AND id = \(id)
                        """, logger: logger)
                    continue
                }
                // The first occurrence keeps the id the publish answered; repeats add their number.
                let messageID = occurrences == 0 ? id : "\(id):\(occurrences + 1)"
                let targets = push.flatMap { try? JSONParser.parse(Array($0.utf8)) }.map(
                    PushOptions.Targets.init(json:))
                try await deliver(
                    app: app, channel: channel, id: messageID, subtopic: subtopic, publisherId: publisher,
                    headers: headers, data: data,
                    pubSub: pubSub, push: targets, at: now, on: connection)
                var next = every.map { nextAt + $0 }
                if let every, let upcoming = next, upcoming < now - Self.catchUp {
                    next = upcoming + (now - upcoming) / every * every
                }
                if let upcoming = next, upcoming <= (expires ?? .max) {
                    try await connection.run(
                        """
                        UPDATE messaging.schedules SET next_at = \(upcoming), occurrences = occurrences + 1
                        WHERE app_id = \(app) AND id = \(id)
                        """, logger: logger)
                } else {
                    try await connection.run(
                        """
                        UPDATE messaging.schedules SET status = 'published', occurrences = occurrences + 1
                        WHERE app_id = \(app) AND id = \(id)
                        """, logger: logger)
                }
            }
            return due.count
        }
    }

    /// How far behind a repeating schedule may fall before missed occurrences are skipped.
    static let catchUp: Int64 = 60_000
}
