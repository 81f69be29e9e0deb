import Configuration
import Foundation
import InternalProtocol
import MessagingService
import NIOCore
import ServiceRuntime
import TestSupport
import Testing

/// Email through a real SMTP server (aiosmtpd), plain, with STARTTLS and AUTH, and refused.
@Suite(.timeLimit(.minutes(20))) struct MailTests {
    static let message = SendEmail.Request(
        to: ["ann@example.com"], cc: ["cy@example.com"], bcc: ["hidden@example.com"], subject: "Grüße from the app",
        text: "Hello Ann,\n.a line starting with a dot\nBye", html: "<p>Hello <b>Ann</b></p>")

    /// A caller with half a minute to spare.
    /// A bound on a hang, not on speed: a 62-recipient exchange with the Python sink took over
    /// 30 s while two other processes kept both cores busy.
    static var context: CallContext {
        CallContext(deadline: NIODeadline.now() + .seconds(120), logger: TestDatabase.logger)
    }

    func expectError(_ code: Int, containing text: String = "", _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected error \(code)")
        } catch let error as ErrorEnvelope {
            #expect(error.code == code && (text.isEmpty || error.message.contains(text)), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func deliversTextAndHTMLPartsToEveryRecipient() async throws {
        try await SMTPSink.with { sink async throws in
            let relay = MailRelay(host: "127.0.0.1", port: sink.port, startTLS: .off, from: "app@example.com")
            let status = try await Mailer(relay: relay).send(Self.message, within: Self.context)
            #expect(status.status == "PUBLISHED" && status.messageId.hasSuffix("@example.com"))
            let received = try #require(try sink.messages().first)
            #expect(received["mailFrom"] as? String == "app@example.com")
            #expect(received["recipients"] as? [String] == ["ann@example.com", "cy@example.com", "hidden@example.com"])
            let headers = try #require(received["headers"] as? [String: String])
            #expect(headers["subject"] == "Grüße from the app" && headers["to"] == "ann@example.com")
            #expect(headers["cc"] == "cy@example.com" && headers["bcc"] == nil)
            #expect(headers["message-id"] == "<\(status.messageId)>")
            #expect(
                (received["text"] as? String)?.replacingOccurrences(of: "\r\n", with: "\n") == Self.message.text! + "\n"
                    || (received["text"] as? String)?.replacingOccurrences(of: "\r\n", with: "\n") == Self.message.text!
            )
            #expect((received["html"] as? String)?.contains("<b>Ann</b>") == true)
            #expect(received["tls"] as? Bool == false)
        }
    }

    @Test func longHeadersAreFoldedAndDecodeToWhatWasSent() async throws {
        try await SMTPSink.with { sink async throws in
            let relay = MailRelay(host: "127.0.0.1", port: sink.port, startTLS: .off, from: "app@example.com")
            var message = Self.message
            message.to = (0..<60).map { "reader\($0)@example.com" }
            message.subject = String(repeating: "Grüße, liebe Leserinnen und Leser! ", count: 8)
            _ = try await Mailer(relay: relay, sessionLimit: .seconds(120)).send(message, within: Self.context)
            let received = try #require(try sink.messages().first)
            let headers = try #require(received["headers"] as? [String: String])
            #expect(headers["subject"] == message.subject)
            #expect(headers["to"]?.components(separatedBy: ", ").count == 60)
            #expect((received["recipients"] as? [String])?.count == 62)
        }
    }

    @Test func upgradesWithStartTLSAndAuthenticates() async throws {
        try await SMTPSink.with(tls: true, credentials: ("mailer", "s3cret")) { sink async throws in
            var relay = MailRelay(
                host: "127.0.0.1", port: sink.port, startTLS: .required, trustRoots: sink.caFile, username: "mailer",
                password: "s3cret", from: "app@example.com")
            _ = try await Mailer(relay: relay).send(Self.message, within: Self.context)
            let received = try #require(try sink.messages().first)
            #expect(received["tls"] as? Bool == true && received["authenticated"] as? Bool == true)

            relay.password = "wrong"
            await expectError(5102, containing: "535") {
                _ = try await Mailer(relay: relay).send(Self.message, within: Self.context)
            }
            relay.trustRoots = nil  // the test CA is not among the system's roots
            relay.password = "s3cret"
            await expectError(5102) { _ = try await Mailer(relay: relay).send(Self.message, within: Self.context) }
            #expect(try sink.messages().count == 1)
        }
    }

    @Test func neverSendsCredentialsOrMailInTheClearWhenTLSIsRequired() async throws {
        try await SMTPSink.with { sink async throws in
            let required = MailRelay(host: "127.0.0.1", port: sink.port, startTLS: .required)
            await expectError(5102, containing: "STARTTLS") {
                _ = try await Mailer(relay: required).send(Self.message, within: Self.context)
            }
            let plainAuth = MailRelay(
                host: "127.0.0.1", port: sink.port, startTLS: .opportunistic, username: "u", password: "p")
            await expectError(5102, containing: "without TLS") {
                _ = try await Mailer(relay: plainAuth).send(Self.message, within: Self.context)
            }
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func refusesMalformedMessagesBeforeConnecting() async throws {
        let relay = MailRelay(host: "127.0.0.1", port: 9, startTLS: .off)
        var message = Self.message
        let mailer = Mailer(relay: relay)
        message.subject = "Hi\r\nBcc: victim@example.com"
        await expectError(5101, containing: "subject") { _ = try await mailer.send(message, within: Self.context) }
        message = Self.message
        message.to = ["ann@example.com>\r\nRCPT TO:<x@example.com"]
        await expectError(5101, containing: "valid email") { _ = try await mailer.send(message, within: Self.context) }
        message = Self.message
        (message.to, message.cc, message.bcc) = ([], [], [])
        await expectError(5101, containing: "recipient") { _ = try await mailer.send(message, within: Self.context) }
        message = Self.message
        (message.text, message.html) = (nil, nil)
        await expectError(5101, containing: "body") { _ = try await mailer.send(message, within: Self.context) }
        await expectError(5102, containing: "cannot reach") {
            _ = try await mailer.send(Self.message, within: Self.context)
        }
        await expectError(5100) { _ = try await Mailer(relay: nil).send(Self.message, within: Self.context) }
    }

    @Test func theRelayIsReadFromTheEnvironment() throws {
        func read(_ environment: [String: String]) throws -> MailRelay? {
            try MailRelay.read(ConfigReader.fromEnvironment(environment).scoped(to: "baas"))
        }
        #expect(try read([:]) == nil)
        #expect(try read(["BAAS_SMTP_HOST": ""]) == nil)
        let relay = try #require(
            try read(["BAAS_SMTP_HOST": "mail.example", "BAAS_SMTP_USER": "", "BAAS_SMTP_PASSWORD": ""]))
        #expect(relay.port == 587 && relay.startTLS == .required && relay.username == nil && relay.password == nil)
        #expect(throws: (any Error).self) {
            _ = try read(["BAAS_SMTP_HOST": "mail.example", "BAAS_SMTP_STARTTLS": "maybe"])
        }
    }

    /// `POST /messaging/email` as Backendless allows it: a client key sends unless the app denies
    /// PUBLISH on the `email` container; the server-code key always sends.
    @Test func thePublicEndpointFollowsTheAppsEmailPermission() async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                let body =
                    #"{"subject": "Hi", "bodyparts": {"textmessage": "plain", "htmlmessage": "<i>rich</i>"}, "to": ["ann@example.com"]}"#
                func send(_ key: APIKeyKind, _ json: String = body, token: String? = nil) async throws -> HTTPResult {
                    try await cluster.send(.POST, "/messaging/email", json, token: token, key: key)
                }
                let fromClient = try await send(.js)
                #expect(
                    fromClient.status == 200 && fromClient.json["status"] as? String == "PUBLISHED",
                    "\(fromClient.text)")
                let received = try #require(try sink.messages().first)
                #expect(
                    received["text"] as? String == "plain"
                        && (received["html"] as? String)?.contains("<i>rich</i>") == true)

                let deny = try await cluster.send(
                    .PUT, "/messaging/channels/email/permissions/DENY", #"{"permission": "PUBLISH", "role": "*"}"#,
                    key: .serverCode)
                #expect(deny.status == 200, "\(deny.text)")
                let anonymous = try await send(.rest)
                #expect(anonymous.status == 403 && anonymous.json["code"] as? Int == 4000, "\(anonymous.text)")
                // Anyone can become a (guest) user, so a user token is not enough either.
                let guest = try await cluster.send(.POST, "/users/register/guest")
                let token = try #require(guest.json["user-token"] as? String)
                let asUser = try await send(.js, token: token)
                #expect(asUser.status == 403 && asUser.json["code"] as? Int == 4000, "\(asUser.text)")
                let sent = try await send(.serverCode)
                #expect(sent.status == 200 && sent.json["status"] as? String == "PUBLISHED", "\(sent.text)")
                #expect(try sink.messages().count == 2, "the refused sends sent nothing")
                let attachment = try await send(
                    .serverCode,
                    #"{"subject": "x", "bodyparts": {"textmessage": "y"}, "to": ["a@b.co"], "attachment": ["f.txt"]}"#)
                #expect(attachment.status == 404 && attachment.json["code"] as? Int == 6000, "\(attachment.text)")
                let malformed = try await send(.serverCode, #"{"to": "a@b.co"}"#)
                #expect(malformed.status == 400 && malformed.json["code"] as? Int == 5101)
            }
        }
    }
}
