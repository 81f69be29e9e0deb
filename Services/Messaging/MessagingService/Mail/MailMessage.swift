import Foundation
import InternalProtocol

/// An email ready for SMTP: sender, recipients, subject and a plain-text and/or HTML body,
/// rendered as RFC 5322 + MIME with UTF-8 base64 parts.
struct MailMessage: Sendable {
    var from: String
    var to: [String]
    var cc: [String] = []
    var bcc: [String] = []
    var subject: String
    var text: String?
    var html: String?
    /// Files sent as attachments (multipart/mixed), read while the message is written.
    var attachments: [MailAttachment] = []

    /// Every envelope recipient (Bcc included, never in the headers).
    var recipients: [String] { to + cc + bcc }

    /// The longest subject accepted.
    static let subjectLimit = 998
    /// Most recipients of one message.
    static let recipientLimit = 100

    /// Checks addresses, subject and body; throws 5101 with the reason.
    func validate() throws {
        guard !recipients.isEmpty else { throw MailError.invalid("An email needs at least one recipient") }
        guard recipients.count <= Self.recipientLimit else {
            throw MailError.invalid("An email may have at most \(Self.recipientLimit) recipients")
        }
        for address in recipients + [from] where !Self.isValidAddress(address) {
            throw MailError.invalid("'\(address)' is not a valid email address")
        }
        guard !subject.contains(where: \.isNewline), subject.count <= Self.subjectLimit else {
            throw MailError.invalid("The subject must be one line of at most \(Self.subjectLimit) characters")
        }
        guard text != nil || html != nil else { throw MailError.invalid("An email needs a text or an HTML body") }
    }

    /// A bare `local@domain` address without spaces, angle brackets or line breaks (no header
    /// or command can be smuggled through it).
    static func isValidAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, address.utf8.count <= 254 else { return false }
        return !address.contains { $0.isWhitespace || $0.isNewline || "<>()[],;:\"\\".contains($0) }
    }

    /// The message as sent after DATA, CRLF line ends, without the final dot: text pieces that
    /// each end a line, and the attachments whose base64 bytes go between them.
    func rendered(messageID: String, date: Date) -> [MailPiece] {
        let headers =
            [
                "From: \(from)", "To: " + Self.folded(to),
            ] + (cc.isEmpty ? [] : ["Cc: " + Self.folded(cc)]) + [
                "Subject: \(Self.encodedWord(subject))", "Date: \(Self.rfc5322(date))", "Message-ID: <\(messageID)>",
                "MIME-Version: 1.0",
            ]
        guard !attachments.isEmpty else { return [.text(Self.lines(headers + bodyPart()))] }
        let boundary = Self.boundary()
        var pieces: [MailPiece] = [
            .text(
                Self.lines(
                    headers + ["Content-Type: multipart/mixed; boundary=\"\(boundary)\"", "", "--" + boundary]
                        + bodyPart()))
        ]
        for attachment in attachments {
            pieces.append(.text(Self.lines(["--" + boundary] + Self.headers(of: attachment) + [""])))
            pieces.append(.attachment(attachment))
        }
        pieces.append(.text(Self.lines(["--" + boundary + "--"])))
        return pieces
    }

    /// The text and/or HTML body as one part (multipart/alternative when both).
    private func bodyPart() -> [String] {
        let parts = [("text/plain", text), ("text/html", html)].compactMap { type, body in body.map { (type, $0) } }
        if parts.count == 1 { return Self.part(type: parts[0].0, body: parts[0].1) }
        let boundary = Self.boundary()
        var lines = ["Content-Type: multipart/alternative; boundary=\"\(boundary)\"", ""]
        for (type, body) in parts {
            lines.append("--" + boundary)
            lines += Self.part(type: type, body: body)
        }
        lines.append("--" + boundary + "--")
        return lines
    }

    private static func boundary() -> String { "=_" + UUID().uuidString }

    private static func lines(_ lines: [String]) -> String { lines.joined(separator: "\r\n") + "\r\n" }

    /// An attachment's part headers: its media type, and its name as ASCII (others replaced)
    /// and as UTF-8 (RFC 2231), on folded lines well within the 998-octet limit.
    static func headers(of attachment: MailAttachment) -> [String] {
        let ascii = String(
            attachment.name.unicodeScalars.map {
                $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" ? Character($0) : "_"
            })
        return [
            "Content-Type: \(mediaType(attachment.contentType)); name=\"\(ascii)\"",
            // The extended name first: readers that take either prefer the one they meet first.
            "Content-Disposition: attachment;", " filename*=UTF-8''\(PercentEncoding.encodeSegment(attachment.name));",
            " filename=\"\(ascii)\"",
            "Content-Transfer-Encoding: base64",
        ]
    }

    /// `text` when it is `type/subtype` with `; name=value` parameters made of token characters
    /// only (RFC 2045), else `application/octet-stream`: nothing else can reach a header.
    static func mediaType(_ text: String) -> String {
        let token = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
        func isToken(_ part: Substring) -> Bool {
            !part.isEmpty && part.count <= 127 && part.allSatisfy(token.contains)
        }
        let pieces = text.split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)[...]
        }
        let type = pieces[0].split(separator: "/", omittingEmptySubsequences: false)
        let parameters = pieces.dropFirst().map { $0.split(separator: "=", omittingEmptySubsequences: false) }
        guard type.count == 2, type.allSatisfy(isToken),
            parameters.allSatisfy({ $0.count == 2 && $0.allSatisfy(isToken) })
        else {
            return "application/octet-stream"
        }
        return ([String(pieces[0])] + parameters.map { $0.joined(separator: "=") }).joined(separator: "; ")
    }

    /// A part's headers, a blank line and its base64 body in 76-character lines.
    private static func part(type: String, body: String) -> [String] {
        let encoded = Data(body.utf8).base64EncodedString(options: [
            .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
        ])
        return [
            "Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: base64", "",
        ] + encoded.components(separatedBy: "\r\n")
    }

    /// Addresses one per line (folded), so no header line nears the 998-octet limit.
    static func folded(_ addresses: [String]) -> String {
        addresses.joined(separator: ",\r\n ")
    }

    /// A short plain-ASCII subject as is; anything else as RFC 2047 encoded words of at most
    /// 45 bytes of text each (75 characters encoded), one per folded line, never splitting a
    /// character.
    static func encodedWord(_ text: String) -> String {
        if text.count <= 70, text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) { return text }
        var words: [String] = []
        var chunk = ""
        for character in text {
            if chunk.utf8.count + String(character).utf8.count > 45, !chunk.isEmpty {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty || words.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?" + Data($0.utf8).base64EncodedString() + "?=" }.joined(separator: "\r\n ")
    }

    static func rfc5322(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}

/// A piece of a rendered message: text as it is sent (whole lines), or an attachment whose
/// bytes are read and base64-encoded as they are sent.
enum MailPiece: Sendable, Equatable {
    case text(String)
    case attachment(MailAttachment)
}
