import DataEngine
import Foundation
import PostgresNIO
import ServiceRuntime

/// The emails users-service sends, per app and event: defaults here, edits in
/// `users.email_templates`. `{{name}}` placeholders are replaced with values, HTML-escaped in
/// the HTML part; `enabled` false means "do not send email for the event".
struct EmailTemplate: Sendable, Equatable, Codable {
    /// The events that send email.
    enum Event: String, CaseIterable, Sendable {
        /// Registration while email confirmation is on; `{{link}}` confirms.
        case confirmation
        /// `restorepassword`; `{{link}}` opens the page that sets a new password.
        case passwordReset
    }

    var subject: String
    var text: String
    var html: String
    var enabled = true

    init(subject: String, text: String, html: String, enabled: Bool = true) {
        self.subject = subject
        self.text = text
        self.html = html
        self.enabled = enabled
    }

    /// `enabled` may be left out (true).
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(String.self, forKey: .subject)
        text = try container.decode(String.self, forKey: .text)
        html = try container.decode(String.self, forKey: .html)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
    }

    /// The longest subject and bodies an edit may store.
    static let subjectLimit = 998
    static let bodyLimit = 100_000

    static func standard(_ event: Event) -> EmailTemplate {
        switch event {
        case .confirmation:
            EmailTemplate(
                subject: "Confirm your email address",
                text: "Hello {{name}},\n\nplease confirm your email address by opening this link:\n{{link}}\n\n"
                    + "If you did not register, ignore this email.\n",
                html: "<p>Hello {{name}},</p><p>please <a href=\"{{link}}\">confirm your email address</a>.</p>"
                    + "<p>If you did not register, ignore this email.</p>")
        case .passwordReset:
            EmailTemplate(
                subject: "Reset your password",
                text: "Hello {{name}},\n\nset a new password by opening this link:\n{{link}}\n\n"
                    + "The link works once and expires in {{minutes}} minutes. If you did not ask for it, ignore this email.\n",
                html: "<p>Hello {{name}},</p><p><a href=\"{{link}}\">Set a new password</a>.</p>"
                    + "<p>The link works once and expires in {{minutes}} minutes. If you did not ask for it, ignore this email.</p>"
            )
        }
    }

    /// The app's template for `event`: its edit, or the default.
    static func load(appID: String, event: Event, session: DatabaseSession) async throws -> EmailTemplate {
        var sql = SQL("SELECT subject, text_body, html_body, enabled FROM users.email_templates WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND event = ")
        sql.bind(.text(event.rawValue))
        guard let row = try await session.rows(sql).first else { return standard(event) }
        let (subject, text, html, enabled) = try row.decode((String, String, String, Bool).self)
        return EmailTemplate(subject: subject, text: text, html: html, enabled: enabled)
    }

    /// Stores the app's edit of `event`.
    func save(appID: String, event: Event, session: DatabaseSession) async throws {
        var sql = SQL(
            "INSERT INTO users.email_templates (app_id, event, subject, text_body, html_body, enabled) VALUES (")
        sql.bind(all: [
            .text(appID), .text(event.rawValue), .text(subject), .text(text), .text(html), .boolean(enabled),
        ])
        sql.append(
            """
            ) ON CONFLICT (app_id, event) DO UPDATE SET subject = excluded.subject, text_body = excluded.text_body,
            html_body = excluded.html_body, enabled = excluded.enabled
            """)
        _ = try await session.rows(sql)
    }

    /// Subject, text and HTML with `values` filled in.
    func rendered(_ values: [String: String]) -> (subject: String, text: String, html: String) {
        func fill(_ template: String, escape: (String) -> String) -> String {
            values.reduce(template) { $0.replacingOccurrences(of: "{{\($1.key)}}", with: escape($1.value)) }
        }
        let subjectValues = values.mapValues { $0.filter { !$0.isNewline } }
        return (
            subjectValues.reduce(subject) { $0.replacingOccurrences(of: "{{\($1.key)}}", with: $1.value) },
            fill(text) { $0 }, fill(html, escape: \.htmlEscaped)
        )
    }
}
