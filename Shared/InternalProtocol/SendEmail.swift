/// `email.send` (messaging-service): delivers one email through the configured SMTP relay and
/// answers once the relay has accepted it. Not idempotent: a lost answer is not retried.
public enum SendEmail: RPCOperation {
    public static let name = "email.send"
    public static let isIdempotent = false
    public static let callers: Set<ServiceName> = [.users]

    /// The message.
    public struct Request: Codable, Sendable, Equatable {
        /// Recipients.
        public var to: [String]
        /// Copy recipients.
        public var cc: [String]
        /// Blind-copy recipients (never in the headers).
        public var bcc: [String]
        /// One line.
        public var subject: String
        /// The plain-text part.
        public var text: String?
        /// The HTML part.
        public var html: String?

        /// Creates a message; at least one of `text` and `html` must be given.
        public init(to: [String], cc: [String] = [], bcc: [String] = [], subject: String, text: String?, html: String?) {
            self.to = to
            self.cc = cc
            self.bcc = bcc
            self.subject = subject
            self.text = text
            self.html = html
        }
    }

    /// The contract's MessageStatus.
    public struct Response: Codable, Sendable, Equatable {
        /// The `Message-ID` the email was sent with.
        public var messageId: String
        /// `PUBLISHED` once the relay accepted it.
        public var status: String

        /// Creates a status.
        public init(messageId: String, status: String) {
            self.messageId = messageId
            self.status = status
        }
    }
}
