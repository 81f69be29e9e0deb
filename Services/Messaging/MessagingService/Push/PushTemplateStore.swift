import DataEngine
import Logging
import PostgresNIO
import PostgresSupport

/// Each app's push templates in `messaging.push_templates`, by exact name.
struct PushTemplateStore: Sendable {
    let database: PostgresClient
    let logger: Logger

    func put(app: String, _ template: PushTemplate) async throws {
        try await database.run(
            """
            INSERT INTO messaging.push_templates (app_id, name, body) VALUES (\(app), \(template.name), \(JSONValue.object(template.body).jsonText))
            ON CONFLICT (app_id, name) DO UPDATE SET body = excluded.body
            """, logger: logger)
    }

    func template(app: String, name: String) async throws -> PushTemplate? {
        let rows = try await database.query(
            "SELECT body FROM messaging.push_templates WHERE app_id = \(app) AND name = \(name)", logger: logger)
        for try await body in rows.decode(String.self) {
            return PushTemplate(name: name, body: (try? JSONParser.parse(Array(body.utf8)))?.object ?? JSONObject())
        }
        return nil
    }

    /// The app's templates by name, at most 1,000.
    func all(app: String) async throws -> [PushTemplate] {
        let rows = try await database.query(
            "SELECT name, body FROM messaging.push_templates WHERE app_id = \(app) ORDER BY name LIMIT 1000",
            logger: logger)
        var templates: [PushTemplate] = []
        for try await (name, body) in rows.decode((String, String).self) {
            templates.append(
                PushTemplate(name: name, body: (try? JSONParser.parse(Array(body.utf8)))?.object ?? JSONObject()))
        }
        return templates
    }

    func delete(app: String, name: String) async throws -> Bool {
        let rows = try await database.query(
            "DELETE FROM messaging.push_templates WHERE app_id = \(app) AND name = \(name) RETURNING 1", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }
}
