import DataEngine
import InternalProtocol
import QueryLanguage

/// A `POST emailtemplate/send` body (contract §6): `template-name`, `addresses`, `cc-addresses`,
/// `bcc-addresses`, `criteria` (a where clause over `Users`), `uniqueEmails` (default true),
/// `template-values`, `attachment` (paths in file storage; `attachments` too).
struct TemplateSend: Sendable {
    let templateName: String
    let recipients: EmailTemplate.Recipients
    let criteria: Condition?
    let uniqueEmails: Bool
    let values: [String: String]
    /// Paths of files in storage every email carries.
    let attachments: [String]

    /// The most users one send may reach through `criteria`.
    static let criteriaLimit = 100

    init(_ body: JSONValue?) throws(ErrorEnvelope) {
        guard let object = body?.object else {
            throw MailError.invalid("The body must be a JSON object with 'template-name'")
        }
        guard case .string(let name)? = object["template-name"] ?? object["templateName"] else {
            throw MailError.invalid("'template-name' must name a template")
        }
        templateName = try EmailTemplate.validatedName(name)
        recipients = EmailTemplate.Recipients(
            to: try Self.strings(object["addresses"], "addresses"),
            cc: try Self.strings(object["cc-addresses"], "cc-addresses"),
            bcc: try Self.strings(object["bcc-addresses"], "bcc-addresses"))
        switch object["criteria"] {
        case nil, .null?: criteria = nil
        case .string(let text)?:
            do {
                criteria = text.allSatisfy(\.isWhitespace) ? nil : try QueryParser.condition(text)
            } catch {
                throw MailError.invalid("'criteria' is not a where clause: \(error)")
            }
        default: throw MailError.invalid("'criteria' must be a where clause over Users")
        }
        switch object["uniqueEmails"] {
        case nil, .null?: uniqueEmails = true
        case .bool(let unique)?: uniqueEmails = unique
        default: throw MailError.invalid("'uniqueEmails' must be a boolean")
        }
        values = try Placeholders.values(
            object["template-values"] ?? object["templateValues"], "template-values", refusal: MailError.invalid)
        attachments =
            try Self.strings(object["attachment"], "attachment") + Self.strings(object["attachments"], "attachments")
        guard criteria != nil || !(recipients.to + recipients.cc + recipients.bcc).isEmpty else {
            throw MailError.invalid("Name 'addresses' (or cc, bcc) or a 'criteria' over Users")
        }
    }

    /// An array of strings (addresses or paths) under `name`; absent is empty.
    private static func strings(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> [String] {
        switch value {
        case nil, .null?: return []
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let text) = item else {
                    throw MailError.invalid("'\(name)' must be an array of strings")
                }
                strings.append(text)
            }
            return strings
        default: throw MailError.invalid("'\(name)' must be an array of strings")
        }
    }
}
