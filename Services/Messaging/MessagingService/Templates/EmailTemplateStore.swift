import Logging
import PostgresNIO
import PostgresSupport

/// Each app's email templates in `messaging.email_templates`, by exact name.
struct EmailTemplateStore: Sendable {
    let database: PostgresClient
    let logger: Logger

    /// Stores (replacing) a template.
    func put(app: String, _ template: EmailTemplate) async throws {
        try await database.run(
            """
            INSERT INTO messaging.email_templates (app_id, name, subject, text_body, html_body, updated)
            VALUES (\(app), \(template.name), \(template.subject), \(template.text), \(template.html), \(MessageStore.now()))
            ON CONFLICT (app_id, name) DO UPDATE SET subject = excluded.subject, text_body = excluded.text_body,
                html_body = excluded.html_body, updated = excluded.updated
            """, logger: logger)
    }

    /// The template called `name`, or nil.
    func template(app: String, name: String) async throws -> EmailTemplate? {
        let rows = try await database.query(
            "SELECT subject, text_body, html_body FROM messaging.email_templates WHERE app_id = \(app) AND name = \(name)",
            logger: logger)
        for try await (subject, text, html) in rows.decode((String, String?, String?).self) {
            return EmailTemplate(name: name, subject: subject, text: text, html: html)
        }
        return nil
    }

    /// The app's template names, in order.
    func names(app: String) async throws -> [String] {
        let rows = try await database.query(
            "SELECT name FROM messaging.email_templates WHERE app_id = \(app) ORDER BY name", logger: logger)
        var names: [String] = []
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }

    /// Removes a template; false when there was none.
    func delete(app: String, name: String) async throws -> Bool {
        let rows = try await database.query(
            "DELETE FROM messaging.email_templates WHERE app_id = \(app) AND name = \(name) RETURNING 1", logger: logger
        )
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }
}
