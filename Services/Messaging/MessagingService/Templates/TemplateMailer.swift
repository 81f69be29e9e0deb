import DataEngine
import Foundation
import InternalProtocol
import Logging
import QueryLanguage
import ServiceRuntime

/// Sends a template: one email to the listed addresses (filled from the template values), and
/// one to each user the criteria finds (filled from their `Users` row as well), each address
/// once with `uniqueEmails`, each with the same attachments. Every email is rendered and
/// checked, and every attachment described, before the first is sent.
struct TemplateMailer: Sendable {
    let templates: EmailTemplateStore
    let mailer: Mailer
    let engine: DataEngine
    let logger: Logger

    /// `{"messageId", "status": "PUBLISHED", "sent"}` once the relay has accepted every email;
    /// 24002 for an unknown template.
    func send(_ request: TemplateSend, identity: Identity, context: CallContext) async throws -> JSONValue {
        guard let template = try await templates.template(app: identity.appId, name: request.templateName) else {
            throw EmailTemplateRoutes.unknown(request.templateName)
        }
        var emails: [SendEmail.Request] = []
        let listed = request.recipients.to + request.recipients.cc + request.recipients.bcc
        if !listed.isEmpty { emails.append(template.rendered(to: request.recipients, values: request.values)) }
        if let criteria = request.criteria {
            var seen = Set(listed.map { $0.lowercased() })
            for user in try await users(criteria, identity: identity) {
                guard case .string(let address)? = user["email"], !address.isEmpty else { continue }
                if request.uniqueEmails, !seen.insert(address.lowercased()).inserted { continue }
                var values = request.values
                for (name, value) in user.members { values["Users." + name] = value.templateText }
                emails.append(template.rendered(to: .init(to: [address]), values: values))
            }
        }
        for email in emails { try mailer.check(email) }
        let attachments = try await mailer.attachments(request.attachments, context: context)
        var last: SendEmail.Response?
        for (index, email) in emails.enumerated() {
            do {
                last = try await mailer.send(email, attachments: attachments, within: context)
            } catch let error as ErrorEnvelope where index > 0 {
                throw ErrorEnvelope(
                    code: error.code, message: "\(error.message) (\(index) of \(emails.count) emails were sent)",
                    status: error.status)
            }
        }
        return .object(
            JSONObject([
                ("messageId", last.map { .string($0.messageId) } ?? .null), ("status", .string("PUBLISHED")),
                ("sent", .integer(Int64(emails.count))),
            ]))
    }

    /// The users `criteria` finds (with the caller's rights), at most ``TemplateSend/criteriaLimit``,
    /// with `FILE_REF` values as paths: a URL would carry the caller's API key into other
    /// people's mailboxes.
    private func users(_ criteria: Condition, identity: Identity) async throws -> [JSONObject] {
        var query = FindQuery()
        query.condition = criteria
        // One more than allowed: finding it means too many.
        query.pageSize = TemplateSend.criteriaLimit + 1
        query.sort = [SortItem(expression: .property(PropertyPath(["objectId"])), descending: false)]
        let found = try await FileLinks.$base.withValue(nil) {
            try await engine.find("Users", query: query, identity: identity, logger: logger)
        }
        guard found.count <= TemplateSend.criteriaLimit else {
            throw MailError.invalid("'criteria' finds more than \(TemplateSend.criteriaLimit) users: narrow it")
        }
        return try found.compactMap { text in try JSONParser.parse(Array(text.utf8)).object }
    }
}
