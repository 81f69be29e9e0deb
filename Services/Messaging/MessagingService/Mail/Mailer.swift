import Foundation
import InternalProtocol
import ServiceRuntime

/// Sends apps' email through the relay, or refuses with 5100 when none is configured.
package struct Mailer: Sendable {
    let relay: MailRelay?
    /// The longest one relay session may take, whatever the caller's deadline.
    let sessionLimit: Duration
    /// Where attachments come from; nil: emails cannot carry any.
    let files: AttachmentFiles?

    /// A mailer over `relay` (nil: email is not configured); a session ends after `sessionLimit`.
    package init(relay: MailRelay?, sessionLimit: Duration = .seconds(30)) {
        self.init(relay: relay, sessionLimit: sessionLimit, files: nil)
    }

    /// A mailer that can attach `files`.
    init(relay: MailRelay?, sessionLimit: Duration = .seconds(30), files: AttachmentFiles?) {
        self.relay = relay
        self.sessionLimit = sessionLimit
        self.files = files
    }

    /// Validates and delivers `request` within the caller's deadline (at most `sessionLimit`); the
    /// contract's MessageStatus.
    package func send(_ request: SendEmail.Request, within context: CallContext) async throws -> SendEmail.Response {
        try await send(request, attachments: [], within: context)
    }

    /// `request` with `attachments` (from ``attachments(_:context:)``), their bytes read with
    /// `context`'s identity while the message is written to the relay.
    func send(_ request: SendEmail.Request, attachments: [MailAttachment], within context: CallContext) async throws
        -> SendEmail.Response
    {
        var (relay, message) = try checked(request)
        message.attachments = attachments
        let messageID =
            UUID().uuidString.lowercased() + "@"
            + (relay.from.split(separator: "@").last.map(String.init) ?? "localhost")
        let limit = Int64(sessionLimit.components.seconds * 1000)
        let remaining = max(1, min(limit, Int64(context.remainingMilliseconds) - 200))
        let reader: SMTPClient.AttachmentReader? = files.map { files in
            { @Sendable attachment, consume in try await files.read(attachment, context: context, into: consume) }
        }
        try await SMTPClient(relay: relay, timeout: .milliseconds(remaining), attachments: reader).send(
            message, messageID: messageID)
        return SendEmail.Response(messageId: messageID, status: "PUBLISHED")
    }

    /// The files `paths` name as attachments, checked before anything is sent (``AttachmentFiles``).
    func attachments(_ paths: [String], context: CallContext) async throws -> [MailAttachment] {
        guard !paths.isEmpty else { return [] }
        guard let files else { throw MailError.invalid("Attachments are not available here") }
        return try await files.describe(paths, context: context)
    }

    /// 5100 without a relay, 5101 when `request` could not be sent (recipients, addresses, subject, body).
    func check(_ request: SendEmail.Request) throws {
        _ = try checked(request)
    }

    private func checked(_ request: SendEmail.Request) throws -> (MailRelay, MailMessage) {
        guard let relay else { throw MailError.notConfigured }
        let message = MailMessage(
            from: relay.from, to: request.to, cc: request.cc, bcc: request.bcc, subject: request.subject,
            text: request.text, html: request.html)
        try message.validate()
        return (relay, message)
    }
}
