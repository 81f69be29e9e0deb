import DataEngine
import InternalProtocol
import QueryLanguage

/// A `POST emailtemplate/send` body (contract §6): `template-name`, `addresses`, `cc-addresses`,
/// `bcc-addresses`, `criteria` (a where clause over `Users`), `uniqueEmails` (default true),
/// `template-values`; attachments are refused (5101) until email carries files.
struct TemplateSend: Sendable {
    let templateName: String
    let recipients: EmailTemplate.Recipients
    let criteria: Condition?
    let uniqueEmails: Bool
    let values: [String: String]

    /// The most users one send may reach through `criteria`.
    static let criteriaLimit = 100

    init(_ body: JSONValue?) throws(ErrorEnvelope) {
        guard let object = body?.object else { throw MailError.invalid("The body must be a JSON object with 'template-name'") }
        guard case .string(let name)? = object["template-name"] ?? object["templateName"] else {
            throw MailError.invalid("'template-name' must name a template")
        }
        templateName = try EmailTemplate.validatedName(name)
        recipients = EmailTemplate.Recipients(
            to: try Self.addresses(object["addresses"], "addresses"), cc: try Self.addresses(object["cc-addresses"], "cc-addresses"),
            bcc: try Self.addresses(object["bcc-addresses"], "bcc-addresses"))
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
        values = try Placeholders.values(object["template-values"] ?? object["templateValues"], "template-values", refusal: MailError.invalid)
        if case .array(let files)? = object["attachment"], !files.isEmpty { throw MailError.invalid("Attachments are not supported yet") }
        guard criteria != nil || !(recipients.to + recipients.cc + recipients.bcc).isEmpty else {
            throw MailError.invalid("Name 'addresses' (or cc, bcc) or a 'criteria' over Users")
        }
    }

    private static func addresses(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> [String] {
        switch value {
        case nil, .null?: return []
        case .array(let items)?:
            var addresses: [String] = []
            for item in items {
                guard case .string(let address) = item else { throw MailError.invalid("'\(name)' must be email addresses") }
                addresses.append(address)
            }
            return addresses
        default: throw MailError.invalid("'\(name)' must be an array of email addresses")
        }
    }
}
