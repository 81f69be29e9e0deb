import PostgresNIO
import PostgresSupport

extension MessageStore {
    /// How long the app's messages can be polled, in ms (the default unless set).
    func retention(app: String) async throws -> Int64 {
        let rows = try await database.query(
            "SELECT retention FROM messaging.settings WHERE app_id = \(app)", logger: logger)
        for try await value in rows.decode(Int64.self) { return value }
        return retention
    }

    /// Sets how long the app's messages published from now on can be polled, in ms.
    func setRetention(app: String, _ milliseconds: Int64) async throws {
        try await database.run(
            """
            INSERT INTO messaging.settings (app_id, retention) VALUES (\(app), \(milliseconds))
            ON CONFLICT (app_id) DO UPDATE SET retention = excluded.retention
            """, logger: logger)
    }

    /// The channel and publishing user (nil: published without a user token) of a publish that
    /// is still scheduled; nil when there is none.
    func scheduled(app: String, id: String) async throws -> (channel: String, publisher: String?)? {
        let rows = try await database.query(
            "SELECT channel, publisher_user FROM messaging.schedules WHERE app_id = \(app) AND id = \(id) AND status = 'scheduled'",
            logger: logger)
        for try await (channel, publisher) in rows.decode((String, String?).self) { return (channel, publisher) }
        return nil
    }
}
