import DataEngine
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceRuntime

/// Each app's push credentials in `messaging.push_credentials`: what may be shown in `summary`,
/// the private key sealed by the ``SecretBox`` for that app, provider and exact summary, so a
/// database dump holds no usable key, a sealed key copied to another app's row does not open,
/// and a summary altered in the database (a `token_uri` pointed elsewhere) no longer opens its key.
struct PushCredentialStore: Sendable {
    /// The push providers.
    enum Provider: String, Sendable, CaseIterable {
        case apns, fcm
    }

    let database: PostgresClient
    let logger: Logger
    /// Nil when `BAAS_SECRETS_KEY` is not configured: credentials can then be neither set nor used.
    let box: SecretBox?

    /// Stores (replacing) the app's credential for `provider`.
    func put(app: String, _ provider: Provider, summary: JSONObject, key pem: String) async throws {
        guard let box else { throw MessagingError.secretsKeyMissing }
        let shown = JSONValue.object(summary).jsonText
        let sealed = try box.seal(pem, context: Self.context(app, provider, shown))
        try await database.run(
            """
            INSERT INTO messaging.push_credentials (app_id, provider, summary, sealed_key, updated)
            VALUES (\(app), \(provider.rawValue), \(shown), \(sealed), \(MessageStore.now()))
            ON CONFLICT (app_id, provider) DO UPDATE SET summary = excluded.summary, sealed_key = excluded.sealed_key,
                updated = excluded.updated
            """, logger: logger)
    }

    /// `{"apns"?: {…, "updated"}, "fcm"?: {…, "updated"}}`: what is set, never a key.
    func summaries(app: String) async throws -> JSONObject {
        let rows = try await database.query(
            "SELECT provider, summary, updated FROM messaging.push_credentials WHERE app_id = \(app) ORDER BY provider",
            logger: logger)
        var answer = JSONObject()
        for try await (provider, summary, updated) in rows.decode((String, String, Int64).self) {
            var object = try JSONParser.parse(Array(summary.utf8)).object ?? JSONObject()
            object["updated"] = .integer(updated)
            answer[provider] = .object(object)
        }
        return answer
    }

    /// Removes the app's credential for `provider`; false when there was none.
    func delete(app: String, _ provider: Provider) async throws -> Bool {
        let rows = try await database.query(
            "DELETE FROM messaging.push_credentials WHERE app_id = \(app) AND provider = \(provider.rawValue) RETURNING 1",
            logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    /// The app's APNs credential with its key opened, or nil.
    func apns(app: String) async throws -> APNsCredential? {
        guard let (summary, pem) = try await opened(app: app, .apns) else { return nil }
        return try APNsCredential(summary: summary, pem: pem)
    }

    /// The app's FCM service account with its key opened, or nil.
    func fcm(app: String) async throws -> FCMCredential? {
        guard let (summary, pem) = try await opened(app: app, .fcm) else { return nil }
        return try FCMCredential(summary: summary, pem: pem)
    }

    private func opened(app: String, _ provider: Provider) async throws -> (JSONObject, String)? {
        let rows = try await database.query(
            """
            SELECT summary, sealed_key FROM messaging.push_credentials WHERE app_id = \(app) AND provider = \(provider.rawValue)
            """, logger: logger)
        for try await (summary, sealed) in rows.decode((String, String).self) {
            guard let box else { throw MessagingError.secretsKeyMissing }
            let pem = try box.open(sealed, context: Self.context(app, provider, summary))
            return (try JSONParser.parse(Array(summary.utf8)).object ?? JSONObject(), pem)
        }
        return nil
    }

    /// What a sealed key is bound to.
    private static func context(_ app: String, _ provider: Provider, _ summary: String) -> String {
        "push-credential/\(provider.rawValue)/\(app)\n\(summary)"
    }
}
