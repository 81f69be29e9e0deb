import DataEngine
import Foundation
import InternalProtocol
import Logging

extension Accounts {
    /// `GET /users/settings` (server-code key): the app's user policy.
    package func settings(identity: Identity, logger: Logger) async throws -> String {
        try Self.requireServerCode(identity)
        return try String(
            decoding: JSONEncoder().encode(try await policy(identity.appId, logger: logger)), as: UTF8.self)
    }

    /// `PUT /users/settings` (server-code key): changes the named policy fields; unknown
    /// fields, wrong types and out-of-range values are a 400 and change nothing.
    package func changeSettings(body: Data, identity: Identity, logger: Logger) async throws -> String {
        try Self.requireServerCode(identity)
        var current = try await policy(identity.appId, logger: logger)
        guard let changes = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw ErrorEnvelope.badRequest("The body must be a JSON object of user settings")
        }
        var merged = try JSONSerialization.jsonObject(with: JSONEncoder().encode(current)) as? [String: Any] ?? [:]
        for (key, value) in changes {
            guard merged[key] != nil else { throw ErrorEnvelope.badRequest("Unknown user setting '\(key)'") }
            merged[key] = value
        }
        do {
            current = try JSONDecoder().decode(UserPolicy.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch {
            throw ErrorEnvelope.badRequest("A user setting has the wrong type")
        }
        try current.validate()
        // Columns first: a failure there leaves the stored policy as it was.
        try await engine.ensure(
            table: Self.usersTable, columns: Self.profileColumns(current), appID: identity.appId, logger: logger)
        try await current.save(appID: identity.appId, session: pool(logger))
        return try String(decoding: JSONEncoder().encode(current), as: UTF8.self)
    }

    /// `GET /users/emailtemplates/{event}` (server-code key): the template in use.
    package func emailTemplate(_ event: String, identity: Identity, logger: Logger) async throws -> String {
        try Self.requireServerCode(identity)
        let template = try await EmailTemplate.load(
            appID: identity.appId, event: try Self.event(event), session: pool(logger))
        return try String(decoding: JSONEncoder().encode(template), as: UTF8.self)
    }

    /// `PUT /users/emailtemplates/{event}` (server-code key): `{subject, text, html, enabled}`.
    package func changeEmailTemplate(_ event: String, body: Data, identity: Identity, logger: Logger) async throws
        -> String
    {
        try Self.requireServerCode(identity)
        let event = try Self.event(event)
        guard let template = try? JSONDecoder().decode(EmailTemplate.self, from: body) else {
            throw ErrorEnvelope.badRequest("The body must be {subject, text, html, enabled}")
        }
        guard !template.subject.contains(where: \.isNewline), template.subject.count <= EmailTemplate.subjectLimit,
            template.text.utf8.count <= EmailTemplate.bodyLimit, template.html.utf8.count <= EmailTemplate.bodyLimit
        else { throw ErrorEnvelope.badRequest("The subject must be one line; bodies may hold 100000 bytes") }
        try await template.save(appID: identity.appId, event: event, session: pool(logger))
        return try String(decoding: JSONEncoder().encode(template), as: UTF8.self)
    }

    private static func event(_ name: String) throws -> EmailTemplate.Event {
        guard let event = EmailTemplate.Event(rawValue: name) else {
            throw ErrorEnvelope(
                code: 404,
                message: "No email template '\(name)': one of \(EmailTemplate.Event.allCases.map(\.rawValue))",
                status: 404)
        }
        return event
    }
}
