import InternalProtocol
import DataEngine
import PostgresNIO

/// Resume points: where each data subscription of a closed connection stood (every event at or
/// before the position reached the client), kept for the resume window under the client's id
/// (`clientId`, which the SDKs keep across reconnects) and the subscription's (which they send
/// again), and bound to the user it served.
extension ChangeLog {
    /// Keeps `points` of `client` (user `user`, nil for none) for `window`.
    func saveResumePoints(
        app: String, client: String, user: String?, _ points: [(subscription: String, position: ChangePosition)], for window: Duration
    ) async throws {
        guard !points.isEmpty else { return }
        try await database.query(
            """
            INSERT INTO messaging.rt_resume (app_id, client_id, subscription_id, user_id, commit_lsn, index, expires_at)
            SELECT \(app), \(client), s, \(user ?? ""), c, i, now() + \(window.wholeMilliseconds) * interval '1 millisecond'
            FROM unnest(\(points.map(\.subscription))::text[], \(points.map(\.position.storedCommit))::bigint[],
                \(points.map { Int32($0.position.index) })::int[]) AS p(s, c, i)
            ON CONFLICT (app_id, client_id, subscription_id, user_id) DO UPDATE SET commit_lsn = excluded.commit_lsn, index = excluded.index, expires_at = excluded.expires_at
            """, logger: logger)
    }

    /// The resume point of `client`'s `subscription`, taken (a point serves one reconnect),
    /// when one is live and was left by the same user (another user's leaves it be).
    func takeResumePoint(app: String, client: String, subscription: String, user: String?) async throws -> ChangePosition? {
        let rows = try await database.query(
            """
            DELETE FROM messaging.rt_resume
            WHERE app_id = \(app) AND client_id = \(client) AND subscription_id = \(subscription)
                AND user_id = \(user ?? "") AND expires_at > now()
            RETURNING commit_lsn, index
            """, logger: logger)
        var point: ChangePosition?
        for try await (commit, index) in rows.decode((Int64, Int32).self) {
            point = ChangePosition(commit: UInt64(bitPattern: commit), index: Int(index))
        }
        return point
    }
}
