import DataEngine
import PostgresNIO

extension MessageStore {
    /// How long one watch of a channel lasts; watchers renew it well before.
    static let watchMilliseconds: Int64 = 60_000

    /// Marks `channels` of `app`… as watched for ``watchMilliseconds`` (creating them), so their
    /// publishes announce themselves; answers the highest message number of the first channel
    /// (publishes under way when it returns have committed and are counted).
    @discardableResult
    func watch(_ channels: [(app: String, channel: String)]) async throws -> Int64 {
        guard !channels.isEmpty else { return 0 }
        let now = Self.now()
        let rows = try await database.query(
            """
            INSERT INTO messaging.channels AS ch (app_id, name, last_seq, created, watched_until)
            SELECT * FROM unnest(\(channels.map(\.app))::text[], \(channels.map(\.channel))::text[]) AS w(a, n),
                LATERAL (SELECT 0::bigint, \(now)::bigint, \(now + Self.watchMilliseconds)::bigint) AS v
            ON CONFLICT (app_id, name) DO UPDATE SET watched_until = excluded.watched_until
            RETURNING app_id, name, last_seq
            """, logger: logger)
        var first: Int64 = 0
        for try await (app, channel, seq) in rows.decode((String, String, Int64).self)
        where app == channels[0].app && channel == channels[0].channel {
            first = seq
        }
        return first
    }

    /// Up to `limit` of `channel`'s messages after number `after`, oldest first, with their numbers.
    func messages(app: String, channel: String, after: Int64, limit: Int) async throws -> [(Int64, Polled)] {
        let rows = try await database.query(
            """
            SELECT id, subtopic, publisher_id, headers::text, data::text, published_at, seq FROM messaging.messages
            WHERE app_id = \(app) AND channel = \(channel) AND seq > \(after) ORDER BY seq LIMIT \(limit)
            """, logger: logger)
        return try await Self.polled(rows)
    }

    /// Rows of `id, subtopic, publisher_id, headers, data, published_at, seq` as messages with their numbers.
    static func polled(_ rows: PostgresRowSequence) async throws -> [(Int64, Polled)] {
        var messages: [(Int64, Polled)] = []
        for try await (messageID, topic, publisher, headers, data, publishedAt, seq) in rows.decode(
            (String, String?, String?, String, String, Int64, Int64).self)
        {
            let message = Polled(
                id: messageID, subtopic: topic, publisherId: publisher,
                headers: try JSONParser.parse(headers).object ?? JSONObject(),
                data: try JSONParser.parse(data), publishedAt: publishedAt)
            messages.append((seq, message))
        }
        return messages
    }
}
