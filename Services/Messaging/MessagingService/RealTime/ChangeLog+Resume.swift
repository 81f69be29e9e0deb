import DataEngine
import InternalProtocol
import PostgresNIO
import PostgresSupport

/// Resume points: where each subscription of a closed connection stood (every data change or
/// channel message up to that place reached the client, or was not for it), kept for the resume
/// window under the client's id (`clientId`, which the SDKs keep across reconnects) and the
/// subscription's (which they send again), and bound to the user it served.
extension ChangeLog {
    /// Keeps `points` of `client` (user `user`, nil for none) for `window`.
    func saveResumePoints(
        app: String, client: String, user: String?, _ points: [(subscription: String, place: RTOutbox.Place)],
        for window: Duration
    ) async throws {
        var changes: [(String, ChangePosition)] = []
        var messages: [(String, Int64)] = []
        for (subscription, place) in points {
            switch place {
            case .change(let position): changes.append((subscription, position))
            case .message(let number): messages.append((subscription, number))
            }
        }
        let expiry = window.wholeMilliseconds
        if !changes.isEmpty {
            try await database.run(
                """
                INSERT INTO messaging.rt_resume (app_id, client_id, subscription_id, user_id, commit_lsn, index, expires_at)
                SELECT \(app), \(client), s, \(user ?? ""), c, i, now() + \(expiry) * interval '1 millisecond'
                FROM unnest(\(changes.map(\.0))::text[], \(changes.map(\.1.storedCommit))::bigint[],
                    \(changes.map { Int32($0.1.index) })::int[]) AS p(s, c, i)
                ON CONFLICT (app_id, client_id, subscription_id, user_id) DO UPDATE SET commit_lsn = excluded.commit_lsn,
                    index = excluded.index, message = NULL, expires_at = excluded.expires_at
                """, logger: logger)
        }
        if !messages.isEmpty {
            try await database.run(
                """
                INSERT INTO messaging.rt_resume (app_id, client_id, subscription_id, user_id, message, expires_at)
                SELECT \(app), \(client), s, \(user ?? ""), m, now() + \(expiry) * interval '1 millisecond'
                FROM unnest(\(messages.map(\.0))::text[], \(messages.map(\.1))::bigint[]) AS p(s, m)
                ON CONFLICT (app_id, client_id, subscription_id, user_id) DO UPDATE SET commit_lsn = NULL, index = NULL,
                    message = excluded.message, expires_at = excluded.expires_at
                """, logger: logger)
        }
    }

    /// The resume point of `client`'s `subscription`, taken (a point serves one reconnect),
    /// when one is live and was left by the same user (another user's leaves it be).
    func takeResumePoint(app: String, client: String, subscription: String, user: String?) async throws -> RTOutbox
        .Place?
    {
        let rows = try await database.query(
            """
            DELETE FROM messaging.rt_resume
            WHERE app_id = \(app) AND client_id = \(client) AND subscription_id = \(subscription)
                AND user_id = \(user ?? "") AND expires_at > now()
            RETURNING commit_lsn, index, message
            """, logger: logger)
        var point: RTOutbox.Place?
        for try await (commit, index, message) in rows.decode((Int64?, Int32?, Int64?).self) {
            if let commit, let index {
                point = .change(ChangePosition(commit: UInt64(bitPattern: commit), index: Int(index)))
            } else if let message {
                point = .message(message)
            }
        }
        return point
    }
}
