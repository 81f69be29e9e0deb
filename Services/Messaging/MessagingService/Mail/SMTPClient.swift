import Foundation
import InternalProtocol
import NIOCore
import NIOPosix
import NIOSSL
import ServiceRuntime

/// Delivers one message per SMTP session to the relay: greeting, EHLO, STARTTLS (and EHLO
/// again), AUTH, MAIL, RCPT, DATA, QUIT. Credentials are only ever sent over TLS, and the
/// relay's certificate is verified against the configured roots.
struct SMTPClient: Sendable {
    let relay: MailRelay
    /// How long one delivery may take from connecting to the relay's final answer.
    let timeout: Duration
    /// Where attachments' bytes come from.
    let attachments: AttachmentReader?

    /// Hands an attachment's bytes to the consumer as they are read.
    typealias AttachmentReader =
        @Sendable (MailAttachment, _ consume: (ByteBuffer) async throws -> Void) async throws -> Void

    init(relay: MailRelay, timeout: Duration = .seconds(30), attachments: AttachmentReader? = nil) {
        self.relay = relay
        self.timeout = timeout
        self.attachments = attachments
    }

    /// A refusal or protocol failure, in words the sender may see.
    struct Failure: Error {
        let message: String
    }

    /// Sends `message`; 5102 when the relay cannot be reached or refuses it.
    func send(_ message: MailMessage, messageID: String) async throws {
        let data = message.rendered(messageID: messageID, date: Date())
        do {
            try await withTimeout(timeout) { try await deliver(message, data: data) }
        } catch let failure as Failure {
            throw MailError.delivery(failure.message)
        } catch is TimeoutError {
            throw MailError.delivery("the relay did not answer in time")
        } catch {
            throw MailError.delivery("cannot reach \(relay.host):\(relay.port) (\(error))")
        }
    }

    private func deliver(_ message: MailMessage, data: [MailPiece]) async throws {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: relay.host, port: relay.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                    return try NIOAsyncChannel<SMTPReply, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var conversation = SMTPConversation(replies: inbound.makeAsyncIterator(), outbound: outbound)
            do {
                try await converse(&conversation, message: message, data: data, channel: channel.channel)
            } catch {
                // QUIT lets the relay close first (a TLS close without it can stall); its answer
                // is not awaited, so the relay's own refusal is what the caller hears. Within
                // DATA it would be text: closing without the final dot discards the message.
                if !conversation.writingData { try? await conversation.send("QUIT\r\n") }
                throw error
            }
        }
    }

    private func converse(
        _ conversation: inout SMTPConversation, message: MailMessage, data: [MailPiece], channel: any Channel
    )
        async throws
    {
        _ = try await conversation.expect([220])
        try await negotiate(&conversation, channel: channel)
        try await conversation.command("MAIL FROM:<\(message.from)>", expect: [250])
        for recipient in message.recipients {
            try await conversation.command("RCPT TO:<\(recipient)>", expect: [250, 251])
        }
        try await conversation.command("DATA", expect: [354])
        conversation.writingData = true
        for piece in data {
            switch piece {
            case .text(let text): try await conversation.send(Self.dotStuffed(text))
            case .attachment(let attachment): try await write(attachment, to: conversation.outbound)
            }
        }
        try await conversation.send(".\r\n")
        conversation.writingData = false
        _ = try await conversation.expect([250])
        // Accepted: the delivery stands whatever QUIT answers, so it is not awaited.
        try? await conversation.send("QUIT\r\n")
    }

    /// `attachment` base64-encoded as it is read (base64 lines never start with a dot).
    private func write(_ attachment: MailAttachment, to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>)
        async throws
    {
        guard let attachments else { throw Failure(message: "attachments cannot be read here") }
        var encoder = Base64Lines()
        var relayFailure: (any Error)?
        do {
            try await attachments(attachment) { chunk in
                let lines = encoder.encode(chunk)
                guard lines.readableBytes > 0 else { return }
                do {
                    try await outbound.write(lines)
                } catch {
                    relayFailure = error
                    throw error
                }
            }
        } catch {
            if let relayFailure { throw relayFailure }
            let reason = (error as? ErrorEnvelope)?.message ?? "files-service stopped answering"
            throw Failure(message: "attachment '/\(attachment.path)' could not be read: \(reason)")
        }
        let last = encoder.finish()
        if last.readableBytes > 0 { try await outbound.write(last) }
    }

    /// EHLO, STARTTLS as the relay settings ask, and AUTH.
    private func negotiate(_ conversation: inout SMTPConversation, channel: any Channel) async throws {
        var capabilities = try await conversation.hello(relay.heloName)
        var secure = false
        if relay.startTLS != .off, capabilities.contains("STARTTLS") {
            try await conversation.command("STARTTLS", expect: [220])
            try await startTLS(on: channel)
            secure = true
            capabilities = try await conversation.hello(relay.heloName)
        } else if relay.startTLS == .required {
            throw Failure(message: "the relay does not offer STARTTLS")
        }
        if let username = relay.username {
            guard secure else { throw Failure(message: "refusing to send SMTP credentials without TLS") }
            try await conversation.authenticate(username, relay.password ?? "", capabilities: capabilities)
        }
    }

    /// Puts a TLS client in front of the pipeline, verifying the relay's certificate (its host
    /// name, or its address when the relay is named by one).
    private func startTLS(on channel: any Channel) async throws {
        let context = try NIOSSLContext(configuration: relay.tlsConfiguration())
        let isAddress = (try? SocketAddress(ipAddress: relay.host, port: 0)) != nil
        let hostname = isAddress ? nil : relay.host
        try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(
                try NIOSSLClientHandler(context: context, serverHostname: hostname), position: .first)
        }.get()
    }

    /// CRLF line ends and a second dot before every line that starts with one (RFC 5321 §4.5.2).
    static func dotStuffed(_ text: String) -> String {
        text.components(separatedBy: "\r\n").map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(separator: "\r\n")
    }
}

/// The command/reply exchange over one connection.
struct SMTPConversation {
    var replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    /// Between DATA's 354 and the final dot, where every byte sent is the message's.
    var writingData = false

    /// The next reply, which must have one of `codes`.
    mutating func expect(_ codes: Set<Int>) async throws -> SMTPReply {
        guard let reply = try await replies.next() else {
            throw SMTPClient.Failure(message: "the relay closed the connection")
        }
        guard codes.contains(reply.code) else {
            throw SMTPClient.Failure(message: "the relay answered \(reply.code) \(reply.lines.joined(separator: " "))")
        }
        return reply
    }

    mutating func send(_ text: String) async throws {
        try await outbound.write(ByteBuffer(string: text))
    }

    @discardableResult
    mutating func command(_ line: String, expect codes: Set<Int>) async throws -> SMTPReply {
        try await send(line + "\r\n")
        return try await expect(codes)
    }

    /// EHLO; the upper-cased capability keywords with their arguments, e.g. `AUTH PLAIN LOGIN`.
    mutating func hello(_ name: String) async throws -> [String] {
        let reply = try await command("EHLO \(name)", expect: [250])
        return reply.lines.dropFirst().map { $0.uppercased() }
    }

    /// AUTH PLAIN when offered, else AUTH LOGIN.
    mutating func authenticate(_ username: String, _ password: String, capabilities: [String]) async throws {
        let mechanisms = capabilities.first { $0.hasPrefix("AUTH ") }?.split(separator: " ").dropFirst() ?? []
        if mechanisms.contains("PLAIN") || !mechanisms.contains("LOGIN") {
            let token = Data("\u{0}\(username)\u{0}\(password)".utf8).base64EncodedString()
            try await command("AUTH PLAIN \(token)", expect: [235])
        } else {
            try await command("AUTH LOGIN", expect: [334])
            try await command(Data(username.utf8).base64EncodedString(), expect: [334])
            try await command(Data(password.utf8).base64EncodedString(), expect: [235])
        }
    }
}
