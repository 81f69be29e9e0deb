/// `email.send` (messaging-service): delivers one email through the configured SMTP relay and
/// answers once the relay has accepted it. Not idempotent: a lost answer is not retried.
package enum SendEmail: RPCOperation {
    package static let name = "email.send"
    package static let isIdempotent = false
    package static let callers: Set<ServiceName> = [.users]

    /// The message.
    package struct Request: Codable, Sendable, Equatable {
        /// Recipients.
        package var to: [String]
        /// Copy recipients.
        package var cc: [String]
        /// Blind-copy recipients (never in the headers).
        package var bcc: [String]
        /// One line.
        package var subject: String
        /// The plain-text part.
        package var text: String?
        /// The HTML part.
        package var html: String?

        /// Creates a message; at least one of `text` and `html` must be given.
        package init(to: [String], cc: [String] = [], bcc: [String] = [], subject: String, text: String?, html: String?)
        {
            self.to = to
            self.cc = cc
            self.bcc = bcc
            self.subject = subject
            self.text = text
            self.html = html
        }
    }

    /// The contract's MessageStatus.
    package struct Response: Codable, Sendable, Equatable {
        /// The `Message-ID` the email was sent with.
        package var messageId: String
        /// `PUBLISHED` once the relay accepted it.
        package var status: String

        /// Creates a status.
        package init(messageId: String, status: String) {
            self.messageId = messageId
            self.status = status
        }
    }
}
