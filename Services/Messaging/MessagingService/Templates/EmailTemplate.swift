import DataEngine
import InternalProtocol
import ServiceRuntime

/// An email template (contract §6, "Email from template"): a subject and text and/or HTML bodies
/// with ``Placeholders``, filled from the send's `template-values` and, for each user a
/// `criteria` finds, from `{Users.column}` of their row; values are HTML-escaped in the HTML
/// body and kept to one line in the subject.
struct EmailTemplate: Sendable, Equatable {
    let name: String
    let subject: String
    let text: String?
    let html: String?

    /// The longest subject and the longest body, in bytes.
    static let subjectLimit = 998
    static let bodyLimit = 512 * 1024

    /// `{"name", "subject", "bodyparts": {"textmessage"?, "htmlmessage"?}}`.
    var json: JSONValue {
        .object(
            JSONObject([
                ("name", .string(name)), ("subject", .string(subject)),
                (
                    "bodyparts",
                    .object(
                        JSONObject([
                            ("textmessage", text.map(JSONValue.string) ?? .null),
                            ("htmlmessage", html.map(JSONValue.string) ?? .null),
                        ]))
                ),
            ]))
    }

    /// A stored template.
    init(name: String, subject: String, text: String?, html: String?) {
        self.name = name
        self.subject = subject
        self.text = text
        self.html = html
    }

    /// Reads `{"subject", "bodyparts": {"textmessage"?, "htmlmessage"?}}` for template `name`; 5101 otherwise.
    init(name: String, _ body: JSONValue?) throws(ErrorEnvelope) {
        self.name = try Self.validatedName(name)
        guard let object = body?.object, case .string(let subject)? = object["subject"],
            subject.utf8.count <= Self.subjectLimit,
            !subject.contains(where: \.isNewline)
        else { throw MailError.invalid("A template needs a one-line 'subject' of at most \(Self.subjectLimit) bytes") }
        self.subject = subject
        let parts = object["bodyparts"]?.object ?? JSONObject()
        text = try Self.part(parts["textmessage"], "textmessage")
        html = try Self.part(parts["htmlmessage"], "htmlmessage")
        guard text != nil || html != nil else {
            throw MailError.invalid("A template needs 'bodyparts' with a text or an HTML message")
        }
    }

    /// 1 to 255 characters without `/` or control characters; 5101 otherwise.
    static func validatedName(_ name: String) throws(ErrorEnvelope) -> String {
        guard (1...255).contains(name.utf8.count),
            !name.contains(where: { $0 == "/" || $0.isNewline || $0.asciiValue.map { $0 < 32 } == true })
        else { throw MailError.invalid("A template name is 1 to 255 characters without '/'") }
        return name
    }

    private static func part(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.utf8.count <= bodyLimit: return text
        default: throw MailError.invalid("'\(name)' must be a string of at most \(bodyLimit) bytes")
        }
    }

    /// The email for `recipients`, its placeholders filled from `values`.
    func rendered(to recipients: Recipients, values: [String: String]) -> SendEmail.Request {
        let line = { (value: String) in String(value.map { $0.isNewline ? " " : $0 }) }
        return SendEmail.Request(
            to: recipients.to, cc: recipients.cc, bcc: recipients.bcc,
            subject: Placeholders.fill(subject, values, escape: line),
            text: text.map { Placeholders.fill($0, values, escape: { $0 }) },
            html: html.map { Placeholders.fill($0, values, escape: \.htmlEscaped) })
    }

    /// Who one rendering goes to.
    struct Recipients: Sendable {
        var to: [String]
        var cc: [String] = []
        var bcc: [String] = []
    }
}
